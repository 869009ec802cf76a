"""`physlayout compile FILE.mlir -o OUT/` and `physlayout run OUT/` (docs/deploy.md).

`compile` lowers a buffer-level or graph-level module like `physlayout run` (the same
`--entry` and `--pipeline`) for a target device described by its image limits and its
fp16/fp64 support (given, or read from a local OpenCL device with `--device`), and writes
the artifact of `runtime/deploy.py`: kernels.cl, plan.json, host.c, README.txt, source.mlir.
No OpenCL device is needed unless `--device` names one.

`run OUT/` runs an artifact's plan with pyopencl without compiling anything: inputs and
outputs as `physlayout run FILE.mlir` takes and gives them (`--input`, `--output`, seeded
random inputs, `--check` against the numpy evaluator on OUT/source.mlir).

Errors are reported as `physlayout run` reports them: a diagnostic, never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from xdsl.utils.exceptions import DiagnosticException

from physlayout.cli.common import add_fp_contract, add_texture_storage, reported
from physlayout.cli.run import (
    GRAPH_PIPELINE,
    _compare,  # pyright: ignore[reportPrivateUsage]
    _compare_expected,  # pyright: ignore[reportPrivateUsage]
    _load_array,  # pyright: ignore[reportPrivateUsage]
    _named_values,  # pyright: ignore[reportPrivateUsage]
    _npz_arrays,  # pyright: ignore[reportPrivateUsage]
    _print_times,  # pyright: ignore[reportPrivateUsage]
    _scalar_input,  # pyright: ignore[reportPrivateUsage]
    add_graph_options,
    default_pipeline,
    print_timing,
)
from physlayout.located import entry_function, parse_located

DEFAULT_IMAGE_LIMIT = 16384
"""The default image limits of `compile` (the OpenCL target's: Adreno's 16384 x 16384)."""


def add_compile_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add the `compile` sub-command and its options to `sub`."""
    compile_ = sub.add_parser(
        "compile",
        help="compile FILE to a deployable artifact: kernels.cl, plan.json, host.c",
        description=(
            "Lower FILE as `physlayout run` does and write an artifact to OUT: kernels.cl "
            "(OpenCL C), plan.json (the launch plan: buffers, images, launches, inputs and "
            "outputs), host.c (a standalone C99 OpenCL host of the plan), README.txt (how "
            "to build it) and source.mlir. `physlayout run OUT` runs the artifact."
        ),
    )
    compile_.add_argument("file", help="an .mlir file (buffer-level kernels or graph-level)")
    compile_.add_argument("-o", "--output-dir", required=True, metavar="OUT",
                          help="the artifact's directory (created if missing)")  # fmt: skip
    compile_.add_argument(
        "--entry", help="function to compile (default: @main, else the one function no other calls)"
    )
    compile_.add_argument(
        "--pipeline", default=None,
        help="graph-level IR only: the pass pipeline to buffer-level kernels (default: "
        f"{default_pipeline()}, or {GRAPH_PIPELINE} with --no-prepare)",
    )  # fmt: skip
    add_graph_options(compile_)
    compile_.add_argument(
        "--physical-io", action="store_true",
        help="inputs and outputs in their PHYSICAL layout (transformed shape, padding "
        "included) instead of the entry's logical layout: no boundary relayout kernels",
    )  # fmt: skip
    compile_.add_argument(
        "--device", default=None, metavar="PLATFORM[:INDEX]",
        help="take the image limits and fp16/fp64 support from this local OpenCL device "
        "(and build the kernels there as a check); its tuned schedules (the tuning cache) "
        "are used",
    )  # fmt: skip
    add_texture_storage(compile_, "when --device is a CPU device")
    add_fp_contract(compile_)
    compile_.add_argument("--max-image-width", type=int, default=None,
                          help=f"target image width limit in texels (default {DEFAULT_IMAGE_LIMIT})")  # fmt: skip
    compile_.add_argument("--max-image-height", type=int, default=None,
                          help=f"target image height limit (default {DEFAULT_IMAGE_LIMIT})")  # fmt: skip
    compile_.add_argument("--fp16", action=argparse.BooleanOptionalAction, default=None,
                          help="the target has cl_khr_fp16 (default: no)")  # fmt: skip
    compile_.add_argument("--fp64", action=argparse.BooleanOptionalAction, default=None,
                          help="the target has cl_khr_fp64 (default: yes; the plan "
                          "requires it only where a kernel uses f64)")  # fmt: skip
    compile_.add_argument("--remarks", action="store_true",
                          help="print apply-layout's remarks (stderr)")  # fmt: skip


