// legalize-layout on `layout.fused` groups: ONE kernel per group; the root's fill is the
// accumulator's start (no fill kernel), the epilogue runs on the final accumulator after
// the reduction loops, before the one store.
// RUN: xdsl-opt %s -p fuse-elementwise,legalize-layout | filecheck %s

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch4 = affine_map<(n, c, h, w) -> (c, 0, 0)>
#par4 = ["parallel", "parallel", "parallel", "parallel"]

// CHECK-LABEL: func.func @conv_bias_relu_fused_y(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<1x2x4x4xf32>, %[[W:[^:]*]]: !layout.buffer<3x2x3x3xf32>, %[[OUT:[^:]*]]: !layout.buffer<1x3x2x2xf32>, %[[B:[^:]*]]: !layout.buffer<3x1x1xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.parallel (%[[N:[^,]*]], %[[C:[^,]*]], %[[H:[^,]*]], %[[WW:[^)]*]]) = {{.*}} {
// CHECK-NEXT:      %[[ACC:.*]] = scf.for {{.*}} iter_args({{.*}} = %[[ZERO]]) -> (f32) {
// CHECK:             arith.mulf
// CHECK:           %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[BV:.*]] = layout.load %[[B]][%[[C]], %[[I0]], %[[I0]]]
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ACC]], %[[BV]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.maximumf %[[SUM]], %[[ZERO]] : f32
// CHECK-NEXT:      layout.store %[[Y]], %[[OUT]][%[[N]], %[[C]], %[[H]], %[[WW]]]
// CHECK-NEXT:      scf.reduce
// CHECK-NOT:     func.func @conv_bias_relu_generic
// CHECK-LABEL: func.func @conv_bias_relu(
// CHECK-NEXT:    func.call @conv_bias_relu_fused_y(
// CHECK-NEXT:    func.return
func.func @conv_bias_relu(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %a = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%c, %b : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%a : tensor<1x3x2x2xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x2xf32>
  func.return %y : tensor<1x3x2x2xf32>
}

// A pool over a pad the group absorbed: the source is loaded at the clamped index and the
// pad value selected outside; only the bound the loops do not prove is checked (the width's
// high side: 2 * w + j reaches 6 on a source of width 6), and no padded tensor is stored.
// CHECK-LABEL: func.func @pool_over_pad_fused_m(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<1x3x5x6xf32>, %{{[^:]*}}: !layout.buffer<3x3xf32>, %[[OUT:[^:]*]]: !layout.buffer<1x3x2x3xf32>)
// CHECK-DAG:     %[[FIVE:.*]] = arith.constant 5 : index
// CHECK-DAG:     %[[SIX:.*]] = arith.constant 6 : index
// CHECK-DAG:     %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK:         scf.for %{{.*}} iter_args(%{{.*}} = %[[NINF]])
// CHECK:           %[[H:.*]] = arith.addi
// CHECK:           %[[W:.*]] = arith.addi
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi slt, %[[W]], %[[SIX]] : index
// CHECK-NEXT:      %[[CW:.*]] = arith.minsi %[[W]], %[[FIVE]] : index
// CHECK-NEXT:      %[[V:.*]] = layout.load %[[X]][%{{.*}}, %{{.*}}, %[[H]], %[[CW]]]
// CHECK-NEXT:      arith.select %[[IN]], %[[V]], %[[NINF]] : f32
// CHECK-NOT:     arith.maxsi
// CHECK:         layout.store %{{.*}}, %[[OUT]]
// CHECK-LABEL: func.func @pool_over_pad(
// CHECK-NOT:     layout.pad
// CHECK:         func.call @pool_over_pad_fused_m(
// CHECK-NEXT:    func.return
func.func @pool_over_pad(%x: tensor<1x3x5x6xf32>) -> tensor<1x3x2x3xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = layout.pad %x {low = array<i64: 0, 0, 0, 0>, high = array<i64: 0, 0, 0, 1>, pad_value = 0xFF800000 : f32} : tensor<1x3x5x6xf32> -> tensor<1x3x5x7xf32>
  %e = tensor.empty() : tensor<1x3x2x3xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x3x2x3xf32>) -> tensor<1x3x2x3xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(n, c, h, w, i, j) -> (n, c, 2 * h + i, 2 * w + j)>, affine_map<(n, c, h, w, i, j) -> (i, j)>, affine_map<(n, c, h, w, i, j) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %win : tensor<1x3x5x7xf32>, tensor<3x3xf32>) outs(%init : tensor<1x3x2x3xf32>) {
  ^bb0(%u: f32, %k: f32, %o: f32):
    %r = arith.maximumf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x3xf32>
  func.return %m : tensor<1x3x2x3xf32>
}

