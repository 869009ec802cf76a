// legalize-layout stores a value straight through the layout of the `layout.transform`
// that alone reads it (transforms/relayout_stores.py): the producer's kernel writes the
// transform's storage through a pending-layout declaration, and the transform launches no
// copy kernel. test/python/test_relayout_stores.py runs every function with the graph
// evaluator and its legalized host (after the buffer passes) and compares the values.
// RUN: xdsl-opt %s -p fuse-elementwise,legalize-layout | filecheck %s
// RUN: xdsl-opt %s -p fuse-elementwise,legalize-layout,legalize-layout | filecheck %s

#id5 = affine_map<(n, c, h, w, l) -> (n, c, h, w, l)>
#par5 = ["parallel", "parallel", "parallel", "parallel", "parallel"]

// A texture result read only by its relayout back to NCHW (a model's boundary): the relu
// kernel stores into result0 declared with the transform as its pending layout.
// CHECK-LABEL: func.func @relu_to_nchw_generic_r(
// CHECK-SAME:      %{{[^:]*}}: !layout.buffer<1x2x3x5x4xf32>, %[[DST:[^:]*]]: !layout.buffer<1x2x3x5x4xf32, transform = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>>)
// CHECK:           layout.store %{{.*}}, %[[DST]][
// CHECK-NOT:     func.func @relu_to_nchw_transform
// CHECK-LABEL: func.func @relu_to_nchw(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<1x2x3x5x4xf32>, %[[R0:[^:]*]]: !layout.buffer<1x8x3x5xf32>)
// CHECK-NEXT:    %[[PTR:.*]] = layout.data %[[R0]]
// CHECK-NEXT:    %[[VIEW:.*]] = layout.decl_buffer %[[PTR]] : {{.*}} -> !layout.buffer<1x2x3x5x4xf32, transform = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>>
// CHECK-NEXT:    func.call @relu_to_nchw_generic_r(%[[X]], %[[VIEW]])
// CHECK-NEXT:    func.return
func.func @relu_to_nchw(%x: tensor<1x2x3x5x4xf32>) -> tensor<1x8x3x5xf32> {
  %e = tensor.empty() : tensor<1x2x3x5x4xf32>
  %r = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%x : tensor<1x2x3x5x4xf32>) outs(%e : tensor<1x2x3x5x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x2x3x5x4xf32>
  %t = layout.transform %r {index_map = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>} : tensor<1x2x3x5x4xf32> -> tensor<1x8x3x5xf32>
  func.return %t : tensor<1x8x3x5xf32>
}