def compile_command(args: argparse.Namespace) -> int:
    """`physlayout compile`: the exit status (0 ok, 1 error)."""
    return reported(lambda: _compile(args))


def _compile(args: argparse.Namespace) -> int:
    from physlayout.runtime.artifact import write_artifact
    from physlayout.runtime.compile_cache import cached_compile
    from physlayout.runtime.device import DeviceLimits, OpenCLRuntime

    with open(args.file) as stream:
        text = stream.read()

    def parse(text: str) -> tuple[Any, str]:  # only when the compile cache has no artifact
        source = parse_located(text, args.file)
        return source, entry_function(source, args.entry).sym_name.data

    if args.tuning_cache is not None and args.device is None and not args.tune:
        raise DiagnosticException(
            "--tuning-cache: tuned schedules belong to a device; give --device (the device "
            "they were tuned on) or --tune (tune on the default device first)"
        )
    # --tune tunes on a device: --device's, else the default one (whose limits then apply)
    runtime = (
        OpenCLRuntime(
            args.device, program_cache=not args.no_cache, texture_storage=args.texture_storage,
            fp_contract=args.fp_contract,
        )
        if args.device is not None or args.tune else None
    )  # fmt: skip
    base = runtime.limits if runtime is not None else DeviceLimits(
        True, DEFAULT_IMAGE_LIMIT, DEFAULT_IMAGE_LIMIT, False, True
    )
    for name, value in (("--max-image-width", args.max_image_width),
                        ("--max-image-height", args.max_image_height)):  # fmt: skip
        if value is not None and value < 0:
            raise DiagnosticException(f"{name} must not be negative, got {value}")
    limits = dataclasses.replace(  # a --device's compute units and work-group limit stay
        base,
        max_image_width=base.max_image_width if args.max_image_width is None else args.max_image_width,
        max_image_height=base.max_image_height if args.max_image_height is None else args.max_image_height,
        fp16=base.fp16 if args.fp16 is None else args.fp16,
        fp64=base.fp64 if args.fp64 is None else args.fp64,
        texture_storage=(
            base.texture_storage if runtime is not None or args.texture_storage == "auto"
            else args.texture_storage
        ),
        fp_contract=args.fp_contract,
    )
    pipeline = args.pipeline or default_pipeline(not args.no_prepare)
    schedules = ""
    if runtime is not None:  # the tuning cache's schedules for that device
        from physlayout.cli.tune import schedules_for

        schedules = schedules_for(args, runtime, lambda: parse(text), pipeline)
    artifact = cached_compile(
        text, args.entry, limits, pipeline=pipeline, physical_io=args.physical_io,
        remarks=args.remarks, use_cache=not args.no_cache, precision=args.precision,
        schedules=schedules, parse=parse,
    )  # fmt: skip
    if runtime is not None:
        runtime.build(artifact.kernels)
    write_artifact(artifact, args.output_dir)
    plan = artifact.plan
    launches = sum(1 for s in plan.steps if type(s).__name__ == "Launch")
    once = sum(1 for s in plan.prepare if type(s).__name__ == "Launch")
    print(
        f"compiled @{plan.entry} to {args.output_dir}: {len(plan.kernels)} kernel(s), "
        f"{launches} launch(es)" + (f" per run after {once} prepare launch(es)" if once else "")
        + f", {len(plan.storages)} buffer(s)/image(s), {plan.io_layout} inputs and outputs"
    )
    for param in plan.params:
        shape = "scalar" if param.kind == "scalar" else str(list(param.shape))
        print(f"  {param.direction:<5} %{param.name:<10} {param.dtype} {shape}")
    return 0


