"""The PyTorch frontend's parts that need no torch (run by `make test`): without torch or
torch-mlir it says what to install (the modules are hidden from the import system where they
are installed); argument names from state_dict keys; naming torch-mlir's `%argN`."""

from __future__ import annotations

import re
import sys

import pytest

import physlayout
from physlayout.torch_frontend import (
    INSTALL_HINT,
    argument_name,
    dynamo_backend,
    export,
    name_arguments,
)


@pytest.mark.parametrize("missing", ["torch", "torch_mlir"])
def test_from_torch_says_what_to_install(missing: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, missing, None)
    for call in (lambda: physlayout.from_torch(object()), lambda: export(object())):
        with pytest.raises(ImportError) as raised:
            call()
        message = str(raised.value)
        assert "pip install 'physlayout[torch]'" in message and INSTALL_HINT in message
        # torch-mlir's name where torch is there (else torch is the first one missing)
        assert re.search(r"(torch|torch-mlir) is not installed", message)
    with pytest.raises(ImportError, match=r"physlayout\[torch\]"):
        dynamo_backend(object(), [])


def test_importing_the_frontend_imports_no_torch() -> None:
    """`physlayout.from_torch` resolves without importing torch (the package stays cheap)."""
    assert callable(physlayout.from_torch)
    assert physlayout.from_torch.__module__ == "physlayout.torch_frontend"


def test_argument_names() -> None:
    assert argument_name("features.0.1.running_var") == "features_0_1_running_var"
    assert argument_name("0.weight") == "_0_weight"  # MLIR names start with no digit
    assert argument_name("w_1") == "w_1_"  # xDSL would read %w_1 as %w
    assert argument_name("head.fc-1") == "head_fc_1_"
    assert argument_name("L_self_modules_fc1_parameters_weight_") == (
        "L_self_modules_fc1_parameters_weight_"
    )


PRINTED = """module {
  func.func @main(%arg0: tensor<2xf32>, %arg1: tensor<2xf32>) -> tensor<2xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %padded = tensor.pad %arg0 low[1] high[1] {
    ^bb0(%arg2: index):
      tensor.yield %cst : f32
    } : tensor<2xf32> to tensor<4xf32>
    %0 = arith.addf %arg1, %arg1 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
"""


def test_name_arguments() -> None:
    """The function's arguments get the names; nested block arguments (%arg2) and values
    of the body keep theirs, unless they had one of the new names."""
    named = name_arguments(PRINTED, "main", ["x", "bias"])
    assert "func.func @main(%x: tensor<2xf32>, %bias: tensor<2xf32>)" in named
    assert "tensor.pad %x low" in named and "^bb0(%arg2: index)" in named
    assert "arith.addf %bias, %bias" in named

    clashing = name_arguments(PRINTED, "main", ["padded", "arg2"])
    assert "func.func @main(%padded: tensor<2xf32>, %arg2: tensor<2xf32>)" in clashing
    assert "%padded_ = tensor.pad %padded low" in clashing
    assert "^bb0(%arg2_: index)" in clashing and "arith.addf %arg2, %arg2" in clashing

    with pytest.raises(ValueError, match="no function @forward"):
        name_arguments(PRINTED, "forward", ["x"])