// A group (a 1x1 convolution on NCHW4c and its bias, fused) whose result is relayouted to
// NCHW, returned and read by a second op: the group's one kernel stores result0 through the
// pending layout; the negation then reads result0 (after the group's kernel).
// CHECK-LABEL: func.func @conv_bias_to_nchw_fused_c(
// CHECK-SAME:      %[[OUT:[^:]*]]: !layout.buffer<1x1x5x3x4xf32, transform = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>>
// CHECK:         scf.for
// CHECK:         layout.store %{{.*}}, %[[OUT]][
// CHECK-LABEL: func.func @conv_bias_to_nchw(
// CHECK-SAME:      %[[R0:[^:]*]]: !layout.buffer<1x4x5x3xf32>, %[[R1:[^:]*]]: !layout.buffer<1x4x5x3xf32>)
// CHECK-NEXT:    %[[PTR:.*]] = layout.data %[[R0]]
// CHECK-NEXT:    %[[VIEW:.*]] = layout.decl_buffer %[[PTR]] : {{.*}} -> !layout.buffer<1x1x5x3x4xf32, transform
// CHECK-NEXT:    func.call @conv_bias_to_nchw_fused_c(%{{.*}}, %[[VIEW]], %{{.*}})
// CHECK-NEXT:    func.call @conv_bias_to_nchw_generic_y(%[[R0]], %[[R1]])
// CHECK-NEXT:    func.return
func.func @conv_bias_to_nchw(%x: tensor<1x2x5x3x4xf32>, %w: tensor<1x8x1x1x4xf32>, %b: tensor<1x1x1x4xf32>) -> (tensor<1x4x5x3xf32>, tensor<1x4x5x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x5x3x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x5x3x4xf32>) -> tensor<1x1x5x3x4xf32>
  %conv = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d5 floordiv 4, d6 + d2, d7 + d3, d5 mod 4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d5, d6, d7, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x2x5x3x4xf32>, tensor<1x8x1x1x4xf32>) outs(%f : tensor<1x1x5x3x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%a: f32, %k: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<1x1x5x3x4xf32>
  %c = linalg.generic {indexing_maps = [#id5, affine_map<(n, c, h, w, l) -> (c, 0, 0, l)>, #id5], iterator_types = #par5} ins(%conv, %b : tensor<1x1x5x3x4xf32>, tensor<1x1x1x4xf32>) outs(%e : tensor<1x1x5x3x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %s = arith.addf %a, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x1x5x3x4xf32>
  %t = layout.transform %c {index_map = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>} : tensor<1x1x5x3x4xf32> -> tensor<1x4x5x3xf32>
  %e2 = tensor.empty() : tensor<1x4x5x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<1x4x5x3xf32>) outs(%e2 : tensor<1x4x5x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x4x5x3xf32>
  func.return %t, %y : tensor<1x4x5x3xf32>, tensor<1x4x5x3xf32>
}

// A texture result read by its relayout to NCHW whose padded channel a crop drops (a
// model's 3-channel result): the relu stores straight into result0 at (n, c * 4 + l, h, w),
// inside an `scf.if` on c * 4 + l < 3 (c spans one block: the channel is the lane l);
// neither the transform nor the crop has a kernel. (legalize-layout alone takes windows
// that start inside the tensor too: test/python/test_relayout_stores.py.)
// CHECK-LABEL: func.func @relu_to_cropped_nchw_generic_r(
// CHECK-SAME:      %{{[^:]*}}: !layout.buffer<1x1x3x5x4xf32>, %[[DST:[^:]*]]: !layout.buffer<1x3x3x5xf32>)
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}, %[[H:.*]], %[[W:.*]], %[[L:.*]]) =
// CHECK:           %[[IN:.*]] = arith.cmpi slt, %[[L]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK-NEXT:        layout.store %{{.*}}, %[[DST]][%{{.*}}, %[[L]], %[[H]], %[[W]]] : !layout.buffer<1x3x3x5xf32>, f32
// CHECK-NEXT:      }
// CHECK-NOT:     func.func @relu_to_cropped_nchw_transform
// CHECK-NOT:     func.func @relu_to_cropped_nchw_crop
// CHECK-LABEL: func.func @relu_to_cropped_nchw(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<1x1x3x5x4xf32>, %[[R0:[^:]*]]: !layout.buffer<1x3x3x5xf32>)
// CHECK-NEXT:    func.call @relu_to_cropped_nchw_generic_r(%[[X]], %[[R0]])
// CHECK-NEXT:    func.return
func.func @relu_to_cropped_nchw(%x: tensor<1x1x3x5x4xf32>) -> tensor<1x3x3x5xf32> {
  %e = tensor.empty() : tensor<1x1x3x5x4xf32>
  %r = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%x : tensor<1x1x3x5x4xf32>) outs(%e : tensor<1x1x3x5x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x1x3x5x4xf32>
  %t = layout.transform %r {index_map = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>} : tensor<1x1x3x5x4xf32> -> tensor<1x4x3x5xf32>
  %c = layout.crop %t {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 3, 3, 5>} : tensor<1x4x3x5xf32> -> tensor<1x3x3x5xf32>
  func.return %c : tensor<1x3x3x5xf32>
}

// Refused: the uncropped NCHW tensor is returned too, so it is stored whole (through the
// transform, as above) and the crop copies its window.
// CHECK-LABEL: func.func @uncropped_returned_keeps_the_crop(
// CHECK:         func.call @uncropped_returned_keeps_the_crop_generic_r(
// CHECK-NEXT:    func.call @uncropped_returned_keeps_the_crop_crop_c(
func.func @uncropped_returned_keeps_the_crop(%x: tensor<1x1x3x5x4xf32>) -> (tensor<1x4x3x5xf32>, tensor<1x3x3x5xf32>) {
  %e = tensor.empty() : tensor<1x1x3x5x4xf32>
  %r = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%x : tensor<1x1x3x5x4xf32>) outs(%e : tensor<1x1x3x5x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x1x3x5x4xf32>
  %t = layout.transform %r {index_map = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>} : tensor<1x1x3x5x4xf32> -> tensor<1x4x3x5xf32>
  %c = layout.crop %t {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 3, 3, 5>} : tensor<1x4x3x5xf32> -> tensor<1x3x3x5xf32>
  func.return %t, %c : tensor<1x4x3x5xf32>, tensor<1x3x3x5xf32>
}