# `physlayout run OUT/` ------------------------------------------------------------------------


def run_artifact_command(args: argparse.Namespace) -> int:
    """`physlayout run OUT/` (called by `physlayout run` when FILE is a directory); errors
    propagate to `run`'s reporting."""
    import numpy as np

    from physlayout.api import CompiledModel
    from physlayout.runtime.artifact import load_artifact
    from physlayout.runtime.device import OpenCLRuntime
    from physlayout.runtime.plan import Write
    from physlayout.runtime.session import Session, listed_names

    if (args.pipeline is not None or args.remarks or args.precision != "f32" or args.no_prepare
            or args.no_cache or args.tune or args.tuning_cache is not None or args.fp_contract):
        flag = (
            "--pipeline" if args.pipeline is not None
            else "--fp-contract" if args.fp_contract
            else "--remarks" if args.remarks
            else "--no-prepare" if args.no_prepare
            else "--no-cache" if args.no_cache
            else "--tune" if args.tune
            else "--tuning-cache" if args.tuning_cache is not None
            else "--precision"
        )
        raise DiagnosticException(
            f"{flag}: {args.file} is a compiled artifact and runs as compiled (give the "
            "option to `physlayout compile`)"
        )
    artifact = load_artifact(args.file)
    plan = artifact.plan
    if args.print_opencl:
        print(artifact.kernels)
    names = [p.name for p in plan.params]
    given = _named_values(args.input, "--input", names)
    arrays = _npz_arrays(args.inputs, "--inputs", names)
    wanted = _named_values(args.output, "--output", names)
    layouts = _physical_layouts(artifact) if plan.io_layout == "physical" else {}
    missing = [
        p.name for p in plan.inputs
        if p.kind == "buffer" and p.name not in given and p.name not in arrays
    ]  # fmt: skip
    if missing and plan.level == "graph" and not (args.random_inputs or args.check):
        raise DiagnosticException(
            f"@{plan.entry}: no value for the arguments {listed_names(missing)}: give them with "
            "--input NAME=FILE.npy or --inputs FILE.npz (--random-inputs: seeded random values)"
        )
    rng = np.random.default_rng(args.seed)
    inputs: dict[str, Any] = {}
    logical: dict[str, Any] = {}
    for param in plan.params:
        dtype = np.dtype(param.dtype).type
        text = given.get(param.name)
        if param.kind == "scalar":
            inputs[param.name] = logical[param.name] = _scalar_input(
                param.name, text, dtype, param.element_type
            )
            continue
        if param.direction == "out":
            if text is not None:
                raise DiagnosticException(
                    f"--input {param.name}: %{param.name} is an output of the plan (its "
                    "initial contents are not read)"
                )
            if plan.level == "buffer":
                _random(rng, param.shape if param.name not in layouts else
                        layouts[param.name].logical_shape, dtype)  # fmt: skip
            continue
        layout = layouts.get(param.name)
        array = arrays.get(param.name)
        if text is not None:
            array = _load_array(param.name, text, dtype)
        if array is not None:
            text = text or f"the --inputs array {param.name}"
            if tuple(array.shape) != param.shape:
                raise DiagnosticException(
                    f"--input {param.name}: {text} has shape {list(array.shape)}, expected "
                    f"{list(param.shape)} ({param.layout} layout)"
                )
            array = np.array(array, dtype=dtype, order="C")
            inputs[param.name] = array
            logical[param.name] = array if layout is None else layout.unmap_ndarray(array)
            continue
        shape = param.shape if layout is None else layout.logical_shape
        array = _random(rng, shape, dtype)
        logical[param.name] = array
        inputs[param.name] = array if layout is None else layout.map_ndarray(array)
    runtime = OpenCLRuntime(args.device)
    lifted = {s.input for s in plan.prepare if isinstance(s, Write)}
    session = Session(artifact, runtime, {n: v for n, v in inputs.items() if n in lifted})
    if session.prepared is not None:  # the prepare steps (parameters in, @ENTRY_prepare)
        _print_times(runtime, f"{plan.entry}_prepare", session.prepared)
    call = {n: v for n, v in inputs.items() if n not in lifted and plan.param(n).direction != "out"}
    result = session.run(call)
    _print_times(runtime, plan.entry, result)
    print_timing(args, CompiledModel(artifact, session), call, result)
    values = {**inputs, **result.outputs}
    for name, path in wanted.items():
        np.save(path, values[name])
    outputs = {
        name: array if name not in layouts else layouts[name].unmap_ndarray(array)
        for name, array in result.outputs.items()
    }
    expected_ok = _compare_expected(args, {**logical, **outputs})
    if not args.check:
        return 0 if expected_ok else 1
    failed = _check(artifact, logical, outputs, args.rtol)
    return 1 if failed or not expected_ok else 0


