"""Without torch or torch-mlir, the PyTorch frontend says what to install (runs everywhere:
the modules are hidden from the import system where they are installed)."""

from __future__ import annotations

import re
import sys

import pytest

import physlayout
from physlayout.torch_frontend import INSTALL_HINT, dynamo_backend, export


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
