"""The README's examples, and those of every reference page under docs/, are true: their
console blocks are run and their output compared, and their Python blocks are run as
doctests. A console block right after a line `<!-- requires: opencl -->` or
`<!-- requires: mlir -->` is skipped where no OpenCL device builds a kernel or `mlir-opt-22`
is missing. The README stands alone: it links to no file outside the repository and to no
web page; the pages link only inside the repository."""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""The README and every page under docs/: their examples are run the same way."""
BLOCK = re.compile(r"```(console|python)\n(.*?)```", re.DOTALL)
REQUIRES = re.compile(r"<!-- requires: ([a-z]+) -->\n```(?:console|python)\n(.*?)```", re.DOTALL)


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def console_examples(text: str = README) -> list[tuple[str, str, str]]:
    """(command, expected output, required tool or "") triples from the ```console blocks of
    `text` (`$ ` starts a command)."""
    required = {body: tool for tool, body in REQUIRES.findall(text)}
    examples: list[tuple[str, str, str]] = []
    for kind, body in BLOCK.findall(text):
        if kind != "console":
            continue
        for chunk in body.split("$ ")[1:]:
            command, _, output = chunk.partition("\n")
            examples.append((command, output, required.get(body, "")))
    return examples


def _all_console_examples() -> list[object]:
    return [
        pytest.param(command, expected, requires, id=f"{_name(page)}: {command[:40]}")
        for page in PAGES
        for command, expected, requires in console_examples(page.read_text())
    ]


@cache
def available(tool: str) -> bool:
    """Whether `tool` ("mlir" or "opencl") can run here."""
    if tool == "mlir":
        return shutil.which("mlir-opt-22") is not None
    assert tool == "opencl", f"unknown requirement {tool!r} in a page"
    probe = subprocess.run(
        [
            sys.executable, "-c",
            "from physlayout.runtime.opencl import OpenCLRuntime; "
            "OpenCLRuntime().build('__kernel void k(__global float *a) { a[0] = 1.0f; }')",
        ],
        capture_output=True, timeout=120,
    )
    return probe.returncode == 0


def _usable(tool: str) -> bool:
    """Whether an example that requires `tool` runs (CI runs all of them)."""
    return available(tool) or os.environ.get("PHYSLAYOUT_REQUIRE_TOOLS") == "1"


@pytest.mark.parametrize(("command", "expected", "requires"), _all_console_examples())
def test_console_example(command: str, expected: str, requires: str) -> None:
    if requires and not available(requires) and os.environ.get("PHYSLAYOUT_REQUIRE_TOOLS") != "1":
        pytest.skip(f"needs {requires}")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    result = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    actual = result.stdout + result.stderr
    assert [line.rstrip() for line in actual.strip("\n").splitlines()] == [
        line.rstrip() for line in expected.strip("\n").splitlines()
    ]


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_python_examples(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples read files by their path in the repository
    text = page.read_text()
    required = {body: tool for tool, body in REQUIRES.findall(text)}
    blocks = [
        body for kind, body in BLOCK.findall(text)
        if kind == "python" and (body not in required or _usable(required[body]))
    ]  # fmt: skip
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for i, body in enumerate(blocks):
        test = parser.get_doctest(body, {}, f"{_name(page)} python block {i}", _name(page), 0)
        runner.run(test)
    assert runner.failures == 0


def test_pages_have_examples() -> None:
    """The pages have Python examples (the tutorial's); the reference pages have console
    examples between them (nothing moved out of the tests when sections moved to docs/)."""
    assert any(kind == "python" for page in PAGES for kind, _ in BLOCK.findall(page.read_text()))
    pages = [page for page in PAGES if page.parent.name == "docs"]
    assert len(pages) >= 10
    assert sum(len(console_examples(page.read_text())) for page in pages) >= 20


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_tutorial_marks_its_tool_blocks(page: Path) -> None:
    """Each `requires` marker is followed by a console or python block (else it would not
    apply)."""
    text = page.read_text()
    markers = len(re.findall(r"^<!-- requires:", text, re.MULTILINE))
    assert markers == len(REQUIRES.findall(text))


def test_readme_stands_alone() -> None:
    """No web links, no paths outside the repository; every relative link exists."""
    assert "http://" not in README and "https://" not in README
    assert "../" not in README
    assert "DESIGN.md" not in README
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        assert (ROOT / target).exists(), f"README links to missing {target}"


@pytest.mark.parametrize("page", PAGES[1:], ids=_name)
def test_pages_link_inside_the_repository(page: Path) -> None:
    """A page links to no web page and to no file outside the repository; every relative
    link exists; every `#anchor` into a page names one of its headings."""
    text = page.read_text()
    assert "http://" not in text and "https://" not in text
    assert "DESIGN.md" not in text
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(#[^)\s]*)?\)", text):
        linked = (page.parent / target).resolve() if target else page
        assert linked.is_relative_to(ROOT), f"{_name(page)} links outside the repository: {target}"
        assert linked.exists(), f"{_name(page)} links to missing {target}"
        if anchor and linked.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", linked.read_text(), re.MULTILINE)
            slugs = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
            assert anchor[1:] in slugs, f"{_name(page)}: no heading {anchor} in {target}"


def test_pass_options_are_documented() -> None:
    """The pass options table of docs/passes.md is the one `physlayout.pass_help` generates
    from the passes' fields and `Options:` docstring blocks (test_pass_help.py checks those
    are complete and match the real types and defaults); `python -m physlayout.pass_help
    docs/passes.md` (`make docs`) rewrites it."""
    from physlayout.pass_help import all_pass_help, documentation_problems, with_options_table

    passes = (ROOT / "docs" / "passes.md").read_text()
    assert with_options_table(passes) == passes
    assert [p for h in all_pass_help() for p in documentation_problems(h)] == []
    assert sum(len(h.options) for h in all_pass_help()) >= 18


def test_bench_results_are_generated(tmp_path: Path) -> None:
    """bench/RESULTS.md is made of sections that bench scripts write (`make bench`), each
    heading naming its script; `write_section` replaces one section and keeps the others."""
    results_text = (ROOT / "bench" / "RESULTS.md").read_text()
    headings = re.findall(r"^## .*\((\w+\.py)\)$", results_text, re.MULTILINE)
    assert len(headings) == results_text.count("\n## ") > 0
    for script in headings:
        text = (ROOT / "bench" / script).read_text()
        # directly, or through `device_main` or `models_main` (which call it)
        writes = any(name in text for name in ("write_section", "device_main", "models_main"))
        assert writes, f"{script} does not write its section"
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from results import HEADER, write_section  # pyright: ignore[reportMissingImports]
    finally:
        sys.path.remove(str(ROOT / "bench"))
    path = tmp_path / "RESULTS.md"
    write_section("## A (a.py)", ["one"], path)
    write_section("## B (b.py)", ["two"], path)
    write_section("## A (a.py)", ["three", "four"], path)
    assert path.read_text() == HEADER + "\n## A (a.py)\n\nthree\nfour\n\n## B (b.py)\n\ntwo\n"