// Destination passing: the two groups a concat is made of store straight into its windows
// (the second at channel offset 3, a prime) of the function's result; no insert kernel,
// no copy.
// CHECK-LABEL: func.func @concat_parts_fused_b(
// CHECK-SAME:      %{{[^:]*}}: !layout.buffer<1x2x2x5xf32>, %[[OUT:[^:]*]]: !layout.buffer<1x5x2x5xf32>)
// CHECK:         %[[THREE:.*]] = arith.constant 3 : index
// CHECK:         %[[C:.*]] = arith.addi %{{.*}}, %[[THREE]] : index
// CHECK:         layout.store %{{.*}}, %[[OUT]][%{{.*}}, %[[C]], %{{.*}}, %{{.*}}]
// CHECK-LABEL: func.func @concat_parts(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<1x3x2x5xf32>, %[[Y:[^:]*]]: !layout.buffer<1x2x2x5xf32>, %[[R:[^:]*]]: !layout.buffer<1x5x2x5xf32>)
// CHECK-NEXT:    func.call @concat_parts_fused_a(%[[X]], %[[R]])
// CHECK-NEXT:    func.call @concat_parts_fused_b(%[[Y]], %[[R]])
// CHECK-NEXT:    func.return
func.func @concat_parts(%x: tensor<1x3x2x5xf32>, %y: tensor<1x2x2x5xf32>) -> tensor<1x5x2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<1x3x2x5xf32>
  %e2 = tensor.empty() : tensor<1x2x2x5xf32>
  %a0 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%x : tensor<1x3x2x5xf32>) outs(%e3 : tensor<1x3x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x5xf32>
  %a = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%a0 : tensor<1x3x2x5xf32>) outs(%e3 : tensor<1x3x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x5xf32>
  %b0 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%y : tensor<1x2x2x5xf32>) outs(%e2 : tensor<1x2x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x5xf32>
  %b = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%b0 : tensor<1x2x2x5xf32>) outs(%e2 : tensor<1x2x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x5xf32>
  %e = tensor.empty() : tensor<1x5x2x5xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0, 0, 0] [1, 3, 2, 5] [1, 1, 1, 1] : tensor<1x3x2x5xf32> into tensor<1x5x2x5xf32>
  %c = tensor.insert_slice %b into %c0[0, 3, 0, 0] [1, 2, 2, 5] [1, 1, 1, 1] : tensor<1x2x2x5xf32> into tensor<1x5x2x5xf32>
  func.return %c : tensor<1x5x2x5xf32>
}

// REFUSED: overlapping windows (the second insert overwrites part of the first): written in
// order by insert kernels, so the later part wins.
// CHECK-LABEL: func.func @overlapping_parts(
// CHECK:         func.call @overlapping_parts_fused_a(
// CHECK:         func.call @overlapping_parts_fused_b(
// CHECK:         func.call @overlapping_parts_insert_c0(
// CHECK-NEXT:    func.call @overlapping_parts_insert_c(
func.func @overlapping_parts(%x: tensor<1x3x2x5xf32>, %y: tensor<1x3x2x5xf32>) -> tensor<1x5x2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<1x3x2x5xf32>
  %a0 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%x : tensor<1x3x2x5xf32>) outs(%e3 : tensor<1x3x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x5xf32>
  %a = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%a0 : tensor<1x3x2x5xf32>) outs(%e3 : tensor<1x3x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x5xf32>
  %b0 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%y : tensor<1x3x2x5xf32>) outs(%e3 : tensor<1x3x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x5xf32>
  %b = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%b0 : tensor<1x3x2x5xf32>) outs(%e3 : tensor<1x3x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x5xf32>
  %e = tensor.empty() : tensor<1x5x2x5xf32>
  %c0 = tensor.insert_slice %b into %e[0, 2, 0, 0] [1, 3, 2, 5] [1, 1, 1, 1] : tensor<1x3x2x5xf32> into tensor<1x5x2x5xf32>
  %c = tensor.insert_slice %a into %c0[0, 0, 0, 0] [1, 3, 2, 5] [1, 1, 1, 1] : tensor<1x3x2x5xf32> into tensor<1x5x2x5xf32>
  func.return %c : tensor<1x5x2x5xf32>
}

