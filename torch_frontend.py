"""The PyTorch frontend: a `torch.nn.Module` to a compiled model, and a `torch.compile` backend.

    import physlayout
    model = physlayout.from_torch(module, x)        # export, compile, bind the module's weights
    y = model(x.numpy())                            # numpy in, numpy out, as physlayout.compile
    fast = torch.compile(module, backend="physlayout")   # torch tensors in and out

Both need torch and torch-mlir (`pip install 'physlayout[torch]'`); this module imports
neither until it is called, and says what to install when they are missing.

The export is the one the shared models were made with (docs/from-pytorch.md): torch-mlir's FX
importer, `torch_mlir.fx.export_and_import(wrapper, *inputs, *weights,
output_type="linalg-on-tensors", func_name="main")`, where the wrapper's `forward(*inputs,
*weights)` calls `torch.func.functional_call(module, weights_by_name, inputs)`: every parameter
and buffer is a function argument, not a constant baked into the IR. The function's arguments
are the example inputs (`%x` for one; several are named after `forward`'s parameters), then
the `state_dict` entries in `state_dict` order under `argument_name(key)` (`features.0.weight`
-> `%features_0_weight`); `num_batches_tracked` (unused in eval mode) and second names of a
tied tensor are not arguments.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from physlayout.api import CompiledModel

INSTALL_HINT = "pip install 'physlayout[torch]' (installs torch and torch-mlir)"
"""What to install for this module, as its errors say it."""

_SSA_TOKEN = re.compile(r"%([A-Za-z_$.\-][\w$.\-]*|\d+)")
"""An SSA value name in MLIR text (`%x`, `%arg3`, `%cst_0`, `%12`)."""


@dataclass(frozen=True)
class TorchExport:
    """A module exported by `export`: the MLIR text and the values of its parameters."""

    mlir: str
    """The module's graph as linalg-on-tensors MLIR text (`func.func @main`)."""
    inputs: tuple[str, ...]
    """The argument names of the example inputs, in order (without `%`)."""
    params: dict[str, np.ndarray]
    """The module's weights by argument name, in argument order (copies, float32 for a float
    module)."""
    names: dict[str, str]
    """`state_dict` key -> argument name, for every key that is an argument."""


