"""The vision families of the model fuzzer (`fuzz.vision_models`, issue 41): each prints
what torch-mlir printed in the shipped exports (the same ops, operands, maps and bodies as
`examples/models`, SSA names aside), every generated model parses with `mlir-opt-22` and
runs in the graph evaluator, batch 3 and three results included, and a campaign's
`--features` targets them."""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
from fuzz import vision_models
from fuzz.campaign import program_kind, split_features
from fuzz.choices import RandomChooser, ReplayChooser
from fuzz.model_checker import _run_graph_entry
from fuzz.models import FAMILIES, MODEL_VARIANTS, Value, _Model, _Printer, generate_model
from fuzz.steps import parse
from fuzz.values import model_inputs
from xdsl.dialects import func

EXPORTS = Path(__file__).resolve().parents[2] / "examples" / "models"
TARGETS = [*vision_models.VISION_FAMILIES, "batch3", "three_results"]


def _ops(text: str) -> list[tuple[str, str]]:
    """The top-level ops of `text`'s function as (result, text with its region), constants,
    `tensor.empty`s and the return left out."""
    ops: list[tuple[str, str]] = []
    current: list[str] = []
    for line in text.splitlines():
        if not current and not line.startswith("    %"):
            continue
        current.append(line.strip())
        if current[0].endswith("{") and not line.startswith("    }"):
            continue
        first = current[0]
        if "arith.constant" not in first and "tensor.empty()" not in first:
            ops.append((first.split(" = ")[0], "\n".join(current)))
        current = []
    return ops


def _span(ops: list[tuple[str, str]], first: str, last: str) -> list[str]:
    names = [name for name, _ in ops]
    return [text for _, text in ops[names.index(first) : names.index(last) + 1]]


def _normalized(ops: list[str]) -> str:
    """SSA names and map aliases renamed in order of first appearance."""
    text = "\n".join(ops)
    names: dict[str, str] = {}
    aliases: dict[str, str] = {}

    def name(match: re.Match[str]) -> str:
        return names.setdefault(match.group(0), f"%v{len(names)}")

    def alias(match: re.Match[str]) -> str:
        return aliases.setdefault(match.group(0), f"#m{len(aliases)}")

    return re.sub(r"#map\d*", alias, re.sub(r"%[A-Za-z_0-9]+", name, text))


def _family_text(family: str, shape: tuple[int, ...], choices: list[int]) -> str:
    """`family` applied to an input of `shape` with the recorded `choices`."""
    printer = _Printer()
    x = printer.arg("x", shape)
    model = _Model(ReplayChooser(choices), printer, x, [x])
    model.prefix = "dec1"
    vision_models.LAYERS[family](model)
    return printer.text([model.value])


@pytest.mark.parametrize(
    ("family", "shape", "choices", "export", "span"),
    [
        # fpn_tiny: F.interpolate(p5, scale_factor=2, mode="nearest"), 1x32x2x2.
        ("upsample_nearest", (1, 32, 2, 2), [0, 0], "fpn_tiny", ("%63", "%63")),
        # adaptive_pools_net: AdaptiveAvgPool2d((3, 3)) on 1x8x7x7 (windows [0,3), [2,5), [4,7)).
        ("adaptive_avg_pool", (1, 8, 7, 7), [99, 99, 1], "adaptive_pools_net", ("%4", "%18")),
        # adaptive_pools_net: AdaptiveMaxPool2d((2, 2)) on 1x8x7x7: window 4, stride 3.
        ("adaptive_max_pool", (1, 8, 7, 7), [99, 1], "adaptive_pools_net", ("%20", "%22")),
        # espcn_pixelshuffle: PixelShuffle(3) of 1x9x24x24.
        ("pixel_shuffle", (1, 9, 24, 24), [1], "espcn_pixelshuffle",
         ("%expanded", "%collapsed")),
        # autoencoder_transpose: ConvTranspose2d(32, 16, 3, stride=2, padding=1,
        # output_padding=1) with bias, on 1x32x8x8.
        ("conv_transpose", (1, 32, 8, 8), [99, 0, 2, 1, 1, 1], "autoencoder_transpose",
         ("%7", "%11")),
        # autoencoder_transpose: Upsample(scale_factor=2, mode="bilinear", align_corners=True)
        # of 1x16x16x16.
        ("upsample_bilinear", (1, 16, 16, 16), [99, 0], "autoencoder_transpose", ("%14", "%48")),
    ],
)  # fmt: skip
def test_families_print_as_the_exports(
    monkeypatch: pytest.MonkeyPatch,
    family: str,
    shape: tuple[int, ...],
    choices: list[int],
    export: str,
    span: tuple[str, str],
) -> None:
    """The ops of a family equal the export's (names and aliases aside), on the export's
    shapes (the growth limit and the transposed conv's channels widened to reach them)."""
    monkeypatch.setattr(vision_models, "MAX_SPATIAL", 72)
    monkeypatch.setattr(vision_models, "TRANSPOSED_CHANNELS", (16,))
    want = _span(_ops((EXPORTS / f"{export}.mlir").read_text()), *span)
    got = [text for _, text in _ops(_family_text(family, shape, choices))]
    assert want and got
    assert _normalized(got) == _normalized(want), "\n".join(got)