// REFUSED: the concat starts from a fill (its windows do not cover it) and the half-filled
// concat is also a result (it is needed as it is between the two windows): the parts are
// stored by insert kernels, in the graph's order (the two equal copies are one kernel).
// CHECK-LABEL: func.func @half_concat_read(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<1x3x2x5xf32>, %[[R0:[^:]*]]: !layout.buffer<1x7x2x5xf32>, %[[R1:[^:]*]]: !layout.buffer<1x7x2x5xf32>)
// CHECK:         func.call @half_concat_read_fused_a(%[[X]], %[[A:[^)]*]])
// CHECK:         func.call @half_concat_read_fused_b(%[[X]], %[[B:[^)]*]])
// CHECK:         func.call @half_concat_read_generic_z(%[[Z:[^)]*]])
// CHECK-NEXT:    func.call @half_concat_read_insert_c0(%[[A]], %[[Z]])
// CHECK-NEXT:    func.call @half_concat_read_copy_c(%[[Z]], %[[R0]])
// CHECK-NEXT:    func.call @half_concat_read_insert_c(%[[B]], %[[R0]])
// CHECK-NEXT:    func.call @half_concat_read_copy_c(%[[Z]], %[[R1]])
func.func @half_concat_read(%x: tensor<1x3x2x5xf32>) -> (tensor<1x7x2x5xf32>, tensor<1x7x2x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<1x3x2x5xf32>
  %a0 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%x : tensor<1x3x2x5xf32>) outs(%e3 : tensor<1x3x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x5xf32>
  %a = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%a0 : tensor<1x3x2x5xf32>) outs(%e3 : tensor<1x3x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x5xf32>
  %b0 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%x : tensor<1x3x2x5xf32>) outs(%e3 : tensor<1x3x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x5xf32>
  %b = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%b0 : tensor<1x3x2x5xf32>) outs(%e3 : tensor<1x3x2x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x5xf32>
  %e = tensor.empty() : tensor<1x7x2x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x2x5xf32>) -> tensor<1x7x2x5xf32>
  %c0 = tensor.insert_slice %a into %z[0, 0, 0, 0] [1, 3, 2, 5] [1, 1, 1, 1] : tensor<1x3x2x5xf32> into tensor<1x7x2x5xf32>
  %c = tensor.insert_slice %b into %c0[0, 3, 0, 0] [1, 3, 2, 5] [1, 1, 1, 1] : tensor<1x3x2x5xf32> into tensor<1x7x2x5xf32>
  func.return %c, %c0 : tensor<1x7x2x5xf32>, tensor<1x7x2x5xf32>
}

// Destination passing for a crop (ShuffleNet's half of a split joining the next concat):
// the crop's copy kernel stores channels [4, 7) of %x straight into the concat's window at
// channel 2 (the result of the function); no insert kernel for it.
// CHECK-LABEL: func.func @crop_into_concat_crop_k(
// CHECK-SAME:      %[[SRC:[^:]*]]: !layout.buffer<1x7x2x3xf32>, %[[DST:[^:]*]]: !layout.buffer<1x5x2x3xf32>)
// CHECK:         %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[S:.*]] = arith.addi %{{.*}}, %[[FOUR]] : index
// CHECK-NEXT:    %[[V:.*]] = layout.load %[[SRC]][%{{.*}}, %[[S]], %{{.*}}, %{{.*}}]
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[D:.*]] = arith.addi %{{.*}}, %[[TWO]] : index
// CHECK-NEXT:    layout.store %[[V]], %[[DST]][%{{.*}}, %[[D]], %{{.*}}, %{{.*}}]
// CHECK-LABEL: func.func @crop_into_concat(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<1x7x2x3xf32>, %[[Y:[^:]*]]: !layout.buffer<1x2x2x3xf32>, %[[R:[^:]*]]: !layout.buffer<1x5x2x3xf32>)
// CHECK:         func.call @crop_into_concat_crop_k(%[[X]], %[[R]])
// CHECK-NOT:     func.call @crop_into_concat_insert_c2(
func.func @crop_into_concat(%x: tensor<1x7x2x3xf32>, %y: tensor<1x2x2x3xf32>) -> tensor<1x5x2x3xf32> {
  %e2 = tensor.empty() : tensor<1x2x2x3xf32>
  %a = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%y : tensor<1x2x2x3xf32>) outs(%e2 : tensor<1x2x2x3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x3xf32>
  %k = layout.crop %x {start = array<i64: 0, 4, 0, 0>, sizes = array<i64: 1, 3, 2, 3>} : tensor<1x7x2x3xf32> -> tensor<1x3x2x3xf32>
  %e = tensor.empty() : tensor<1x5x2x3xf32>
  %c1 = tensor.insert_slice %a into %e[0, 0, 0, 0] [1, 2, 2, 3] [1, 1, 1, 1] : tensor<1x2x2x3xf32> into tensor<1x5x2x3xf32>
  %c2 = tensor.insert_slice %k into %c1[0, 2, 0, 0] [1, 3, 2, 3] [1, 1, 1, 1] : tensor<1x3x2x3xf32> into tensor<1x5x2x3xf32>
  func.return %c2 : tensor<1x5x2x3xf32>
}
