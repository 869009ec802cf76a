"""`physlayout run`: lower a buffer-level or graph-level module to OpenCL, run it on the first
OpenCL device, move `.npy` inputs and outputs in the logical layout of the entry function's
signature, and with `--check` compare against the numpy reference semantics.

Errors are reported as `physlayout-opt` reports them (`physlayout.cli`): located diagnostics,
never a traceback; the exit status is 1 on an error or a failed check.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ModuleOp,
    TensorType,
)
from xdsl.utils.exceptions import (
    DiagnosticException,
)

from physlayout.api import GRAPH_PIPELINE, default_pipeline
from physlayout.cli.common import add_fp_contract, add_texture_storage, reported
from physlayout.located import entry_function, parse_located
from physlayout.universe import make_context


def add_run_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add the `run` sub-command and its options to `sub`."""
    run = sub.add_parser(
        "run",
        help="lower FILE to OpenCL, run it and (with --check) compare with the numpy evaluator",
        description=(
            "Lower FILE (the physlayout-opencl pipeline, then -t opencl), run one function "
            "on an OpenCL device with LOGICAL numpy inputs and print each launch's device time. Buffers not given with --input get seeded "
            "random values (uniform in [-1, 1) for floats), scalars get 1. Graph-level IR "
            "(functions over tensors) first goes through --pipeline; its results are named "
            "result0, result1, ... and --check compares them with the graph evaluator."
        ),
    )
    run.add_argument(
        "file",
        help="an .mlir file with buffer-level kernels or graph-level functions (tensors), or "
        "an artifact directory written by `physlayout compile` (run as compiled)",
    )
    run.add_argument(
        "--entry", help="function to run (default: @main, else the one function no other calls)"
    )
    run.add_argument(
        "--input", action="append", default=[], metavar="NAME=FILE.npy|NUMBER",
        help="value of the parameter %%NAME (logical layout)",
    )
    run.add_argument(
        "--inputs", metavar="FILE.npz",
        help="values of parameters by name from one .npz (e.g. a model's input and weights); "
        "--input overrides it",
    )
    run.add_argument(
        "--expected", metavar="FILE.npz",
        help="compare the results (result0, ...) and parameters named in FILE.npz with its "
        "arrays (max|got - expected| / max|expected| <= --rtol); exit 1 on a mismatch",
    )
    run.add_argument(
        "--output", action="append", default=[], metavar="NAME=FILE.npy",
        help="save parameter %%NAME after the run (logical layout)",
    )
    run.add_argument(
        "--check", action="store_true",
        help="also run the source IR with the numpy evaluator and compare every buffer",
    )
    run.add_argument(
        "--rtol", type=float, default=1e-5,
        help="allowed max|opencl - numpy| / max|numpy| per buffer (0: exact; default 1e-5)",
    )
    run.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    run.add_argument(
        "--random-inputs", action="store_true",
        help="graph-level IR: give the arguments not given by --input/--inputs seeded random "
        "values (without it, and without --check, a missing argument is an error)",
    )
    run.add_argument(
        "--device", default=None,
        help="PLATFORM[:INDEX] (default: $PHYSLAYOUT_OPENCL_DEVICE, else a GPU, else PoCL)",
    )
    add_texture_storage(run, "on a CPU device, whose driver emulates image reads in software")
    add_fp_contract(run)
    run.add_argument("--print-opencl", action="store_true", help="print the generated OpenCL C")
    run.add_argument(
        "--remarks", action="store_true",
        help="print apply-layout's remarks (stderr): which loop nests it re-iterates in "
        "physical order, and why it keeps the others in logical order",
    )
    add_graph_options(run)
    run.add_argument(
        "--repeat", type=int, default=0, metavar="N",
        help="after the reported run, time N more calls (parameters stay on the device, "
        "only inputs and results cross) and print the median wall and device ms per call",
    )
    run.add_argument(
        "--warmup", type=int, default=2, metavar="K",
        help="untimed calls before the --repeat ones (default 2)",
    )
    run.add_argument(
        "--profile", action="store_true",
        help="graph-level IR and artifacts: per kernel, its launches, device ms, GMAC/s and "
        "GB/s against the device's measured peaks, and the source lines it came from",
    )
    run.add_argument(
        "--trace", metavar="FILE.json",
        help="graph-level IR and artifacts: write a Chrome/Perfetto trace of the run's "
        "launches (chrome://tracing, ui.perfetto.dev)",
    )
    run.add_argument(
        "--pipeline", default=None,
        help="graph-level IR only (refused for buffer-level FILE): the xDSL pass pipeline "
        f"that turns it into buffer-level kernels (default: {default_pipeline()}, or "
        f"{GRAPH_PIPELINE} with --no-prepare); passes that take image limits get the "
        "device's where the pipeline does not give them",
    )