def _random(rng: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    import numpy as np

    if np.issubdtype(dtype, np.floating):
        return rng.uniform(-1.0, 1.0, shape).astype(dtype)
    return rng.integers(-8, 8, shape).astype(dtype)


def _source_module(artifact: Any) -> Any:
    from physlayout.runtime.artifact import SOURCE_FILE

    if artifact.source is None:
        raise DiagnosticException(f"the artifact has no {SOURCE_FILE}: it is needed here")
    return parse_located(artifact.source, SOURCE_FILE)


def _physical_layouts(artifact: Any) -> dict[str, Any]:
    """A physical-io artifact: the pending layout of each entry parameter that has one (from
    source.mlir), to make random inputs and check results in the logical layout."""
    from physlayout.dialects.buffer_layout import PendingLayout
    from physlayout.dialects.layout import BufferType

    source = _source_module(artifact)
    entry = entry_function(source, artifact.plan.entry)
    layouts: dict[str, Any] = {}
    for arg, type_ in zip(entry.body.blocks[0].args, entry.function_type.inputs.data, strict=True):
        if isinstance(type_, BufferType):
            layout = PendingLayout.of(type_)
            if layout is not None:
                layouts[arg.name_hint or str(arg.index)] = layout
    return layouts


def _check(artifact: Any, logical: dict[str, Any], outputs: dict[str, Any], rtol: float) -> int:
    """Compare the artifact's results with the numpy evaluator on source.mlir."""
    import numpy as np

    plan = artifact.plan
    source = _source_module(artifact)
    entry = entry_function(source, plan.entry)
    failed = False
    if plan.level == "graph":
        from physlayout.semantics.graph_evaluator import run_graph

        count = len(entry.function_type.inputs.data)
        reference = run_graph(source, plan.entry, [logical[p.name] for p in plan.params[:count]])
        pairs = [(p.name, outputs[p.name], want)
                 for p, want in zip(plan.params[count:], reference, strict=True)]  # fmt: skip
        note = ", graph evaluator"
    else:
        from physlayout.semantics.evaluator import run_function

        values = [
            logical[p.name].copy() if isinstance(logical.get(p.name), np.ndarray)
            else logical.get(p.name, np.zeros(p.shape, p.dtype))
            for p in plan.params
        ]  # fmt: skip
        for k, p in enumerate(plan.params):
            if p.direction == "out":
                values[k] = np.zeros(outputs[p.name].shape, p.dtype)
        run_function(source, plan.entry, values)
        pairs = [
            (p.name, outputs.get(p.name, logical.get(p.name)), want)
            for p, want in zip(plan.params, values, strict=True)
            if p.kind == "buffer"
        ]
        note = ""
    for name, got, want in pairs:
        ok, line = _compare(got, want, rtol)
        failed |= not ok
        print(f"  %{name:<10} {line}")
    print("check: " + ("FAILED" if failed else "passed") + f" (rtol {rtol:g}{note})")
    return 1 if failed else 0