def _generated(target: str, count: int) -> list[str]:
    return [
        generate_model(RandomChooser(f"vision:{target}:{seed}"), (target,)).text
        for seed in range(count)
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_targeted_models_have_the_family(target: str) -> None:
    """Nearly always (a pool needs more than one pixel, a pixel shuffle at most 8 per side,
    three results three values): the generator draws the family while it applies."""
    models = [
        generate_model(RandomChooser(f"vision:{target}:{seed}"), (target,)) for seed in range(12)
    ]
    assert sum(target in m.features_used for m in models) >= 9


@pytest.mark.parametrize("target", TARGETS)
def test_no_generated_tensor_is_empty(target: str) -> None:
    """No extent is 0 (a transposed conv's second axis once took the first's padding,
    which was too large for it: a `1x3x1x0` output, found by the campaign)."""
    for seed in range(60):
        text = generate_model(RandomChooser(f"empty:{target}:{seed}"), (target,)).text
        assert not re.search(r"tensor<(\d+x)*0x", text), text


@pytest.mark.skipif(shutil.which("mlir-opt-22") is None, reason="no mlir-opt-22")
@pytest.mark.parametrize("target", TARGETS)
def test_targeted_models_parse_with_upstream_mlir(target: str, tmp_path: Path) -> None:
    for k, text in enumerate(_generated(target, 3)):
        path = tmp_path / f"{k}.mlir"
        path.write_text(text)
        ran = subprocess.run(["mlir-opt-22", str(path)], capture_output=True, text=True)
        assert ran.returncode == 0, (ran.stderr, text)


@pytest.mark.parametrize("target", TARGETS)
def test_targeted_models_run_in_the_graph_evaluator(target: str) -> None:
    """Each parses, verifies and runs; the results are finite and of the returned types."""
    for text in _generated(target, 3):
        module = parse(text)
        module.verify()
        entry = next(op for op in module.ops if isinstance(op, func.FuncOp))
        names = [a.name_hint or "" for a in entry.body.blocks[0].args]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = _run_graph_entry(module, names, model_inputs(entry, 0))
        types = entry.function_type.outputs.data
        assert len(results) == len(types)
        for got, want in zip(results, types, strict=True):
            assert tuple(np.shape(got)) == tuple(want.get_shape())  # type: ignore[attr-defined]
            assert np.all(np.isfinite(got))


def test_nearest_upsampling_reads_the_floor_of_the_scaled_index() -> None:
    """Values: a nearest x3 upsampling of 1x1x2x3 repeats each element in a 3x3 block, a
    size 2 -> 5 reads floor(i / 2.5)."""
    for choices, rows, cols in (([0, 1], [0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1, 2, 2, 2]),
                                ([99, 3, 99, 4], [0, 0, 0, 1, 1], [0, 0, 1, 1, 2, 2])):  # fmt: skip
        printer = _Printer()
        x = printer.arg("x", (1, 1, 2, 3))
        model = _Model(ReplayChooser(choices), printer, x, [x])
        vision_models.upsample_nearest(model)
        module = parse(printer.text([model.value]))
        source = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
        (got,) = _run_graph_entry(module, ["x"], [source])
        assert np.array_equal(got[0, 0], source[0, 0][np.ix_(rows, cols)])


def test_campaign_features_target_the_model_kind() -> None:
    assert split_features("upsample_bilinear,batch3") == (
        "none",
        ("upsample_bilinear", "batch3"),
    )
    assert split_features("all") == ("all", ())
    assert split_features("item4_padded_texels,conv_transpose") == (
        "item4_padded_texels",
        ("conv_transpose",),
    )
    assert {program_kind(k, models_only=True) for k in range(16)} == {"model"}
    assert set(vision_models.LAYERS) <= set(FAMILIES)
    assert set(MODEL_VARIANTS) == {"batch3", "two_results", "three_results"}


def test_batch3_reaches_every_family() -> None:
    """Every family is drawn on a batch-3 input by some seed (the gathers' batch index
    tensors are `linalg.index 0`, not `%c0`)."""
    used: set[str] = set()
    for seed in range(150):
        model = generate_model(RandomChooser(f"batch3:{seed}"), ("batch3",))
        assert "func.func @main(%x: tensor<3x" in model.text
        used |= model.features_used
    assert set(vision_models.VISION_FAMILIES) <= used, set(vision_models.VISION_FAMILIES) - used


def test_value_tokens_keep_their_element_type() -> None:
    printer = _Printer()
    assert printer.empty((3,), "i64") == Value("%@0", (3,), "i64")
    assert printer.empty((3,), "i64") is printer.empty((3,), "i64")