def add_graph_options(parser: argparse.ArgumentParser) -> None:
    """The options `run` and `compile` share for graph-level IR."""
    add_precision_options(parser)
    parser.add_argument(
        "--no-cache", action="store_true",
        help="compile again even when the compile cache holds an artifact of the same source "
        "and options, and build the OpenCL kernels from source ($PHYSLAYOUT_CACHE_DIR, else "
        "~/.cache/physlayout/artifacts)",
    )
    from physlayout.cli.tune import add_tuning_options

    add_tuning_options(parser)


def add_precision_options(parser: argparse.ArgumentParser) -> None:
    """The options that choose what the graph pipeline builds (`run`, `compile`, `tune`)."""
    parser.add_argument(
        "--precision", choices=["f32", "f16"], default="f32",
        help="graph-level IR only: f16 first applies to-mixed-precision (f16 storage, f32 "
        "arithmetic and accumulation, f32 inputs and results); `run --check` then compares "
        "with the graph evaluator of that module and reports the error against the f32 graph",
    )
    parser.add_argument(
        "--no-prepare", action="store_true",
        help="graph-level IR only: do not lift the work on parameters (layout transforms, "
        "batch-norm folding) into a prepare phase run once; every call does it again",
    )


def print_timing(
    args: argparse.Namespace, model: Any, inputs: dict[str, Any], result: Any
) -> None:
    """After the reported run `result` of `model`: its profile (`--profile`) and trace
    (`--trace`), then with `--repeat N` the medians of N more calls on `inputs`."""
    if args.repeat < 0 or args.warmup < 0:
        raise DiagnosticException("--repeat and --warmup must not be negative")
    if args.profile:
        from physlayout.runtime.profile import measure_peaks, profile_lines

        peaks = measure_peaks(model.session.runtime)
        print("\n".join(profile_lines(model.plan, model.artifact.stats, result, peaks)))
    if args.trace:
        import json

        from physlayout.runtime.profile import chrome_trace

        with open(args.trace, "w") as stream:
            json.dump(chrome_trace(result, f"@{model.plan.entry}"), stream)
        print(f"wrote {args.trace}: a trace of {len(result.times)} launch(es)")
    if args.repeat:
        print(model.time(inputs, repeat=args.repeat, warmup=args.warmup).line())


def run_command(args: argparse.Namespace) -> int:
    """`physlayout run`: the exit status (0 ok, 1 error or failed check)."""
    return reported(lambda: _run_checked(args))


def _run_checked(args: argparse.Namespace) -> int:
    import numpy as np

    from physlayout.runtime.device import OpenCLRuntime
    from physlayout.runtime.host import execute
    from physlayout.runtime.opencl import compile_module
    from physlayout.transforms.legalize_layout import is_graph_function

    if os.path.isdir(args.file):  # an artifact: `cli/main.py` sends it to cli/deploy.py
        raise DiagnosticException(f"{args.file} is a directory, not an .mlir file")
    with open(args.file) as stream:
        text = stream.read()
    source = parse_located(text, args.file)
    if any(isinstance(op, func.FuncOp) and is_graph_function(op) for op in source.ops):
        return _run_graph(args, source, text)
    if args.precision != "f32":
        raise DiagnosticException(
            f"--precision {args.precision} applies to graph-level IR (functions over tensors); "
            "buffer-level kernels run in the element types they declare"
        )
    if args.no_prepare or args.repeat or args.profile or args.trace or args.tune:
        flag = (
            "--no-prepare" if args.no_prepare else "--repeat" if args.repeat
            else "--profile" if args.profile else "--trace" if args.trace else "--tune"
        )
        raise DiagnosticException(
            f"{flag} applies to graph-level IR (functions over tensors) and artifacts; run "
            f"the artifact of `physlayout compile {args.file}` to time buffer-level kernels"
        )
    if args.pipeline is not None:
        raise DiagnosticException(
            f"--pipeline applies to graph-level input (functions over tensors); {args.file} "
            "is buffer-level, which always runs the physlayout-opencl pipeline (apply other "
            "passes first with physlayout-opt)"
        )
    runtime = OpenCLRuntime(
        args.device, texture_storage=args.texture_storage, fp_contract=args.fp_contract
    )
    compiled = compile_module(source, runtime, remarks=args.remarks)
    if args.print_opencl:
        print(compiled.program.source)
    entry = entry_function(source, args.entry)
    params = list(entry.body.blocks[0].args)
    names = [p.name_hint or str(p.index) for p in params]
    given = _named_values(args.input, "--input", names)
    inputs = _inputs(entry, names, given, args.seed, _npz_arrays(args.inputs, "--inputs", names))
    reference = [v.copy() if isinstance(v, np.ndarray) else v for v in inputs]
    result = execute(compiled, entry.sym_name.data, inputs)
    _print_times(runtime, entry.sym_name.data, result)
    for name, path in _named_values(args.output, "--output", names).items():
        np.save(path, inputs[names.index(name)])
    expected_ok = _compare_expected(args, dict(zip(names, inputs, strict=True)))
    if not args.check:
        return 0 if expected_ok else 1
    from physlayout.semantics.evaluator import run_function

    run_function(source, entry.sym_name.data, reference)
    failed = False
    for name, got, want in zip(names, inputs, reference, strict=True):
        if not isinstance(got, np.ndarray):
            continue
        ok, line = _compare(got, want, args.rtol)
        failed |= not ok
        print(f"  %{name:<10} {line}")
    print("check: " + ("FAILED" if failed else "passed") + f" (rtol {args.rtol:g})")
    return 1 if failed or not expected_ok else 0