def argument_name(key: str) -> str:
    """The MLIR argument name of `state_dict` key (or input name) `key`: every `.` (and any
    other character outside `[A-Za-z0-9_]`) becomes `_`; a name that starts with a digit
    gets a leading `_` (`0.weight` -> `_0_weight`: MLIR names do not start with a digit);
    a name that ends in `_` and digits gets a trailing `_` (`w_1` -> `w_1_`: xDSL reads
    `%w_1` as `%w` with a uniquing suffix)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", key) or "_"
    if name[0].isdigit():
        name = "_" + name
    if re.search(r"_\d+$", name):
        name += "_"
    return name


def export(module: Any, *example_inputs: Any, func_name: str = "main") -> TorchExport:
    """Export `module` (a `torch.nn.Module`) called on `example_inputs` (tensors) through
    torch-mlir's FX importer with every weight a function argument (module docstring).

    The module is traced in eval mode under `torch.no_grad()` (the `training` flags of its
    submodules are put back afterwards). Raises `ImportError` naming what to install when torch or torch-mlir
    is missing, `ValueError` when two names map to the same argument name."""
    torch = _require_torch()
    keys, weights = _state(module)
    inputs = _input_names(module, len(example_inputs))
    params = [argument_name(k) for k in keys]
    _check_unique([*inputs, *params])
    wrapper = _functional_wrapper(torch, module, keys, len(example_inputs))
    modes = [(m, m.training) for m in module.modules()]
    module.eval()
    try:
        with torch.no_grad():
            text = _import_linalg(wrapper, [*example_inputs, *weights], func_name)
    finally:
        for m, training in modes:
            m.training = training
    return TorchExport(
        name_arguments(text, func_name, [*inputs, *params]),
        tuple(inputs),
        {p: np.array(_array(w), copy=True) for p, w in zip(params, weights, strict=True)},
        dict(zip(keys, params, strict=True)),
    )


def from_torch(module: Any, *example_inputs: Any, **compile_options: Any) -> CompiledModel:
    """Export `module` on `example_inputs` (`export`), compile it with `physlayout.compile`
    and bind the module's own weights (`params=`, by argument name: uploaded and prepared
    once); the compiled model's results match `module(*example_inputs)` in eval mode.

    `compile_options` go to `physlayout.compile` (`precision`, `device`, `pipeline`,
    `prepare`, `cache`, `entry`); `params` is not one of them (the module's weights are).
    Without a `pipeline`, a module of several inputs gets the default pipeline with its
    weights named as the parameters (`physlayout-adreno{lift-params=true params="..."}`),
    where the default takes every argument but the first. The model is called with numpy
    arrays (or CPU tensors) in `model.inputs` order or by input name, and returns numpy
    arrays. Raises `ImportError` naming what to install when torch or torch-mlir is
    missing."""
    if "params" in compile_options:
        raise TypeError("from_torch binds the module's own weights; it takes no params=")
    exported = export(module, *example_inputs)
    options = dict(compile_options)
    if options.get("pipeline") is None:
        options["pipeline"] = _pipeline(exported, options.get("prepare", True))
    from physlayout.api import compile

    return compile(exported.mlir, params=exported.params, **options)


def dynamo_backend(
    gm: Any, example_inputs: Sequence[Any], options: Mapping[str, Any] | None = None
) -> DynamoCompiled:
    """The `torch.compile` backend `"physlayout"` (entry point `torch_dynamo_backends`):
    compiles dynamo's FX graph `gm` for `example_inputs` through the same export and
    `physlayout.compile` as `from_torch` and returns a function from CPU tensors to CPU
    tensors (inference only: no autograd through it). `options` (`torch.compile(...,
    options={...})`) go to `physlayout.compile`.

    Which graph inputs are bound: dynamo passes the module's parameters and buffers as
    graph inputs; those (tensors dynamo marks static, and every `nn.Parameter`) are bound as
    `params` when the graph is compiled (uploaded and prepared once). A call checks that it
    gets the same tensors, unchanged (`_version`); when one differs (weights loaded or
    updated in place), the model is bound again to the new values before it runs (the
    kernels are not rebuilt). The other inputs are uploaded on every call. Graphs with
    symbolic shapes (`dynamic=True`) are refused: compile with `dynamic=False`."""
    torch = _require_torch()
    tensors = list(example_inputs)
    if not all(isinstance(t, torch.Tensor) for t in tensors):
        kinds = sorted({type(t).__name__ for t in tensors if not isinstance(t, torch.Tensor)})
        raise TypeError(
            f"physlayout backend: graph inputs must be tensors, got {', '.join(kinds)} "
            "(symbolic shapes: use torch.compile(..., dynamic=False))"
        )
    placeholders = [n.target for n in gm.graph.nodes if n.op == "placeholder"]
    names = [argument_name(str(p)) for p in placeholders]
    _check_unique(names)
    static = [i for i, t in enumerate(tensors) if _is_static(torch, t)]
    with torch.no_grad():
        text = name_arguments(_import_linalg(gm, tensors, "main"), "main", names)
    compile_options = dict(options or {})
    bound_names = [names[i] for i in static]
    if compile_options.get("pipeline") is None:
        prepare = compile_options.get("prepare", True)
        compile_options["pipeline"] = _pipeline_for(names, bound_names, prepare)
    from physlayout.api import compile

    params = {names[i]: _array(tensors[i]) for i in static}
    model = compile(text, params=params, **compile_options)
    return DynamoCompiled(model, names, static, tensors, _returns_sequence(gm))


class DynamoCompiled:
    """What `dynamo_backend` returns: `model` (the `CompiledModel`) called on dynamo's graph
    inputs, CPU tensors in and out. The inputs at positions `static` are bound (see
    `dynamo_backend`); the others are the inputs of each call."""

    def __init__(
        self,
        model: CompiledModel,
        names: Sequence[str],
        static: Sequence[int],
        example_inputs: Sequence[Any],
        as_tuple: bool,
    ) -> None:
        self.model = model
        self.names = list(names)
        """The MLIR argument names of the graph inputs, in order."""
        self.static = list(static)
        """The positions of the bound graph inputs."""
        self.as_tuple = as_tuple
        """Whether the graph returns a tuple (else its one result)."""
        self._bound = [(example_inputs[i], example_inputs[i]._version) for i in static]

    def __call__(self, *args: Any) -> Any:
        """The graph's results on `args` (its inputs, in graph order)."""
        import torch  # pyright: ignore[reportMissingImports]

        current = [(args[i], args[i]._version) for i in self.static]
        if any(a is not b or v != w for (a, v), (b, w) in zip(current, self._bound, strict=True)):
            self.model = _rebind(self.model, {self.names[i]: _array(args[i]) for i in self.static})
            self._bound = current
        if len(args) != len(self.names):
            raise TypeError(f"the graph takes {len(self.names)} inputs, got {len(args)}")
        inputs = {
            name: _array(arg)
            for i, (name, arg) in enumerate(zip(self.names, args, strict=True))
            if i not in self.static
        }
        result = self.model(**inputs)
        arrays = result if isinstance(result, tuple) else (result,)
        outputs = tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in arrays)
        return outputs if self.as_tuple else outputs[0]


def _array(tensor: Any) -> np.ndarray:
    """A tensor's values as a numpy array (on the CPU, detached from autograd)."""
    return tensor.detach().cpu().numpy()


# Export ------------------------------------------------------------------------------------


def _require_torch() -> Any:
    """The `torch` module, once torch and torch-mlir's FX importer import (else an
    `ImportError` that says what to install)."""
    try:
        import torch  # pyright: ignore[reportMissingImports]
        import torch_mlir.fx  # pyright: ignore[reportMissingImports]  # noqa: F401
    except ImportError as missing:
        package = (missing.name or "one of them").split(".")[0].replace("_", "-")
        raise ImportError(
            f"physlayout's PyTorch frontend needs torch and torch-mlir, and {package} is not "
            f"installed: {INSTALL_HINT}"
        ) from missing
    return torch


