"""The README's examples are true: its console blocks are run and their output compared,
and its Python blocks are run as doctests."""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BLOCK = re.compile(r"```(console|python)\n(.*?)```", re.DOTALL)


def console_examples() -> list[tuple[str, str]]:
    """(command, expected output) pairs from ```console blocks (`$ ` starts a command)."""
    examples: list[tuple[str, str]] = []
    for kind, body in BLOCK.findall(README):
        if kind != "console":
            continue
        for chunk in body.split("$ ")[1:]:
            command, _, output = chunk.partition("\n")
            examples.append((command, output))
    return examples


@pytest.mark.parametrize(("command", "expected"), console_examples(), ids=lambda s: s[:40])
def test_console_example(command: str, expected: str) -> None:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    result = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    actual = result.stdout + result.stderr
    assert [line.rstrip() for line in actual.strip("\n").splitlines()] == [
        line.rstrip() for line in expected.strip("\n").splitlines()
    ]


def test_python_examples() -> None:
    blocks = [body for kind, body in BLOCK.findall(README) if kind == "python"]
    assert blocks
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for i, body in enumerate(blocks):
        test = parser.get_doctest(body, {}, f"README python block {i}", "README.md", 0)
        runner.run(test)
    assert runner.failures == 0