def _print_times(runtime: Any, entry: str, result: Any) -> None:
    print(f"device: {runtime.describe()}")
    print(f"@{entry}: {len(result.times)} launch(es), "
          f"{result.total_seconds * 1e3:.3f} ms device time")
    for time in result.times:
        size = list(time.global_size)
        print(f"  {time.kernel:<24} {time.seconds * 1e3:9.3f} ms  global size {size}")


def _run_graph(args: argparse.Namespace, source: ModuleOp, text: str) -> int:
    """`physlayout run` on graph-level IR: compiled as `physlayout compile` compiles it
    (`--pipeline`, default `physlayout-adreno{lift-params=true}`; `--no-prepare`), then run
    once through the Python API's session (the lifted parameters prepared once); inputs and
    results are LOGICAL arrays of the graph function's tensor types, results named
    `result0`, `result1`, ...; `--check` compares them with the graph evaluator."""
    import numpy as np

    from physlayout.api import CompiledModel
    from physlayout.runtime.compile_cache import cached_compile
    from physlayout.runtime.device import OpenCLRuntime
    from physlayout.runtime.plan import Write
    from physlayout.runtime.session import Session, listed_names
    from physlayout.semantics.graph_evaluator import run_graph

    entry = entry_function(source, args.entry)
    names = [p.name_hint or str(p.index) for p in entry.body.blocks[0].args]
    outputs = [f"result{j}" for j in range(len(entry.function_type.outputs.data))]
    given = _named_values(args.input, "--input", names)
    arrays = _npz_arrays(args.inputs, "--inputs", names)
    missing = [n for n in names if n not in given and n not in arrays]
    if missing and not (args.random_inputs or args.check):
        raise DiagnosticException(
            f"@{entry.sym_name.data}: no value for the arguments {listed_names(missing)}: give them "
            "with --input NAME=FILE.npy or --inputs FILE.npz (--random-inputs: seeded random "
            "values)"
        )
    if missing:
        print(f"note: seeded random values (--seed {args.seed}) for {listed_names(missing)}",
              file=sys.stderr)  # fmt: skip
    inputs = _inputs(entry, names, given, args.seed, arrays)
    runtime = OpenCLRuntime(
        args.device, program_cache=not args.no_cache, texture_storage=args.texture_storage,
        fp_contract=args.fp_contract,
    )  # fmt: skip
    pipeline = args.pipeline or default_pipeline(not args.no_prepare)
    from physlayout.cli.tune import schedules_for

    schedules = schedules_for(args, runtime, lambda: (source, entry.sym_name.data), pipeline)
    artifact = cached_compile(
        text, args.entry, runtime.limits, pipeline=pipeline, precision=args.precision,
        remarks=args.remarks, use_cache=not args.no_cache, schedules=schedules,
        parse=lambda _: (source, entry.sym_name.data),
    )  # fmt: skip
    if args.print_opencl:
        print(artifact.kernels)
    plan = artifact.plan
    values = dict(zip(names, inputs, strict=True))
    lifted = {s.input for s in plan.prepare if isinstance(s, Write)}
    session = Session(artifact, runtime, {n: v for n, v in values.items() if n in lifted})
    if session.prepared is not None:
        _print_times(runtime, f"{entry.sym_name.data}_prepare", session.prepared)
    call = {n: v for n, v in values.items() if n not in lifted}
    result = session.run(call)
    _print_times(runtime, entry.sym_name.data, result)
    print_timing(args, CompiledModel(artifact, session), call, result)
    shaped = [result.outputs[name] for name in outputs]
    values.update(zip(outputs, shaped, strict=True))
    for name, path in _named_values(args.output, "--output", list(values)).items():
        np.save(path, values[name])
    expected_ok = _compare_expected(args, values)
    if not args.check:
        return 0 if expected_ok else 1
    graph = source
    if args.precision == "f16":  # the module the kernels compute: f16 storage
        from physlayout.lowering.pipelines import lifts_params
        from physlayout.runtime.opencl import device_pipeline
        from physlayout.transforms.to_mixed_precision import ToMixedPrecisionPass

        graph = source.clone()
        pipeline = device_pipeline(plan.options["pipeline"], runtime.limits)
        ToMixedPrecisionPass(params_f16=lifts_params(pipeline)).apply(make_context(), graph)
    reference = run_graph(graph, entry.sym_name.data, inputs)
    failed = False
    for name, got, want in zip(outputs, shaped, reference, strict=True):
        ok, line = _compare(got, want, args.rtol)
        failed |= not ok
        print(f"  %{name:<10} {line}")
    print("check: " + ("FAILED" if failed else "passed") + f" (rtol {args.rtol:g}, graph evaluator)")
    if graph is not source:
        exact = run_graph(source, entry.sym_name.data, inputs)
        print("error of the f16 graph against the f32 graph (graph evaluator, same inputs):")
        for name, got, want in zip(outputs, shaped, exact, strict=True):
            print(f"  %{name:<10} {_error_line(got, want)}")
    return 1 if failed or not expected_ok else 0


