// One lowered form of lower-layout-rewrites per function (the most specific proven form),
// negative cases next to positive ones. The output verifies in upstream mlir-opt;
// test/python/test_layout_rewrites_interop.py runs every function before and after the pass
// (numpy graph evaluator) and, with MLIR, through mlir-opt + mlir-runner.
// RUN: xdsl-opt %s -p lower-layout-rewrites | filecheck %s
// RUN: xdsl-opt %s -p lower-layout-rewrites | xdsl-opt -p lower-layout-rewrites | filecheck %s
// RUN: %if mlir %{ xdsl-opt %s -p lower-layout-rewrites | %mlir-opt --verify-each | filecheck %s --check-prefix=MLIR %}
// RUN: %if mlir %{ xdsl-opt %s -p lower-layout-rewrites --print-op-generic | %mlir-opt --verify-each | filecheck %s --check-prefix=MLIR %}

// MLIR: module
// MLIR-NOT: {{[^a-z_]layout\.}}

// CHECK-LABEL: func.func @permutation
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK-NEXT:    %[[T:.*]] = linalg.transpose ins(%[[X]]:tensor<2x3x4xf32>) outs(%[[E]]:tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK-NEXT:    func.return %[[T]]
func.func @permutation(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(a, b, c) -> (c, a, b)>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  func.return %r : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @identity
// CHECK-SAME:    (%[[X:.*]]: tensor<1x3xf32>)
// CHECK-NEXT:    func.return %[[X]]
func.func @identity(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(a, b) -> (a * 7, b)>} : tensor<1x3xf32> -> tensor<1x3xf32>
  func.return %r : tensor<1x3xf32>
}

// CHECK-LABEL: func.func @split
// CHECK-NEXT:    %[[R:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0 : i64, 1 : i64], [2 : i64]] output_shape [3, 4, 5] : tensor<12x5xf32> into tensor<3x4x5xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @split(%x: tensor<12x5xf32>) -> tensor<3x4x5xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (i floordiv 4, i mod 4, j)>} : tensor<12x5xf32> -> tensor<3x4x5xf32>
  func.return %r : tensor<3x4x5xf32>
}

// CHECK-LABEL: func.func @fuse
// CHECK-NEXT:    %[[R:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0 : i64], [1 : i64, 2 : i64]] : tensor<2x3x4xf32> into tensor<2x12xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @fuse(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(a, b, c) -> (a, b * 4 + c)>} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  func.return %r : tensor<2x12xf32>
}

// A reshape that is neither a pure split nor a pure fuse: collapse, then expand.
// CHECK-LABEL: func.func @refold
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0 : i64, 1 : i64]] : tensor<4x3xf32> into tensor<12xf32>
// CHECK-NEXT:    %[[R:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0 : i64, 1 : i64]] output_shape [2, 6] : tensor<12xf32> into tensor<2x6xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @refold(%x: tensor<4x3xf32>) -> tensor<2x6xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (i floordiv 2, (i mod 2) * 3 + j)>} : tensor<4x3xf32> -> tensor<2x6xf32>
  func.return %r : tensor<2x6xf32>
}

// NCHW -> NCHW4c with 6 channels: a padded pack.
// CHECK-LABEL: func.func @nchw_to_nchw4c
// CHECK-SAME:    (%[[X:.*]]: tensor<1x6x3x3xf32>)
// CHECK-NEXT:    %[[P:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x2x3x3x4xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.pack %[[X]] padding_value(%[[P]] : f32) inner_dims_pos = [1] inner_tiles = [4] into %[[E]] : tensor<1x6x3x3xf32> -> tensor<1x2x3x3x4xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @nchw_to_nchw4c(%x: tensor<1x6x3x3xf32>) -> tensor<1x2x3x3x4xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x6x3x3xf32> -> tensor<1x2x3x3x4xf32>
  func.return %r : tensor<1x2x3x3x4xf32>
}

// OIHW -> OIHW4i4o: two tiles, inner order (i, o); no padding.
// CHECK-LABEL: func.func @oihw_to_oihw4i4o
// CHECK:         linalg.pack %{{.*}} inner_dims_pos = [1, 0] inner_tiles = [4, 4] into %{{.*}} : tensor<8x4x3x3xf32> -> tensor<2x1x3x3x4x4xf32>
// CHECK-NEXT:    func.return
func.func @oihw_to_oihw4i4o(%x: tensor<8x4x3x3xf32>) -> tensor<2x1x3x3x4x4xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(o, i, kh, kw) -> (o floordiv 4, i floordiv 4, kh, kw, i mod 4, o mod 4)>} : tensor<8x4x3x3xf32> -> tensor<2x1x3x3x4x4xf32>
  func.return %r : tensor<2x1x3x3x4x4xf32>
}