def _state(module: Any) -> tuple[list[str], list[Any]]:
    """The `state_dict` keys that are function arguments and their tensors: every entry but
    `num_batches_tracked` and the second name of a tensor already seen (tied weights)."""
    keys: list[str] = []
    tensors: list[Any] = []
    seen: set[int] = set()
    for key, tensor in module.state_dict(keep_vars=True).items():
        if key.rsplit(".", 1)[-1] == "num_batches_tracked" or id(tensor) in seen:
            continue
        seen.add(id(tensor))
        keys.append(key)
        tensors.append(tensor.detach())
    return keys, tensors


def _input_names(module: Any, count: int) -> list[str]:
    """Argument names of the example inputs: `x` for one (as in the shared models); for
    several, the names of `forward`'s positional parameters when there are enough of them,
    else `x0`, `x1`, ..."""
    if count == 1:
        return ["x"]
    try:
        parameters = list(inspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    positional = [p.name for p in parameters if p.kind in kinds]
    if len(positional) >= count:
        return [argument_name(n) for n in positional[:count]]
    return [f"x{i}" for i in range(count)]


def _check_unique(names: Sequence[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(
                f"two inputs or state_dict entries have the MLIR argument name %{name} "
                "(names map '.' and other characters to '_'); rename one"
            )
        seen.add(name)


def _functional_wrapper(torch: Any, module: Any, keys: Sequence[str], inputs: int) -> Any:
    """A module whose `forward(*inputs, *weights)` runs `module` on `inputs` with its
    `state_dict` entries `keys` replaced by `weights` (`torch.func.functional_call`)."""

    class Functional(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.module = module

        def forward(self, *args: Any) -> Any:
            weights = dict(zip(keys, args[inputs:], strict=True))
            return torch.func.functional_call(self.module, weights, tuple(args[:inputs]))

    return Functional()


def _import_linalg(callable_module: Any, args: Sequence[Any], func_name: str) -> str:
    """torch-mlir's FX importer on `callable_module(*args)`, lowered to linalg-on-tensors,
    as MLIR text (arguments `%arg0`, `%arg1`, ...)."""
    from torch_mlir import fx  # pyright: ignore[reportMissingImports]

    module = fx.export_and_import(
        callable_module, *args, output_type="linalg-on-tensors", func_name=func_name
    )
    return str(module)


def name_arguments(text: str, func_name: str, names: Sequence[str]) -> str:
    """`text` with the arguments `%arg0` ... of `@func_name` (the only function, printed by
    MLIR, whose entry-block arguments come first in its numbering) named `names`; a value
    of the body that already has one of those names gets a fresh one."""
    if f"func.func @{func_name}(" not in text:
        raise ValueError(f"torch-mlir printed no function @{func_name}")
    tokens = set(_SSA_TOKEN.findall(text))
    wanted = set(names)
    renamed = {f"arg{i}": name for i, name in enumerate(names)}
    for token in tokens & wanted:
        if token in renamed:
            continue
        fresh = token + "_"
        while fresh in tokens or fresh in wanted:
            fresh += "_"
        renamed[token] = fresh

    def rename(match: re.Match[str]) -> str:
        return "%" + renamed.get(match.group(1), match.group(1))

    return _SSA_TOKEN.sub(rename, text)


def _pipeline(exported: TorchExport, prepare: bool) -> str | None:
    """`from_torch`'s default pipeline: `physlayout.compile`'s (None) for one input, else
    the one that names the weights as the parameters."""
    return _pipeline_for([*exported.inputs, *exported.params], list(exported.params), prepare)


def _pipeline_for(arguments: Sequence[str], params: Sequence[str], prepare: bool) -> str | None:
    """The graph pipeline for a function of `arguments` of which `params` are bound: the
    default one (None) when they are all but the first, else the one that names them
    (without lifting when there are none)."""
    from physlayout.api import GRAPH_PIPELINE

    if list(params) == list(arguments[1:]) or not prepare:
        return None
    if not params:
        return GRAPH_PIPELINE
    return f'{GRAPH_PIPELINE}{{lift-params=true params="{",".join(params)}"}}'


# The torch.compile backend -----------------------------------------------------------------


def _is_static(torch: Any, tensor: Any) -> bool:
    """Whether dynamo passes `tensor` as a parameter or buffer of the module (it marks them
    with a static input type) or it is an `nn.Parameter`."""
    return isinstance(tensor, torch.nn.Parameter) or hasattr(tensor, "_dynamo_static_input_type")


def _returns_sequence(gm: Any) -> bool:
    """Whether the graph returns a tuple or list of values (dynamo's graphs do)."""
    (output,) = [n for n in gm.graph.nodes if n.op == "output"]
    return isinstance(output.args[0], tuple | list)


def _rebind(model: CompiledModel, params: Mapping[str, np.ndarray]) -> CompiledModel:
    """`model`'s compiled artifact on its device with `params` bound instead."""
    from physlayout.api import CompiledModel
    from physlayout.runtime.session import Session

    return CompiledModel(model.artifact, Session(model.artifact, model.session.runtime, params))