def _error_line(got: Any, want: Any) -> str:
    """`max|f16 - f32|` and its ratio to `max|f32|`, for the report of `--precision f16`."""
    import numpy as np

    a = np.asarray(got, dtype=np.float64)
    b = np.asarray(want, dtype=np.float64)
    error = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    relative = error / scale if scale > 0 else error
    return f"max|f16 - f32| = {error:.3g} (relative to max|f32| {relative:.3g})"


def _tensor_dtype(type_: TensorType) -> Any:
    from physlayout.runtime.opencl import numpy_dtype

    return numpy_dtype(type_.get_element_type(), f"tensor {type_}")


def _named_values(pairs: Sequence[str], flag: str, names: Sequence[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.removeprefix("%")
        if not sep or not value:
            raise DiagnosticException(f"{flag} expects NAME=VALUE, got '{pair}'")
        if name not in names:
            raise DiagnosticException(f"{flag}: no parameter %{name} (have {list(names)})")
        values[name] = value
    return values


def _npz_arrays(path: str | None, flag: str, names: Sequence[str]) -> dict[str, Any]:
    """The arrays of the .npz file `path` by name (every name must be in `names`); {} for None."""
    import numpy as np

    if path is None:
        return {}
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (ValueError, OSError) as err:
        raise DiagnosticException(f"{flag}: cannot read {path} as a .npz archive: {err}") from None
    # PyTorch's state_dict names (`features.0.weight`) are the arguments torch-mlir's FX
    # importer names `features_0_weight`
    arrays = {
        key if key in names or key.replace(".", "_") not in names else key.replace(".", "_"): a
        for key, a in arrays.items()
    }
    unknown = sorted(set(arrays) - set(names))
    if unknown:
        import difflib

        from physlayout.runtime.session import listed_names

        close = difflib.get_close_matches(unknown[0].replace(".", "_"), names, n=1)
        hint = f"; did you mean {close[0]} for {unknown[0]}?" if close else ""
        raise DiagnosticException(
            f"{flag}: {path} holds {unknown[:8]}, which name no parameter or result{hint} "
            f"(have {listed_names(names)})"
        )
    return arrays


def _compare_expected(args: argparse.Namespace, values: dict[str, Any]) -> bool:
    """Compare the values named in `--expected FILE.npz` (results and parameters) with its
    arrays at `--rtol`, printing one line each; True when all match (or no file)."""
    expected = _npz_arrays(args.expected, "--expected", list(values))
    ok = True
    for name, want in expected.items():
        got = values[name]
        if tuple(want.shape) != tuple(got.shape):
            raise DiagnosticException(
                f"--expected: {name} has shape {list(want.shape)}, the run gave {list(got.shape)}"
            )
        match, line = _compare(got, want, args.rtol)
        ok &= match
        print(f"  %{name:<10} {line.replace('opencl - numpy', 'opencl - expected')}")
    if expected:
        print("expected: " + ("passed" if ok else "FAILED") + f" (rtol {args.rtol:g})")
    return ok


def _inputs(
    function: func.FuncOp,
    names: Sequence[str],
    given: dict[str, str],
    seed: int,
    arrays: dict[str, Any] | None = None,
) -> list[Any]:
    import numpy as np

    from physlayout.dialects.layout import BufferType
    from physlayout.runtime.opencl import numpy_dtype

    rng = np.random.default_rng(seed)
    values: list[Any] = []
    for name, arg_type in zip(names, function.function_type.inputs.data, strict=True):
        text = given.get(name)
        if not isinstance(arg_type, BufferType | TensorType):
            dtype = numpy_dtype(arg_type, f"parameter %{name}")
            values.append(_scalar_input(name, text, dtype, arg_type))
            continue
        element = (
            arg_type.element_type
            if isinstance(arg_type, BufferType)
            else arg_type.get_element_type()
        )
        dtype = numpy_dtype(element, f"parameter %{name}")
        shape = tuple(arg_type.get_shape())
        array = (arrays or {}).get(name)
        if text is not None:
            array = _load_array(name, text, dtype)
        if array is not None:
            text = text or f"the --inputs array {name}"
            if tuple(array.shape) != shape:
                raise DiagnosticException(
                    f"--input {name}: {text} has shape {list(array.shape)}, expected {list(shape)}"
                )
            # np.array, not np.ascontiguousarray: that one turns a 0-d array into shape [1].
            values.append(np.array(array, dtype=dtype, order="C"))
        elif np.issubdtype(dtype, np.floating):
            values.append(rng.uniform(-1.0, 1.0, shape).astype(dtype))
        else:
            values.append(rng.integers(-8, 8, shape).astype(dtype))
    return values


def _load_array(name: str, path: str, dtype: Any) -> Any:
    """The numeric array in the .npy file `path` (given as `--input name=path`), checked to
    convert to `dtype` (a diagnostic otherwise)."""
    import numpy as np

    try:
        array = np.load(path, allow_pickle=False)
    except ValueError as err:
        raise DiagnosticException(
            f"--input {name}: cannot read {path} as a .npy array: {err}"
        ) from None
    if not isinstance(array, np.ndarray):
        raise DiagnosticException(f"--input {name}: {path} is not a .npy file holding one array")
    wanted = np.dtype(dtype)
    if array.dtype.kind not in "biuf" or (wanted.kind in "biu" and array.dtype.kind == "f"):
        raise DiagnosticException(
            f"--input {name}: {path} holds {array.dtype} values, which do not convert to {wanted}"
        )
    return array


def _scalar_input(name: str, text: str | None, dtype: Any, arg_type: Any) -> Any:
    """The value of scalar parameter `name`: `text` (a number, or a .npy file holding one
    value), else 1."""
    import numpy as np

    if text is None:
        return dtype(1)
    if text.endswith(".npy"):
        array = _load_array(name, text, dtype)
        if array.size != 1:
            raise DiagnosticException(
                f"--input {name}: {text} has shape {list(array.shape)}, expected one value "
                f"for the {arg_type} parameter"
            )
        return dtype(array.reshape(()).item())
    integral = np.issubdtype(dtype, np.integer) or dtype is np.bool_
    try:
        return dtype(int(text) if integral else float(text))
    except OverflowError:
        raise DiagnosticException(
            f"--input {name}: {text} is out of the range of the {arg_type} parameter"
        ) from None
    except ValueError:
        kind = "an integer" if integral else "a number"
        raise DiagnosticException(
            f"--input {name}: expected {kind} (or a .npy file) for the {arg_type} parameter, "
            f"got '{text}'"
        ) from None


def _compare(got: Any, want: Any, rtol: float) -> tuple[bool, str]:
    import numpy as np

    a = np.asarray(got, dtype=np.float64)
    b = np.asarray(want, dtype=np.float64)
    error = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    relative = error / scale if scale > 0 else error
    ok = bool(np.array_equal(a, b, equal_nan=True)) if rtol == 0 else relative <= rtol
    shape = list(np.shape(got))
    return ok, (
        f"shape {shape}  max|opencl - numpy| = {error:.3g} (relative {relative:.3g})  "
        + ("OK" if ok else "MISMATCH")
    )
