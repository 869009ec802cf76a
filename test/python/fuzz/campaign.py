"""`make fuzz`: a long differential campaign over random programs.

    PYTHONPATH=test/python python -m fuzz.campaign --count 10000 --seed 0 --jobs 2 \\
        --features all --out build/fuzz

Generates `--count` programs (program `i` from the choices of `RandomChooser(f"{seed}:{i}")`,
or with `--engine hypothesis` from Hypothesis seeded with `--seed`; one in four is
graph-level, one in `--model-every` (8) a torch-mlir-style model from `fuzz.models`, checked
through the whole `physlayout-adreno` pipeline on the OpenCL device with the `lift-params`
and `fuse` options its choices give), checks each (`fuzz.checker`, `fuzz.model_checker`; OpenCL
on every `--opencl-every`-th buffer program, mlir-runner on every `--mlir-every`-th), and
prints counts by outcome (per program and per pass), the generator's invalid rate and every
distinct failure class. For each class the first failing program is minimized (its
recorded choices shrunk with `shrink_choices`, checking only the failing pass and its
prefix) and written to `--out` as `<class>.mlir` (minimized) and `<class>.original.mlir`,
each with a header saying what failed and how to re-check it:

    PYTHONPATH=test/python python -m fuzz.campaign --check build/fuzz/<class>.mlir

`summary.txt` and `summary.json` hold the counts. The exit status is 1 when any program
was invalid, mismatched or crashed, else 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import re
import sys
import time
import warnings
import zlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from fuzz.checker import BUFFER_PIPELINES, GRAPH_PIPELINES, Backends, Checker, check_graph
from fuzz.choices import Chooser, DrawChooser, RandomChooser, ReplayChooser, shrink_choices
from fuzz.emitter import FunctionInfo
from fuzz.features import Features
from fuzz.graphs import Graph, generate_graph
from fuzz.model_checker import check_model
from fuzz.models import FAMILIES, MODEL_VARIANTS, ModelOptions, generate_model, model_options
from fuzz.programs import Program, generate_program
from fuzz.steps import OUTCOMES, Pipeline, Report, Step

SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
GRAPH_EVERY = 4
"""About one program in GRAPH_EVERY is graph-level."""
MODEL_EVERY = 8
"""About one program in MODEL_EVERY is a model (`--model-every`; 0: none)."""


MODEL_TARGETS = (*FAMILIES, *MODEL_VARIANTS)
"""What `--features` may name to target the model kind (`generate_model`'s `targets`)."""


def split_features(text: str) -> tuple[str, tuple[str, ...]]:
    """`--features` as the buffer and graph programs' switches (`Features.parse`) and the
    model families and variants it names. Naming only the latter targets models alone:
    the switches are then `none` (and every program is a model, `Options.models_only`)."""
    words = [w.strip() for w in text.split(",") if w.strip()]
    targets = tuple(w for w in words if w in MODEL_TARGETS)
    rest = [w for w in words if w not in MODEL_TARGETS]
    if targets and not rest:
        return "none", targets
    return ",".join(rest) or "all", targets


def program_kind(draw: int, model_every: int = MODEL_EVERY, models_only: bool = False) -> str:
    """The kind of program number `draw`: 'graph' for one in GRAPH_EVERY, 'model' for one
    in `model_every` of the others, else 'buffer' (always 'model' with `models_only`)."""
    if models_only:
        return "model"
    if draw % GRAPH_EVERY == GRAPH_EVERY - 1:
        return "graph"
    if model_every > 0 and draw % model_every == model_every - 2:
        return "model"
    return "buffer"


@dataclass
class Failure:
    """One failing step of one program (enough to regenerate and minimize it)."""

    kind: str
    """'buffer', 'graph' or 'model'."""
    key: str
    step: str
    outcome: str
    detail: str
    text: str
    choices: list[int]
    features_used: list[str]
    seed: int
    functions: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    options: dict[str, bool] = field(default_factory=dict[str, bool])
    """A model's `physlayout-adreno` options (`ModelOptions`)."""


@dataclass
class Tally:
    """Counts of one job (merged across jobs)."""

    programs: Counter[str] = field(default_factory=Counter[str])
    by_kind: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    by_family: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    """Models' outcomes by each family and variant they have."""
    steps: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    invalid: list[str] = field(default_factory=list[str])
    invalid_programs: list[str] = field(default_factory=list[str])
    failures: dict[str, list[Failure]] = field(default_factory=dict[str, list[Failure]])
    failure_counts: Counter[str] = field(default_factory=Counter[str])
    refusals: Counter[str] = field(default_factory=Counter[str])
    seconds: float = 0.0

    def record(
        self,
        kind: str,
        report: Report,
        program: Program | None,
        text: str,
        choices: list[int],
        used: Sequence[str],
        seed: int,
        options: dict[str, bool] | None = None,
    ) -> None:
        self.programs[report.outcome] += 1
        self.by_kind[kind][report.outcome] += 1
        if kind == "model":
            for family in used:
                self.by_family[family][report.outcome] += 1
        if report.invalid is not None:
            self.invalid.append(f"{kind}: {report.invalid}")
            if len(self.invalid_programs) < 5:
                self.invalid_programs.append(f"// generator bug: {report.invalid}\n{text}")
        for step in report.steps:
            self.steps[f"{kind}: {step.name}"][step.outcome] += 1
            if step.outcome == "refused" and step.name in REFUSALS:
                self.refusals[failure_key(kind, step.name, "refused", step.detail)] += 1
            if step.outcome not in ("mismatch", "crash"):
                continue
            key = failure_key(kind, step.name, step.outcome, step.detail)
            self.failure_counts[key] += 1
            if len(self.failures.setdefault(key, [])) < 1:
                functions = [asdict(f) for f in program.functions] if program else []
                for f in functions:
                    f["written_params"] = sorted(f["written_params"])
                self.failures[key].append(
                    Failure(
                        kind,
                        key,
                        step.name,
                        step.outcome,
                        step.detail,
                        text,
                        choices,
                        list(used),
                        seed,
                        functions,
                        dict(options or {}),
                    )
                )

    def merge(self, other: Tally) -> None:
        self.programs.update(other.programs)
        for k, v in other.by_kind.items():
            self.by_kind[k].update(v)
        for k, v in other.by_family.items():
            self.by_family[k].update(v)
        for k, v in other.steps.items():
            self.steps[k].update(v)
        self.invalid.extend(other.invalid)
        self.invalid_programs.extend(other.invalid_programs)
        for k, v in other.failures.items():
            self.failures.setdefault(k, []).extend(v)
        self.failure_counts.update(other.failure_counts)
        self.refusals.update(other.refusals)
        self.seconds = max(self.seconds, other.seconds)


def _abstract_types(text: str) -> str:
    """Buffer, memref and map syntax (balanced `<...>`, arrows skipped) as placeholders."""
    names = {"!layout.buffer<": "BUFFER", "#layout.index_map<": "MAP", "memref<": "MEMREF",
             "affine_map<": "MAP"}  # fmt: skip
    out: list[str] = []
    position = 0
    while position < len(text):
        prefix = next((p for p in names if text.startswith(p, position)), None)
        if prefix is None:
            out.append(text[position])
            position += 1
            continue
        depth, position = 1, position + len(prefix)
        while position < len(text) and depth:
            char = text[position]
            if char == "<":
                depth += 1
            elif char == ">" and text[position - 1] != "-":
                depth -= 1
            position += 1
        out.append(names[prefix])
    return "".join(out)


REFUSALS = ("apply-layout", "opencl-target", "graph-passes")
"""Steps whose refusals the summary counts by class."""


def failure_key(kind: str, step: str, outcome: str, detail: str) -> str:
    """A failure class: the step, the outcome and the detail with names and numbers
    abstracted (`@k1: argument 2: 3 element(s) differ` -> `argument N: element(s) differ`)."""
    text = re.sub(r"@\w+: ", "", detail)
    text = re.sub(r"%\w+", "%V", text)
    text = _abstract_types(text)
    text = re.sub(r"index map \(.*?\) -> .*? on shape", "index map MAP on shape", text)
    text = re.sub(r"-?\d+(\.\d+)?(e[+-]?\d+)?", "N", text)
    text = re.sub(r", e\.g\. at .*", "", text)
    text = re.sub(r"\[[N, ]*\]", "[..]", text)
    return f"{kind} | {step} | {outcome} | {text[:160]}"


def slug(key: str) -> str:
    """A file name for a failure class (readable prefix, hash of the whole key)."""
    digest = hashlib.sha1(key.encode()).hexdigest()[:8]
    return re.sub(r"[^A-Za-z0-9]+", "-", key).strip("-")[:80] + "-" + digest


# Running ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    count: int
    seed: int
    features: str
    opencl_every: int
    mlir_every: int
    engine: str = "random"
    job: int = 0
    jobs: int = 1
    model_every: int = MODEL_EVERY
    model_targets: tuple[str, ...] = ()
    """Model families and variants every model has (`generate_model`'s `targets`)."""
    models_only: bool = False


def check_one(
    index: int, chooser: Chooser, kind: str, options: Options, checker: Checker, tally: Tally
) -> None:
    features = Features.parse(options.features)
    if kind == "graph":
        generated = generate_graph(chooser, features)
        report = check_graph(generated.text, seed=options.seed)
        tally.record("graph", report, None, generated.text, list(chooser.choices), [], options.seed)
        return
    if kind == "model":
        model, check = generate_checked_model(chooser, options.model_targets)
        report = check_model(model.text, options.seed, check.lift_params, check.fuse)
        used = sorted(model.features_used)
        choices = list(chooser.choices)
        tally.record("model", report, None, model.text, choices, used, options.seed, asdict(check))
        return
    program = generate_program(chooser, features)
    # Sampled by a hash of the index, so every job gets its share of backend runs.
    draw = zlib.crc32(f"{options.seed}:{index}".encode())
    backends = Backends(
        opencl=options.opencl_every > 0 and draw % options.opencl_every == 0,
        mlir=options.mlir_every > 0 and (draw // 7) % options.mlir_every == 0,
    )
    report = checker.check(program, backends)
    tally.record(
        "buffer",
        report,
        program,
        program.text,
        list(chooser.choices),
        sorted(program.features_used),
        options.seed,
    )


def run_job(options: Options) -> Tally:
    """Check `options.count` programs: program `index` of the campaign comes from
    `RandomChooser(f"{seed}:{index}")` (engine `random`), or from Hypothesis seeded with
    `seed + job` (engine `hypothesis`, which re-generates many identical programs)."""
    warnings.simplefilter("ignore")
    checker = Checker(seed=options.seed)
    tally = Tally()
    start = time.time()
    if options.engine == "random":
        for k in range(options.count):
            index = options.job + k * options.jobs
            if k and k % 100 == 0:
                print(f"job {options.job}: {k} programs, {time.time() - start:.0f} s",
                      file=sys.stderr, flush=True)  # fmt: skip
            chooser = RandomChooser(f"{options.seed}:{index}")
            kind = program_kind(index, options.model_every, options.models_only)
            check_one(index, chooser, kind, options, checker, tally)
        tally.seconds = time.time() - start
        return tally
    counter = {"n": 0}

    @settings(
        max_examples=options.count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=SUPPRESSED,
    )
    @seed(options.seed + options.job)
    @given(st.data())
    def one(data: st.DataObject) -> None:
        index = counter["n"]
        counter["n"] += 1
        draws = GRAPH_EVERY * max(options.model_every, 1)
        draw = data.draw(st.integers(0, draws - 1))
        kind = program_kind(draw, options.model_every, options.models_only)
        check_one(index, DrawChooser(data.draw), kind, options, checker, tally)

    one()
    tally.seconds = time.time() - start
    return tally


def ancestors(pipelines: Sequence[Pipeline], name: str) -> list[Pipeline]:
    """The pipeline `name` and its prefixes, in order (all of them for a backend step)."""
    by_name = {p.name: p for p in pipelines}
    if name not in by_name:
        return list(pipelines)
    chain: list[Pipeline] = []
    current: str | None = name
    while current is not None:
        chain.append(by_name[current])
        current = by_name[current].parent
    return chain[::-1]


def generate_checked_model(
    chooser: Chooser, targets: Sequence[str] = ()
) -> tuple[Graph, ModelOptions]:
    """A model (with the families and variants `targets` names) and the pipeline options
    it is checked with (drawn first, so a shrunk model keeps them where it can)."""
    check = model_options(chooser)
    return generate_model(chooser, targets), check


def regenerate(failure: Failure, choices: Sequence[int], options: Options) -> Program | Graph:
    features = Features.parse(options.features)
    if failure.kind == "model":
        return generate_checked_model(ReplayChooser(choices), options.model_targets)[0]
    if failure.kind == "graph":
        return generate_graph(ReplayChooser(choices), features)
    return generate_program(ReplayChooser(choices), features)


def reproduce(failure: Failure, choices: Sequence[int], options: Options) -> Step | None:
    """Regenerate from `choices` and check only the failing step (and its prefixes): the
    step of the same failure class, or None."""
    if failure.kind == "model":
        model, check = generate_checked_model(ReplayChooser(choices), options.model_targets)
        opencl = failure.step != "graph-passes"
        report = check_model(model.text, failure.seed, check.lift_params, check.fuse, opencl)
        for step in report.failures():
            if failure_key(failure.kind, step.name, step.outcome, step.detail) == failure.key:
                return step
        return None
    generated = regenerate(failure, choices, options)
    if isinstance(generated, Graph):
        pipelines = ancestors(GRAPH_PIPELINES, failure.step)
        report = check_graph(generated.text, pipelines, failure.seed)
    else:
        checker = Checker(ancestors(BUFFER_PIPELINES, failure.step), seed=failure.seed)
        backends = Backends(opencl=failure.step == "opencl-run", mlir=failure.step == "mlir-runner")
        report = checker.check(generated, backends)
    for step in report.failures():
        if failure_key(failure.kind, step.name, step.outcome, step.detail) == failure.key:
            return step
    return None


def minimize(failure: Failure, options: Options, budget: int) -> Failure:
    """The failure with its program's choices shrunk (itself when nothing smaller
    reproduces the failure class)."""
    warnings.simplefilter("ignore")

    def spans_of(choices: list[int]) -> list[tuple[int, int]]:
        return regenerate(failure, choices, options).spans

    best = shrink_choices(
        failure.choices,
        lambda choices: reproduce(failure, choices, options) is not None,
        budget,
        spans_of,
    )
    step = reproduce(failure, best, options)
    if step is None or best == failure.choices:
        return failure
    generated = regenerate(failure, best, options)
    functions: list[dict[str, Any]] = []
    if isinstance(generated, Program):
        functions = [
            {**asdict(f), "written_params": sorted(f.written_params)} for f in generated.functions
        ]
    check = failure.options
    if failure.kind == "model":
        check = asdict(generate_checked_model(ReplayChooser(best), options.model_targets)[1])
    return replace(
        failure,
        detail=step.detail,
        text=generated.text,
        choices=best,
        features_used=sorted(generated.features_used),
        functions=functions,
        options=check,
    )


def header(failure: Failure, count: int, minimized: bool) -> str:
    functions = json.dumps(failure.functions)
    lines = [
        f"// fuzz {failure.kind} program ({'minimized' if minimized else 'as generated'}): "
        f"{failure.step} -> {failure.outcome.upper()} ({count} program(s) in this class)",
        f"// detail: {failure.detail}",
        f"// class: {failure.key}",
        f"// features used: {', '.join(failure.features_used) or 'none'}",
        "// re-check: PYTHONPATH=test/python python -m fuzz.campaign --check THIS_FILE",
        f"// fuzz-functions: {functions}",
    ]
    if failure.kind == "model":
        lines.append(f"// fuzz-model: {json.dumps(failure.options)}")
    return "\n".join(lines) + "\n"


def write_failures(tally: Tally, options: Options, out: Path, budget: int) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.mlir"):
        old.unlink()
    written: list[str] = []
    for key in sorted(tally.failures, key=lambda k: -tally.failure_counts[k]):
        failure = tally.failures[key][0]
        name = slug(key)
        count = tally.failure_counts[key]
        original = out / f"{name}.original.mlir"
        original.write_text(header(failure, count, False) + failure.text)
        shrunk = minimize(failure, options, budget) if budget > 0 else failure
        path = out / f"{name}.mlir"
        path.write_text(header(shrunk, count, shrunk is not failure) + shrunk.text)
        written.append(str(path))
    for k, text in enumerate(tally.invalid_programs):
        path = out / f"invalid-{k}.mlir"
        path.write_text(text)
        written.append(str(path))
    return written


# Reporting --------------------------------------------------------------------------------------


def summary(tally: Tally, total: int, written: Sequence[str], options: Options) -> str:
    lines = [
        f"fuzz campaign: {total} programs (seed {options.seed}, features {options.features}"
        + (f", models with {','.join(options.model_targets)}" if options.model_targets else "")
        + f"), {tally.seconds:.0f} s",
        "programs by outcome (worst step): "
        + ", ".join(
            f"{o} {tally.programs.get(o, 0)}"
            for o in ("equal", "refused", "mismatch", "crash", "invalid")
        ),
    ]
    for kind, counts in sorted(tally.by_kind.items()):
        lines.append(f"  {kind}: " + ", ".join(f"{o} {n}" for o, n in sorted(counts.items())))
    if tally.by_family:
        lines.append("models by family (a model counts under each family it has):")
    for family, counts in sorted(tally.by_family.items()):
        lines.append(f"    {family}: " + ", ".join(f"{o} {n}" for o, n in sorted(counts.items())))
    invalid_rate = len(tally.invalid) / total if total else 0.0
    lines.append(f"generator: {len(tally.invalid)} invalid program(s) ({100 * invalid_rate:.2f}%)")
    for reason, n in Counter(re.sub(r"\d+", "N", r)[:140] for r in tally.invalid).most_common(5):
        lines.append(f"  {n} x {reason}")
    lines.append("")
    lines.append(f"{'step':58} " + " ".join(f"{o:>9}" for o in OUTCOMES))
    for name in sorted(tally.steps):
        counts = tally.steps[name]
        lines.append(f"{name:58} " + " ".join(f"{counts.get(o, 0):>9}" for o in OUTCOMES))
    lines.append("")
    lines.append(
        "most frequent refusals of apply-layout, the OpenCL target and the models' graph passes:"
    )
    for key, n in tally.refusals.most_common(12):
        lines.append(f"  {n:>5} x {key}")
    lines.append("")
    lines.append(f"failure classes: {len(tally.failures)}")
    for key in sorted(tally.failures, key=lambda k: -tally.failure_counts[k]):
        lines.append(f"  {tally.failure_counts[key]:>5} x {key}")
    for path in written:
        lines.append(f"  wrote {path}")
    return "\n".join(lines)


def check_file(path: Path) -> int:
    """Re-check one program file (as written by a campaign); exit status 1 on a failure."""
    warnings.simplefilter("ignore")
    report = check_program_file(path)
    if report.invalid:
        print(f"invalid: {report.invalid}")
    for step in report.steps:
        print(f"{step.name:55} {step.outcome:9} {step.detail}")
    return 1 if report.invalid or report.failures() else 0


def check_program_file(path: Path) -> Report:
    """Check one program file (buffer- or graph-level, or a model: a `// fuzz-model:` line
    with its options, or a torch-mlir-style `func.func @main(%x: ...)`) with every backend."""
    text = path.read_text()
    model = re.search(r"^// fuzz-model: (.*)$", text, re.MULTILINE)
    if model is not None or "func.func @main(%x: tensor<" in text:
        check = ModelOptions(**json.loads(model.group(1))) if model else ModelOptions()
        return check_model(text, lift_params=check.lift_params, fuse=check.fuse)
    if "!layout.buffer" not in text and "tensor<" in text:
        report = check_graph(text)
    else:
        functions: list[FunctionInfo] = []
        match = re.search(r"^// fuzz-functions: (.*)$", text, re.MULTILINE)
        if match:
            for f in json.loads(match.group(1)):
                functions.append(FunctionInfo(**{**f, "written_params": set(f["written_params"])}))
        # A file that verify-buffers rejects is checked as an invalid program (every pass
        # must refuse it or keep it invalid), as the item-9 programs are.
        program = Program(text, functions, {"item9_dead_invalid_aliases"})
        report = Checker().check(program, Backends(opencl=True, mlir=True))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--features",
        default="all",
        help=f"all, none, or a comma-separated subset of {Features.names()} and of the "
        f"model families and variants {list(MODEL_TARGETS)} (which every model then has; "
        "naming only these checks models alone)",
    )
    parser.add_argument("--opencl-every", type=int, default=10)
    parser.add_argument("--mlir-every", type=int, default=20)
    parser.add_argument(
        "--model-every",
        type=int,
        default=MODEL_EVERY,
        help="one program in N is a torch-mlir-style model (0: none)",
    )
    parser.add_argument(
        "--shrink-budget",
        type=int,
        default=150,
        help="checks spent minimizing each failure class (0: no minimizing)",
    )
    parser.add_argument(
        "--engine",
        choices=["random", "hypothesis"],
        default="random",
        help="where choices come from: seeded random (default) or Hypothesis",
    )
    parser.add_argument("--out", default="build/fuzz")
    parser.add_argument("--check", metavar="FILE", help="re-check one program file")
    args = parser.parse_args(argv)
    if args.check:
        return check_file(Path(args.check))
    features, targets = split_features(args.features)
    Features.parse(features)
    models_only = bool(targets) and features == "none" and args.features.strip() != "none"
    jobs = max(1, args.jobs)
    shares = [args.count // jobs + (1 if k < args.count % jobs else 0) for k in range(jobs)]
    options = [
        Options(
            share,
            args.seed,
            features,
            args.opencl_every,
            args.mlir_every,
            args.engine,
            k,
            jobs,
            args.model_every,
            targets,
            models_only,
        )
        for k, share in enumerate(shares)
        if share
    ]
    tally = Tally()
    if len(options) == 1:
        tally.merge(run_job(options[0]))
    else:
        with multiprocessing.get_context("spawn").Pool(len(options)) as pool:
            for part in pool.imap_unordered(run_job, options):
                tally.merge(part)
    total = sum(tally.programs.values())
    written = write_failures(tally, options[0], Path(args.out), args.shrink_budget)
    text = summary(tally, total, written, options[0])
    print(text)
    out = Path(args.out)
    (out / "summary.txt").write_text(text + "\n")
    (out / "summary.json").write_text(
        json.dumps(
            {
                "programs": total,
                "outcomes": dict(tally.programs),
                "models_by_family": {k: dict(v) for k, v in tally.by_family.items()},
                "steps": {k: dict(v) for k, v in tally.steps.items()},
                "failure_classes": {k: tally.failure_counts[k] for k in tally.failures},
                "invalid": len(tally.invalid),
            },
            indent=1,
        )
    )
    bad = tally.programs.get("mismatch", 0) + tally.programs.get("crash", 0)
    return 1 if bad or tally.invalid else 0


if __name__ == "__main__":
    sys.exit(main())