// NHWC -> NC4HW4c: outer parts permuted (outer_dims_perm).
// CHECK-LABEL: func.func @nhwc_to_nchw4c
// CHECK:         linalg.pack %{{.*}} padding_value(%{{.*}} : f32) outer_dims_perm = [0, 3, 1, 2] inner_dims_pos = [3] inner_tiles = [4] into %{{.*}} : tensor<1x2x3x5xf32> -> tensor<1x2x2x3x4xf32>
// CHECK-NEXT:    func.return
func.func @nhwc_to_nchw4c(%x: tensor<1x2x3x5xf32>) -> tensor<1x2x2x3x4xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = -1.0 : f32} : tensor<1x2x3x5xf32> -> tensor<1x2x2x3x4xf32>
  func.return %r : tensor<1x2x2x3x4xf32>
}

// A tile axis that is not last: pack, then a transpose.
// CHECK-LABEL: func.func @tile_not_last
// CHECK:         %[[P:.*]] = linalg.pack %{{.*}} padding_value(%{{.*}} : f32) inner_dims_pos = [0] inner_tiles = [4] into %{{.*}} : tensor<6x5xf32> -> tensor<2x5x4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<2x4x5xf32>
// CHECK-NEXT:    %[[T:.*]] = linalg.transpose ins(%[[P]]:tensor<2x5x4xf32>) outs(%[[E]]:tensor<2x4x5xf32>) permutation = [0, 2, 1]
// CHECK-NEXT:    func.return %[[T]]
func.func @tile_not_last(%x: tensor<6x5xf32>) -> tensor<2x4x5xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (i floordiv 4, i mod 4, j)>, pad_value = 0.0 : f32} : tensor<6x5xf32> -> tensor<2x4x5xf32>
  func.return %r : tensor<2x4x5xf32>
}

// NCHW4c -> NCHW: the inverse of a tiling is an unpack.
// CHECK-LABEL: func.func @nchw4c_to_nchw
// CHECK-SAME:    (%[[X:.*]]: tensor<1x2x3x3x4xf32>)
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x8x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.unpack %[[X]] inner_dims_pos = [1] inner_tiles = [4] into %[[E]] : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @nchw4c_to_nchw(%x: tensor<1x2x3x3x4xf32>) -> tensor<1x8x3x3xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
  func.return %r : tensor<1x8x3x3xf32>
}

// ... followed by a crop of the padding: one truncating unpack.
// CHECK-LABEL: func.func @nchw4c_to_nchw_cropped
// CHECK-SAME:    (%[[X:.*]]: tensor<1x2x3x3x4xf32>)
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x6x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.unpack %[[X]] inner_dims_pos = [1] inner_tiles = [4] into %[[E]] : tensor<1x2x3x3x4xf32> -> tensor<1x6x3x3xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @nchw4c_to_nchw_cropped(%x: tensor<1x2x3x3x4xf32>) -> tensor<1x6x3x3xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
  %c = layout.crop %r {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 6, 3, 3>} : tensor<1x8x3x3xf32> -> tensor<1x6x3x3xf32>
  func.return %c : tensor<1x6x3x3xf32>
}

// A crop that removes a whole tile cannot be an unpack: unpack, then extract_slice.
// CHECK-LABEL: func.func @crop_too_small_for_unpack
// CHECK:         %[[U:.*]] = linalg.unpack %{{.*}} inner_dims_pos = [1] inner_tiles = [4] into %{{.*}} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = tensor.extract_slice %[[U]][0, 0, 0, 0] [1, 3, 3, 3] [1, 1, 1, 1] : tensor<1x8x3x3xf32> to tensor<1x3x3x3xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @crop_too_small_for_unpack(%x: tensor<1x2x3x3x4xf32>) -> tensor<1x3x3x3xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
  %c = layout.crop %r {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 3, 3, 3>} : tensor<1x8x3x3xf32> -> tensor<1x3x3x3xf32>
  func.return %c : tensor<1x3x3x3xf32>
}