// Refused: the transform pads (5 channels into two blocks of 4): the padding would never
// be written, so the copy kernel stays (it fills the pad value).
// CHECK-LABEL: func.func @padding_transform_keeps_its_kernel(
// CHECK:         func.call @padding_transform_keeps_its_kernel_generic_r(
// CHECK:         func.call @padding_transform_keeps_its_kernel_transform_t(
func.func @padding_transform_keeps_its_kernel(%x: tensor<1x5x3x1xf32>) -> tensor<1x2x3x1x4xf32> {
  %e = tensor.empty() : tensor<1x5x3x1xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x5x3x1xf32>) outs(%e : tensor<1x5x3x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x5x3x1xf32>
  %t = layout.transform %r {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x5x3x1xf32> -> tensor<1x2x3x1x4xf32>
  func.return %t : tensor<1x2x3x1x4xf32>
}

// Refused: the producer's result is also returned (needed whole in its own layout).
// CHECK-LABEL: func.func @shared_result_keeps_its_kernel(
// CHECK:         func.call @shared_result_keeps_its_kernel_generic_r(
// CHECK:         func.call @shared_result_keeps_its_kernel_transform_t(
func.func @shared_result_keeps_its_kernel(%x: tensor<1x1x3x1x4xf32>) -> (tensor<1x1x3x1x4xf32>, tensor<1x4x3x1xf32>) {
  %e = tensor.empty() : tensor<1x1x3x1x4xf32>
  %r = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%x : tensor<1x1x3x1x4xf32>) outs(%e : tensor<1x1x3x1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x1x3x1x4xf32>
  %t = layout.transform %r {index_map = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>} : tensor<1x1x3x1x4xf32> -> tensor<1x4x3x1xf32>
  func.return %r, %t : tensor<1x1x3x1x4xf32>, tensor<1x4x3x1xf32>
}

// Refused: the transform's result is a texture (a relabelled store would split texels).
// CHECK-LABEL: func.func @texture_destination_keeps_its_kernel(
// CHECK:         func.call @texture_destination_keeps_its_kernel_generic_r(
// CHECK:         func.call @texture_destination_keeps_its_kernel_transform_t(
func.func @texture_destination_keeps_its_kernel(%x: tensor<1x8x3x1xf32>) -> tensor<1x4x3x1xf32> {
  %e = tensor.empty() : tensor<1x8x3x1xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x8x3x1xf32>) outs(%e : tensor<1x8x3x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x8x3x1xf32>
  %t = layout.transform %r {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, layout.scope = "global.texture"} : tensor<1x8x3x1xf32> -> tensor<1x2x3x1x4xf32>
  %e2 = tensor.empty() : tensor<1x2x3x1x4xf32>
  %y = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%t : tensor<1x2x3x1x4xf32>) outs(%e2 : tensor<1x2x3x1x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x3x1x4xf32>
  %back = layout.transform %y {index_map = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>} : tensor<1x2x3x1x4xf32> -> tensor<1x8x3x1xf32>
  %e3 = tensor.empty() : tensor<1x4x3x1xf32>
  %crop = layout.crop %back {start = array<i64: 0, 2, 0, 0>, sizes = array<i64: 1, 4, 3, 1>} : tensor<1x8x3x1xf32> -> tensor<1x4x3x1xf32>
  func.return %crop : tensor<1x4x3x1xf32>
}

// Refused: the producer writes every other column of an initialized output (its points do
// not cover the result), so the transform copies the columns it did not write too.
// CHECK-LABEL: func.func @partial_writer_keeps_its_kernel(
// CHECK:         func.call @partial_writer_keeps_its_kernel_generic_r(
// CHECK:         func.call @partial_writer_keeps_its_kernel_transform_t(
func.func @partial_writer_keeps_its_kernel(%x: tensor<3x2xf32>, %init: tensor<3x4xf32>) -> tensor<4x3xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j * 2)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x2xf32>) outs(%init : tensor<3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<3x4xf32>
  %t = layout.transform %r {index_map = #layout.index_map<(i, j) -> (j, i)>} : tensor<3x4xf32> -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// A graph op nobody reads (a fill a lifted weight flip left behind) launches nothing.
// CHECK-LABEL: func.func @dead_fill_launches_nothing(
// CHECK-NEXT:    func.call @dead_fill_launches_nothing_generic_r(
// CHECK-NEXT:    func.return
func.func @dead_fill_launches_nothing(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<7x2xf32>
  %dead = linalg.fill ins(%zero : f32) outs(%e0 : tensor<7x2xf32>) -> tensor<7x2xf32>
  %e = tensor.empty() : tensor<3x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<3x5xf32>
  func.return %r : tensor<3x5xf32>
}
