"""Seeded token-level mutations of the lit inputs, timed through `physlayout-opt`.

`mutations(seed, count)` cuts every lit input under test/ into its `// -----` chunks and
derives `count` mutated chunks from them, each by one token edit: delete a token, duplicate
it, swap it with the next one, or replace it with `"`, `<`, `>`, `->`, `|` or `)`. Each case
keeps the pass pipeline of its file's first RUN line (`-p ...`).

Run as a script (`python mutation_timing.py CASES.json`), it times each case in this one
process (`physlayout.cli.opt_main`) and prints `start I` before case I and a JSON line after
it (`{"case": I, "seconds": S, "status": RC, "error": FIRST_LINE_OF_STDERR}`), so that a
parent process can stop it when one case hangs (a regular expression that backtracks holds
the interpreter: no in-process timeout could interrupt it). A case slower than
`RETIME_ABOVE` seconds is run a second time and the faster run counts (the machine is shared).
"""

from __future__ import annotations

import contextlib
import io
import json
import queue
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

TEST_ROOT = Path(__file__).resolve().parent.parent
REPLACEMENTS = ('"', "<", ">", "->", "|", ")")
EDITS = ("delete", "duplicate", "swap", "replace")
RETIME_ABOVE = 0.5
LARGEST_CHUNK = 4000
"""Chunks longer than this (characters) are not mutated (they only make the run slower)."""

_PIPELINE = re.compile(r"RUN:.*?\s-p(?:\s+|=)('[^']*'|\"[^\"]*\"|\S+)")


@dataclass(frozen=True)
class Case:
    """One input for `physlayout-opt`: its text, its pipeline and where it comes from."""

    label: str
    text: str
    pipeline: str | None

    def args(self, path: str) -> list[str]:
        """The command-line arguments of `physlayout-opt` for this case in file `path`."""
        return [path] if self.pipeline is None else [path, "-p", self.pipeline]


def lit_chunks() -> list[Case]:
    """The `// -----` chunks of every lit input, with their file's pipeline."""
    cases: list[Case] = []
    for path in sorted(TEST_ROOT.rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        text = path.read_text()
        found = _PIPELINE.search(text)
        pipeline = found.group(1).strip("'\"") if found else None
        for number, chunk in enumerate(re.split(r"^// -----.*$", text, flags=re.M)):
            if chunk.strip() and len(chunk) <= LARGEST_CHUNK:
                label = f"{path.relative_to(TEST_ROOT)}#{number}"
                cases.append(Case(label, chunk, pipeline))
    return cases


def token_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each token of `text` (up to the first one that does not lex)."""
    lexer = MLIRLexer(Input(text, "chunk"))
    spans: list[tuple[int, int]] = []
    try:
        while (token := lexer.lex()).kind != MLIRTokenKind.EOF:
            spans.append((token.span.start, token.span.end))
    except ParseError:
        pass
    return spans


def mutate(text: str, rng: random.Random) -> tuple[str, str] | None:
    """One random token edit of `text`: (what was done, the new text); None without tokens."""
    spans = token_spans(text)
    if len(spans) < 2:
        return None
    index = rng.randrange(len(spans) - 1)
    start, end = spans[index]
    token = text[start:end]
    edit = rng.choice(EDITS)
    if edit == "delete":
        return f"delete {token!r} at {start}", text[:start] + text[end:]
    if edit == "duplicate":
        return f"duplicate {token!r} at {start}", text[:end] + " " + token + text[end:]
    if edit == "swap":
        next_start, next_end = spans[index + 1]
        following = text[next_start:next_end]
        swapped = following + text[end:next_start] + token
        return f"swap {token!r} and {following!r} at {start}", (
            text[:start] + swapped + text[next_end:]
        )
    replacement = rng.choice(REPLACEMENTS)
    return f"replace {token!r} at {start} by {replacement!r}", (
        text[:start] + replacement + text[end:]
    )


def mutations(seed: int, count: int) -> list[tuple[Case, Case]]:
    """`count` (unmutated chunk, mutated chunk) pairs drawn with `random.Random(seed)`."""
    rng = random.Random(seed)
    chunks = lit_chunks()
    pairs: list[tuple[Case, Case]] = []
    while len(pairs) < count:
        chunk = rng.choice(chunks)
        mutated = mutate(chunk.text, rng)
        if mutated is not None:
            edit, text = mutated
            pairs.append((chunk, Case(f"{chunk.label}: {edit}", text, chunk.pipeline)))
    return pairs


@dataclass(frozen=True)
class Timing:
    """How `physlayout-opt` did on one case."""

    seconds: float
    status: int
    error: str
    """The first line of what it printed on stderr."""


def time_case(case: Case, directory: str) -> Timing:
    """Seconds, exit status and first diagnostic line of `physlayout-opt` on `case`, in
    this process (its output is discarded)."""
    from physlayout.cli import opt_main

    path = Path(directory) / "case.mlir"
    path.write_text(case.text)
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    status = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            opt_main(case.args(str(path)))
        except SystemExit as exited:
            status = exited.code if isinstance(exited.code, int) else 1
    seconds = time.perf_counter() - start
    return Timing(seconds, status, err.getvalue().partition("\n")[0])


class Hang(Exception):
    """A case that did not finish within the time allowed."""


def run_timed(cases: list[Case], directory: Path, hang_seconds: float) -> list[Timing]:
    """Time every case in one child process (this file as a script). Raises `Hang` naming
    the case when one takes longer than `hang_seconds` (the child is killed)."""
    cases_file = directory / "cases.json"
    cases_file.write_text(json.dumps([asdict(case) for case in cases]))
    child = subprocess.Popen(
        [sys.executable, __file__, str(cases_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in child.stdout or ():
            lines.put(line)
        lines.put("")  # the child has exited

    reader = threading.Thread(target=read)
    reader.start()
    timings: list[Timing] = []
    current = "start-up"
    try:
        while len(timings) < len(cases):
            try:
                line = lines.get(timeout=hang_seconds)
            except queue.Empty:
                raise Hang(f"{current}: no result in {hang_seconds} s") from None
            if not line:
                raise Hang(f"{current}: the timing process exited ({child.wait()})")
            if line.startswith("start "):
                current = cases[int(line.split()[1])].label
                continue
            fields = json.loads(line)
            timings.append(Timing(fields["seconds"], fields["status"], fields["error"]))
    finally:
        child.kill()
        child.wait()
        reader.join()
    return timings


def main(cases_file: str) -> None:
    """Time each case of `cases_file`, reporting progress on stdout (see the docstring)."""
    cases = [Case(**fields) for fields in json.loads(Path(cases_file).read_text())]
    with tempfile.TemporaryDirectory() as directory:
        time_case(Case("warm-up", "func.func @f() {\n  func.return\n}\n", None), directory)
        for number, case in enumerate(cases):
            print(f"start {number}", flush=True)
            timing = time_case(case, directory)
            if timing.seconds > RETIME_ABOVE:
                again = time_case(case, directory)
                timing = min(timing, again, key=lambda t: t.seconds)
            print(json.dumps({"case": number, **asdict(timing)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