// The inner axis first in the packed tensor: a transpose, then the unpack.
// CHECK-LABEL: func.func @inner_axis_first
// CHECK:         %[[T:.*]] = linalg.transpose ins(%{{.*}}:tensor<4x2x5xf32>) outs(%{{.*}}:tensor<2x5x4xf32>) permutation = [1, 2, 0]
// CHECK:         %[[R:.*]] = linalg.unpack %[[T]] inner_dims_pos = [0] inner_tiles = [4] into %{{.*}} : tensor<2x5x4xf32> -> tensor<8x5xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @inner_axis_first(%x: tensor<4x2x5xf32>) -> tensor<8x5xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(c, a, b) -> (a * 4 + c, b)>} : tensor<4x2x5xf32> -> tensor<8x5xf32>
  func.return %r : tensor<8x5xf32>
}

// Mixed div/mod without padding (a 4x4 transpose of a flat 16): expand into the digits,
// transpose them, collapse (TVM's "reshape, transpose, reshape").
// CHECK-LABEL: func.func @digit_permutation
// CHECK-SAME:    (%[[X:.*]]: tensor<16xf32>)
// CHECK-NEXT:    %[[D:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0 : i64, 1 : i64]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT:    %[[T:.*]] = linalg.transpose ins(%[[D]]:tensor<4x4xf32>) outs(%[[E]]:tensor<4x4xf32>) permutation = [1, 0]
// CHECK-NEXT:    %[[R:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0 : i64, 1 : i64]] : tensor<4x4xf32> into tensor<16xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @digit_permutation(%x: tensor<16xf32>) -> tensor<16xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> ((i mod 4) * 4 + i floordiv 4)>} : tensor<16xf32> -> tensor<16xf32>
  func.return %r : tensor<16xf32>
}

// The same with padding (14 elements): no digit form, the generic fallback.
// CHECK-LABEL: func.func @digit_permutation_padded
// CHECK:         linalg.generic
// CHECK-SAME:      physlayout.layout_transform = "(i) -> ((i mod 4) * 4 + i floordiv 4)"
func.func @digit_permutation_padded(%x: tensor<14xf32>) -> tensor<16xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> ((i mod 4) * 4 + i floordiv 4)>, pad_value = 0.0 : f32} : tensor<14xf32> -> tensor<16xf32>
  func.return %r : tensor<16xf32>
}

// A shear (padded): the generic fallback reads the input at the inverse map and yields the
// pad value on the padding predicate (i1 - i0 >= 5 or i0 > i1); it carries the map.
// CHECK-LABEL: func.func @shear
// CHECK-SAME:    (%[[X:.*]]: tensor<4x5xf32>)
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<4x8xf32>) attrs = {physlayout.layout_transform = "(i, j) -> (i, i + j)"} {
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[S:.*]] = arith.subi %[[J]], %[[I]] : index
// CHECK:           %[[PAD:.*]] = arith.ori %{{.*}}, %{{.*}} : i1
// CHECK-NEXT:      %[[A:.*]] = arith.select %[[PAD]], %{{.*}}, %[[I]] : index
// CHECK-NEXT:      %[[B:.*]] = arith.select %[[PAD]], %{{.*}}, %[[S]] : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[X]][%[[A]], %[[B]]] : tensor<4x5xf32>
// CHECK-NEXT:      %[[C:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.select %[[PAD]], %[[C]], %[[V]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK:         func.return %[[R]]
func.func @shear(%x: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (i, i + j)>, pad_value = -1.0 : f32} : tensor<4x5xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// A reversal without padding: no predicate, no select.
// CHECK-LABEL: func.func @reverse
// CHECK:         linalg.generic
// CHECK-SAME:      attrs = {physlayout.layout_transform = "(i, j) -> (3 - i, j)"}
// CHECK-NOT:       arith.select
// CHECK:           tensor.extract
// CHECK-NOT:       arith.select
// CHECK:           linalg.yield
func.func @reverse(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (3 - i, j)>} : tensor<4x5xf32> -> tensor<4x5xf32>
  func.return %r : tensor<4x5xf32>
}

