"""`physlayout viz`: the committed pictures under docs/ are what the code draws (golden
files), the pictures place every element where the IndexMap engine puts it, and bad input
gets a diagnostic."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

from physlayout.dialects.buffer_layout import PendingLayout
from physlayout.indexing.index_map import IndexMap
from physlayout.universe import make_context
from physlayout.viz import (
    buffer_type_from_parts,
    graph_dot,
    layout_canvas,
    layout_svg,
    parse_buffer_type,
    render_dot,
)
from physlayout.viz.layout import MAX_ROWS, layout_panels
from physlayout.viz.pictures import PICTURES, draw

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from physlayout.cli import main; main()"]


@pytest.mark.parametrize("name", sorted(PICTURES))
def test_committed_picture_is_up_to_date(name: str) -> None:
    """docs/NAME is byte-identical to what its command draws (run `make docs` after a change)."""
    committed = (ROOT / "docs" / name).read_text()
    assert draw(PICTURES[name]) == committed, f"docs/{name} is stale: run `make docs`"


def test_svg_is_deterministic() -> None:
    buffer_type = buffer_type_from_parts([2, 3, 5], "(a, b, c) -> (c, a | b)")
    assert layout_svg(buffer_type) == layout_svg(buffer_type)


def _cells(svg: str) -> dict[str, list[str]]:
    """Tooltip texts of the cells, by element number ('pad' for padding cells)."""
    cells: dict[str, list[str]] = {}
    for title in map(html.unescape, re.findall(r"<title>(.*?)</title>", svg)):
        match = re.match(r"element (\d+): ", title)
        cells.setdefault(match.group(1) if match else "pad", []).append(title)
    return cells


def test_transpose_places_each_element_at_its_image() -> None:
    """(i, j) -> (j, i) on [3, 5]: element i*5+j is drawn at [i,j] and at [j,i]."""
    cells = _cells(layout_svg(buffer_type_from_parts([3, 5], "(i, j) -> (j, i)")))
    for i in range(3):
        for j in range(5):
            logical, physical = cells[str(i * 5 + j)]
            assert logical.startswith(f"element {i * 5 + j}: [{i},{j}] <-> [{j},{i}]")
            assert physical.startswith(f"element {i * 5 + j}: [{j},{i}] <-> [{i},{j}]")
    assert "pad" not in cells


def test_texture_with_three_channels() -> None:
    """NHWC [1, 2, 3, 3] -> NCHW4c texture: one texel per pixel, lane a is padding."""
    buffer_type = buffer_type_from_parts(
        [1, 2, 3, 3], "(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)",
        scope="global.texture", pad_value="-1.5",
    )
    svg = layout_svg(buffer_type)
    cells = _cells(svg)
    assert len(cells["pad"]) == 6  # one alpha lane per texel, 3 x 2 texels
    assert all(" lane a = -1.5" in title for title in cells["pad"])
    for h in range(2):
        for w in range(3):
            for c in range(3):
                ident = (h * 3 + w) * 3 + c
                physical = cells[str(ident)][1]
                assert physical.startswith(
                    f"element {ident}: texel (x={w}, y={h}) lane {'rgba'[c]}"
                )
    assert "RGBA image 3 x 2 texels" in svg
    assert ">-1.5</text>" in svg


def test_panels_use_the_engine_mapping() -> None:
    """The physical panel is PendingLayout.map_ndarray of the element numbers."""
    buffer_type = buffer_type_from_parts(
        [7, 6], "(i, j) -> (j floordiv 4, i | j mod 4, i mod 2)", pad_value="0.0"
    )
    logical, physical, _ = layout_panels(buffer_type)
    layout = PendingLayout.of(buffer_type)
    assert layout is not None
    np.testing.assert_array_equal(logical.ids, np.arange(42).reshape(7, 6))
    np.testing.assert_array_equal(physical.ids, layout.map_ndarray(logical.ids, pad_value=-1))
    assert physical.split == 2  # rows: (j floordiv 4, i), columns: (j mod 4, i mod 2)
    m = IndexMap.parse("(i, j) -> (j floordiv 4, i, j mod 4, i mod 2)")
    assert physical.ids[tuple(m.map_indices([5, 3]))] == 5 * 6 + 3


def test_separator_groups_label_rows() -> None:
    """Separators [1, 2] (three groups): the first two groups are rows, labelled with `|`
    between them, with a dark line between the blocks of the outer group."""
    buffer_type = parse_buffer_type(
        "!layout.buffer<2x3x2x5xf32, transform = #layout.index_map<(a, b, c, d) -> (a | b | c, d)>>"
    )
    _, physical, _ = layout_panels(buffer_type)
    assert (physical.split, physical.groups) == (2, (1,))
    svg = layout_svg(buffer_type)
    assert ">0|2<" in svg and ">1|0<" in svg
    assert svg.count('stroke="#222222" stroke-width="3"/>') == 2 + 1  # 2 outlines + 1 line


def test_texel_vector_elements() -> None:
    svg = layout_svg(parse_buffer_type(
        '!layout.buffer<2x3xvector<4xf32>, scope = "global.texture">'
    ))
    assert "RGBA image 3 x 2 texels (width x height), one vector&lt;4xf32&gt; per texel" in svg


def test_large_tensor_is_summarized() -> None:
    buffer_type = buffer_type_from_parts(
        [1, 64, 64, 32], "(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)",
        scope="global.texture",
    )
    svg = layout_svg(buffer_type)
    assert "summarized: rows 0-15 of 4096, columns 0-31 of 32" in svg
    assert "summarized: rows 0-15 of 512, columns 0-31 of 256" in svg
    assert svg.count("<title>") == 2 * MAX_ROWS * 32


_ELEMENT_RECT = re.compile(r'<rect [^>]*fill="(#[0-9a-f]{6})"[^>]*><title>element (\d+):')


@pytest.mark.parametrize(
    "buffer_type",
    [
        '!layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">',
        "!layout.buffer<40x3xf32, transform = #layout.index_map<(i, j) -> (j, i)>>",
        "!layout.buffer<5x70xf32, transform = #layout.index_map<(i, j) -> (j floordiv 8, i, j mod 8)>, pad_value = 0.0 : f32>",
    ],
)
def test_both_sides_show_the_same_elements_or_say_what_is_elided(buffer_type: str) -> None:
    """A coloured element is drawn on both sides; an element only one side draws (the other
    is summarized) is white there, and a caption counts them."""
    from physlayout.viz.layout import drawn_elements

    logical, physical, _ = layout_panels(parse_buffer_type(buffer_type))
    on_logical, on_physical = drawn_elements(logical), drawn_elements(physical)
    svg = layout_svg(parse_buffer_type(buffer_type))
    coloured = {int(n) for fill, n in _ELEMENT_RECT.findall(svg) if fill != "#ffffff"}
    white = [int(n) for fill, n in _ELEMENT_RECT.findall(svg) if fill == "#ffffff"]
    assert coloured == on_logical & on_physical
    assert set(white) == on_logical ^ on_physical
    only_logical = len(on_logical - on_physical)
    only_physical = len(on_physical - on_logical)
    if only_logical:
        assert f"white: {only_logical} elements the physical side does not draw" in svg
    if only_physical:
        assert f"white: {only_physical} elements the logical side does not draw" in svg
    assert bool(white) == (only_logical + only_physical > 0) == ("white: " in svg)


@pytest.mark.parametrize("name", [n for n in PICTURES if n.endswith(".svg")])
def test_no_text_is_clipped(name: str) -> None:
    """Every text fits in the picture: its width estimate is at least what DejaVu Sans Mono
    draws (0.602 em per character) and the canvas is grown to hold it."""
    from physlayout.viz.canvas import Text, text_width

    svg = draw(PICTURES[name])
    width = int(re.search(r'<svg [^>]*width="(\d+)"', svg).group(1))  # pyright: ignore[reportOptionalMemberAccess]
    for x, size, anchor, text in re.findall(
        r'<text x="(\d+)" y="\d+" font-size="(\d+)" text-anchor="(\w+)"[^>]*>([^<]*)</text>', svg
    ):
        shown = html.unescape(text)
        drawn = len(shown) * int(size) * 0.602
        assert text_width(shown, int(size)) >= drawn
        right = int(x) + {"start": drawn, "middle": drawn / 2, "end": 0}[anchor]
        assert right <= width, f"{shown!r} ends at {right:.0f}, beyond the width {width}"
    assert Text  # the canvas type whose widths these are


def test_buffer_type_and_value_forms_agree(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "relu_texture.mlir").read_text()
    module = Parser(make_context(), text).parse_module()
    from physlayout.viz import buffer_type_of_value

    out = buffer_type_of_value(module, "out", "relu")
    assert out == parse_buffer_type(str(out))
    assert layout_svg(out) == layout_svg(parse_buffer_type(str(out)))
    with pytest.raises(ValueError, match="no value %nope in @relu"):
        buffer_type_of_value(module, "nope", "relu")


def test_png_when_matplotlib_is_installed(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "t.png"
    layout_canvas(buffer_type_from_parts([4, 4], "(i, j) -> (j, i)")).to_png(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_graph_marks_copies_scopes_and_demands() -> None:
    text = (ROOT / "test" / "graph" / "realize-scopes.mlir").read_text()
    module = Parser(make_context(), text).parse_module()
    dot = graph_dot(module, "conflict", "realize-scopes")
    before, after = dot.split("subgraph cluster_after")
    assert "layout.copy" not in before
    copies = [line for line in after.splitlines() if "layout.copy" in line]
    assert len(copies) == 1
    assert r"layout.copy\nto global\n" in copies[0]
    assert 'style="filled,dashed"' in copies[0]
    # the texture-scoped producer has a thick border; a demand labels its edge
    assert re.search(r'%a = linalg.generic.*scope global.texture".*penwidth=3', after)
    assert '[label="global.texture"]' in before  # realize-scopes consumes the demands
    assert str(module) == str(Parser(make_context(), text).parse_module())  # unchanged


def test_graph_folds_rewrites() -> None:
    dot = (ROOT / "docs" / "graph_conv_bias_conv.dot").read_text()
    before, after = dot.split("subgraph cluster_after")
    assert before.count("= layout.transform") == 6
    assert after.count("= layout.transform") == 4


@pytest.mark.parametrize("suffix", [".svg", ".png"])
def test_render_dot_without_graphviz_is_an_error(
    suffix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    target = tmp_path / f"g{suffix}"
    with pytest.raises(ValueError) as raised:
        render_dot("digraph g {}\n", target)
    assert str(raised.value) == (
        f"cannot write {target}: drawing a graph as {suffix[1:].upper()} needs Graphviz's "
        "`dot` program, which is not installed (e.g. `apt-get install graphviz`); write DOT "
        f"text instead with -o {tmp_path / 'g.dot'} (or without -o, to stdout)"
    )
    assert list(tmp_path.iterdir()) == []  # nothing written, no g.dot behind the user's back


def test_render_dot_writes_dot_and_refuses_other_suffixes(tmp_path: Path) -> None:
    written = render_dot("digraph g {}\n", tmp_path / "g.dot")
    assert written == tmp_path / "g.dot"
    assert written.read_text() == "digraph g {}\n"
    with pytest.raises(ValueError, match=r"cannot write a graph to .*g\.txt: use a \.dot, \.svg or \.png file"):
        render_dot("digraph g {}\n", tmp_path / "g.txt")


def test_graph_to_svg_without_graphviz_from_the_command_line(tmp_path: Path) -> None:
    """`physlayout viz FILE -o g.svg` with no Graphviz on PATH: exit 1, one clear error, no file."""
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    target = tmp_path / "g.svg"
    result = subprocess.run(
        [*CLI, "viz", "examples/graph_conv_bias_conv.mlir", "--function", "conv_bias_conv",
         "-o", str(target)],
        cwd=ROOT, capture_output=True, text=True, env=env,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: cannot write {target}: drawing a graph as SVG needs ")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--shape", "4", "--map", "(i) -> (i floordiv 2)"],
         "error: index map (i) -> (i floordiv 2) is not injective on shape [4]: indices [0] and [1] both map to [0]"),
        (["--shape", "3", "--map", "(i) -> (i floordiv 2, i mod 2)"],
         "error: transform (i) -> (i floordiv 2, i mod 2) introduces padding on shape [3] (padding where i floordiv 2 == 1 and i mod 2 == 1); give the buffer a pad_value"),
        (["--shape", "2,x"], "error: --shape '2,x': expected integers separated by commas"),
        (["--type", "f32"], "error: f32 is not a !layout.buffer type"),
        (["examples/relu_texture.mlir", "--value", "c0"],
         "error: %c0 has type index, not a !layout.buffer"),
        (["--value", "x"], "error: --value needs FILE"),
        (["examples/relu_texture.mlir", "--pipeline", "nope"],
         "error: pipeline 'nope': unknown pass 'nope'"),
        ([], "error: give FILE, --type or --shape (see physlayout viz --help)"),
        (["--type", "!layout.buffer<f32>"],
         "error: !layout.buffer<f32> has rank 0: one element, no layout to draw"),
    ],
)
def test_cli_errors(args: list[str], message: str) -> None:
    result = subprocess.run([*CLI, "viz", *args], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == message


def test_cli_parse_error_is_located(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%a: !layout.buffer<4xf32>) {\n  func.return %a\n}\n")
    result = subprocess.run([*CLI, "viz", str(bad), "--value", "a"], capture_output=True,
                            text=True)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"{bad}:" in result.stderr


def test_render_dot_with_graphviz(tmp_path: Path) -> None:
    import shutil

    if shutil.which("dot") is None:
        pytest.skip("Graphviz `dot` is not installed")
    dot = (ROOT / "docs" / "graph_conv_bias_conv.dot").read_text()
    written = render_dot(dot, tmp_path / "g.svg")
    assert written == tmp_path / "g.svg"
    assert "<svg" in written.read_text()
    png = render_dot(dot, tmp_path / "g.png")
    assert png.read_bytes().startswith(b"\x89PNG")


@st.composite
def _layouts(draw: st.DrawFn) -> tuple[list[int], IndexMap, str | None]:
    """A small shape and a map: a permutation, then maybe a split of one axis by k."""
    rank = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 7), min_size=rank, max_size=rank))
    names = ["a", "b", "c"][:rank]
    order = draw(st.permutations(names))
    results = list(order)
    pad = None
    if draw(st.booleans()):
        k = draw(st.integers(2, 5))
        axis = draw(st.integers(0, rank - 1))
        name = results[axis]
        results[axis : axis + 1] = [f"{name} floordiv {k}", f"{name} mod {k}"]
        pad = "-2.0"
    return shape, IndexMap.parse(f"({', '.join(names)}) -> ({', '.join(results)})"), pad


@settings(derandomize=True, max_examples=40, deadline=None)
@given(_layouts())
def test_every_drawn_element_is_where_the_map_sends_it(
    layout: tuple[list[int], IndexMap, str | None],
) -> None:
    """Each physical cell's tooltip names the element the IndexMap sends there; padding
    cells are exactly the drawn points without a preimage."""
    shape, index_map, pad = layout
    buffer_type = buffer_type_from_parts(shape, str(index_map), pad_value=pad)
    svg = layout_svg(buffer_type)
    cells = _cells(svg)
    summarized = "summarized:" in svg
    physical_shape = index_map.map_shape(shape)
    drawn_elements = 0
    for ident in range(int(np.prod(shape))):
        logical_index = [int(i) for i in np.unravel_index(ident, shape)]
        target = [int(i) for i in index_map.map_indices(logical_index)]
        where = f"[{','.join(map(str, logical_index))}] <-> [{','.join(map(str, target))}]"
        there = f"[{','.join(map(str, target))}] <-> [{','.join(map(str, logical_index))}]"
        titles = cells.get(str(ident), [])
        if len(titles) == 2:  # drawn in both panels: logical first, then physical
            assert titles[0].startswith(f"element {ident}: {where}")
            assert titles[1].startswith(f"element {ident}: {there}")
            drawn_elements += 1
        else:
            assert summarized and len(titles) <= 1
    assert drawn_elements > 0
    if not summarized:
        assert drawn_elements == int(np.prod(shape))
        assert len(cells.get("pad", [])) == int(np.prod(physical_shape)) - drawn_elements