// A split with padding in place (a tile axis between outer axes): pack + transpose.
// CHECK-LABEL: func.func @split_in_place_padded
// CHECK:         linalg.pack %{{.*}} padding_value(%{{.*}} : f32) inner_dims_pos = [0] inner_tiles = [3] into %{{.*}} : tensor<5x2xf32> -> tensor<2x2x3xf32>
// CHECK:         linalg.transpose ins(%{{.*}}:tensor<2x2x3xf32>) outs(%{{.*}}:tensor<2x3x2xf32>) permutation = [0, 2, 1]
func.func @split_in_place_padded(%x: tensor<5x2xf32>) -> tensor<2x3x2xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (i floordiv 3, i mod 3, j)>, pad_value = 2.0 : f32} : tensor<5x2xf32> -> tensor<2x3x2xf32>
  func.return %r : tensor<2x3x2xf32>
}

// CHECK-LABEL: func.func @pad
// CHECK-SAME:    (%[[X:.*]]: tensor<4x5xi32>)
// CHECK-NEXT:    %[[C:.*]] = arith.constant 7 : i32
// CHECK-NEXT:    %[[R:.*]] = tensor.pad %[[X]] low[1, 0] high[0, 2] {
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      tensor.yield %[[C]] : i32
// CHECK-NEXT:    } : tensor<4x5xi32> to tensor<5x7xi32>
// CHECK-NEXT:    func.return %[[R]]
func.func @pad(%x: tensor<4x5xi32>) -> tensor<5x7xi32> {
  %r = layout.pad %x {low = array<i64: 1, 0>, high = array<i64: 0, 2>, pad_value = 7 : i32} : tensor<4x5xi32> -> tensor<5x7xi32>
  func.return %r : tensor<5x7xi32>
}

// CHECK-LABEL: func.func @crop
// CHECK-SAME:    (%[[X:.*]]: tensor<4x5xf32>)
// CHECK-NEXT:    %[[R:.*]] = tensor.extract_slice %[[X]][1, 2] [2, 3] [1, 1] : tensor<4x5xf32> to tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @crop(%x: tensor<4x5xf32>) -> tensor<2x3xf32> {
  %r = layout.crop %x {start = array<i64: 1, 2>, sizes = array<i64: 2, 3>, cropped_value = "undef"} : tensor<4x5xf32> -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// The identity on the box with a larger structural shape (a mod that never wraps): a pad.
// CHECK-LABEL: func.func @identity_with_padding
// CHECK-SAME:    (%[[X:.*]]: tensor<7xf16>)
// CHECK-NEXT:    %[[C:.*]] = arith.constant 1.000000e+00 : f16
// CHECK-NEXT:    %[[R:.*]] = tensor.pad %[[X]] low[0] high[9] {
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: index):
// CHECK-NEXT:      tensor.yield %[[C]] : f16
// CHECK-NEXT:    } : tensor<7xf16> to tensor<16xf16>
func.func @identity_with_padding(%x: tensor<7xf16>) -> tensor<16xf16> {
  %r = layout.transform %x {index_map = #layout.index_map<(i) -> (i mod 16)>, pad_value = 1.0 : f16} : tensor<7xf16> -> tensor<16xf16>
  func.return %r : tensor<16xf16>
}

// A 3-channel image into one RGBA texel per pixel; integer padding; a prime tile.
// CHECK-LABEL: func.func @three_channels
// CHECK:         linalg.pack %{{.*}} padding_value(%{{.*}} : f32) inner_dims_pos = [1] inner_tiles = [4] into %{{.*}} : tensor<1x3x2x2xf32> -> tensor<1x1x2x2x4xf32>
func.func @three_channels(%x: tensor<1x3x2x2xf32>) -> tensor<1x1x2x2x4xf32> {
  %r = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x3x2x2xf32> -> tensor<1x1x2x2x4xf32>
  func.return %r : tensor<1x1x2x2x4xf32>
}

// CHECK-LABEL: func.func @integer_prime_tile
// CHECK:         %[[P:.*]] = arith.constant -7 : i32
// CHECK:         linalg.pack %{{.*}} padding_value(%[[P]] : i32) inner_dims_pos = [0] inner_tiles = [5] into %{{.*}} : tensor<7x5xi32> -> tensor<2x5x5xi32>
func.func @integer_prime_tile(%x: tensor<7x5xi32>) -> tensor<2x5x5xi32> {
  %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (i floordiv 5, j, i mod 5)>, pad_value = -7 : i32} : tensor<7x5xi32> -> tensor<2x5x5xi32>
  func.return %r : tensor<2x5x5xi32>
}
