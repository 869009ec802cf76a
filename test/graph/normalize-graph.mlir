// normalize-graph on IR exactly as torch-mlir prints it: broadcast, concat, relu as
// cmpf ugt + select, and a batch norm's cf.assert in a generic body.
// test/python/test_frontend_ops.py runs these functions before and after the pass.
// RUN: xdsl-opt %s -p normalize-graph | filecheck %s

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id1 = affine_map<(d0) -> (d0)>

// A bias broadcast over N, H, W: the generic reads the bias at the channel only.
// CHECK-LABEL: func.func @bias
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x3x2x2xf32>
// CHECK-NEXT:    %{{.*}} = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<3xf32>) outs(%[[E]] : tensor<1x3x2x2xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
// CHECK-NOT:     linalg.broadcast
func.func @bias(%b: tensor<3xf32>) -> tensor<1x3x2x2xf32> {
  %0 = tensor.empty() : tensor<1x3x2x2xf32>
  %broadcasted = linalg.broadcast ins(%b : tensor<3xf32>) outs(%0 : tensor<1x3x2x2xf32>) dimensions = [0, 2, 3]
  func.return %broadcasted : tensor<1x3x2x2xf32>
}

// Unaligned channel counts (3 + 5 + 1): one insert_slice per operand at its offset.
// CHECK-LABEL: func.func @concat
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x9x2x2xf32>
// CHECK-NEXT:    %[[R0:.*]] = tensor.insert_slice %a into %[[E]][0, 0, 0, 0] [1, 3, 2, 2] [1, 1, 1, 1] : tensor<1x3x2x2xf32> into tensor<1x9x2x2xf32>
// CHECK-NEXT:    %[[R1:.*]] = tensor.insert_slice %b into %[[R0]][0, 3, 0, 0] [1, 5, 2, 2] [1, 1, 1, 1] : tensor<1x5x2x2xf32> into tensor<1x9x2x2xf32>
// CHECK-NEXT:    %[[R2:.*]] = tensor.insert_slice %c into %[[R1]][0, 8, 0, 0] [1, 1, 2, 2] [1, 1, 1, 1] : tensor<1x1x2x2xf32> into tensor<1x9x2x2xf32>
// CHECK-NEXT:    func.return %[[R2]]
func.func @concat(%a: tensor<1x3x2x2xf32>, %b: tensor<1x5x2x2xf32>, %c: tensor<1x1x2x2xf32>) -> tensor<1x9x2x2xf32> {
  %concat = tensor.concat dim(1) %a, %b, %c : (tensor<1x3x2x2xf32>, tensor<1x5x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x9x2x2xf32>
  func.return %concat : tensor<1x9x2x2xf32>
}

// torch-mlir's relu: cmpf ugt + select against +0.0 becomes maximumf (bit-exact).
// CHECK-LABEL: func.func @relu
// CHECK:         ^{{.*}}(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[IN]], %cst : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
func.func @relu(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x4x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x2x2xf32>) outs(%0 : tensor<1x4x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.cmpf ugt, %in, %cst : f32
    %3 = arith.select %2, %in, %cst : f32
    linalg.yield %3 : f32
  } -> tensor<1x4x2x2xf32>
  func.return %1 : tensor<1x4x2x2xf32>
}

// Against -0.0 the maximum would differ (maximumf(+0.0, -0.0) = +0.0, the select gives
// -0.0): left alone. So is an ordered compare (ogt(NaN, c) is false).
// CHECK-LABEL: func.func @relu_negative_zero
// CHECK:         arith.cmpf ugt
// CHECK-NEXT:    arith.select
// CHECK:         arith.cmpf ogt
// CHECK-NEXT:    arith.select
// CHECK-NOT:     arith.maximumf
func.func @relu_negative_zero(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %cst = arith.constant -0.000000e+00 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.cmpf ugt, %in, %cst : f32
    %3 = arith.select %2, %in, %cst : f32
    linalg.yield %3 : f32
  } -> tensor<4xf32>
  %4 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.cmpf ogt, %in, %zero : f32
    %6 = arith.select %5, %in, %zero : f32
    linalg.yield %6 : f32
  } -> tensor<4xf32>
  func.return %1, %4 : tensor<4xf32>, tensor<4xf32>
}

// A batch norm's 1 / sqrt(var + eps) with its assert, as torch-mlir prints it (f64 eps):
// the assert leaves the body for a flags generic and a host-side layout.check.
// CHECK-LABEL: func.func @batch_norm_scale
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4xi8>
// CHECK-NEXT:    %[[FLAGS:.*]] = linalg.generic {{.*}} ins(%var : tensor<4xf32>) outs(%[[E]] : tensor<4xi8>) {
// CHECK-NEXT:    ^{{.*}}(%[[IN:.*]]: f32, %{{.*}}: i8):
// CHECK-NEXT:      %[[C:.*]] = arith.cmpf one, %[[IN]], %cst : f32
// CHECK-NEXT:      %[[F:.*]] = arith.extui %[[C]] : i1 to i8
// CHECK-NEXT:      linalg.yield %[[F]] : i8
// CHECK:         layout.check %[[FLAGS]], "unimplemented: tensor with zero element" : tensor<4xi8>
// CHECK-NEXT:    linalg.generic
// CHECK-NOT:     cf.assert
// CHECK:         arith.divf
func.func @batch_norm_scale(%var: tensor<4xf32>) -> tensor<4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%var : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.cmpf one, %in, %cst : f32
    cf.assert %2, "unimplemented: tensor with zero element"
    %3 = arith.divf %cst_0, %in : f32
    linalg.yield %3 : f32
  } -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// A statically true assert is erased (xDSL's AssertTrue), in a body or not.
// CHECK-LABEL: func.func @true_assert
// CHECK-NOT:     cf.assert
// CHECK-NOT:     layout.check
// CHECK:         func.return
func.func @true_assert(%x: tensor<4xf32>) -> tensor<4xf32> {
  %true = arith.constant true
  cf.assert %true, "never fails"
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    cf.assert %true, "never fails"
    linalg.yield %in : f32
  } -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// torch-mlir's mean over H and W with keepdim (a squeeze-excite block): the sum writes the
// constant 0 on the unit axes. They become parallel loops of extent 1 (d2, d3), before the
// reductions (d4, d5); the division after it is left alone.
// CHECK-LABEL: func.func @keepdim_mean
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x8x3x5xf32>)
// CHECK:         arith.divf
func.func @keepdim_mean(%x: tensor<1x8x3x5xf32>) -> tensor<1x8x1x1xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 1.500000e+01 : f32
  %0 = tensor.empty() : tensor<1x8x1x1xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x8x3x5xf32>) outs(%1 : tensor<1x8x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.addf %in, %out : f32
    linalg.yield %4 : f32
  } -> tensor<1x8x1x1xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<1x8x1x1xf32>) outs(%0 : tensor<1x8x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.divf %in, %cst_0 : f32
    linalg.yield %4 : f32
  } -> tensor<1x8x1x1xf32>
  func.return %3 : tensor<1x8x1x1xf32>
}

// torch-mlir's SiLU, as printed: sigmoid(x) in one generic, x * sigmoid(x) in the next. The
// multiply already reads %x where the sigmoid does: it computes the sigmoid in its body (no
// operand added), so silu(0) = 0 is one body a padded layout can be proven through.
// CHECK-LABEL: func.func @silu
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x6x1x1xf32>
// CHECK-NEXT:    %{{.*}} = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x6x1x1xf32>) outs(%[[E]] : tensor<1x6x1x1xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[IN]] : f32
// CHECK-NEXT:      %[[X:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT:      %[[D:.*]] = arith.addf %[[X]], %[[ONE]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[IN]], %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK-NEXT:    } -> tensor<1x6x1x1xf32>
// CHECK-NEXT:    func.return
func.func @silu(%x: tensor<1x6x1x1xf32>) -> tensor<1x6x1x1xf32> {
  %cst_0 = arith.constant 1.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x6x1x1xf32>
  %11 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x6x1x1xf32>) outs(%0 : tensor<1x6x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %666 = arith.negf %in : f32
    %667 = math.exp %666 : f32
    %668 = arith.addf %667, %cst_0 : f32
    %669 = arith.divf %cst_0, %668 : f32
    linalg.yield %669 : f32
  } -> tensor<1x6x1x1xf32>
  %12 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %11 : tensor<1x6x1x1xf32>, tensor<1x6x1x1xf32>) outs(%0 : tensor<1x6x1x1xf32>) {
  ^bb0(%in: f32, %in_264: f32, %out: f32):
    %666 = arith.mulf %in, %in_264 : f32
    linalg.yield %666 : f32
  } -> tensor<1x6x1x1xf32>
  func.return %12 : tensor<1x6x1x1xf32>
}

// Left alone: the sigmoid has a second user (it is needed whole); the multiply of
// @sigmoid_of_other reads %y, not the sigmoid's %x (inlining would add an operand); the
// multiply of @sigmoid_broadcast reads it per channel only (each sigmoid would be
// recomputed per pixel); the one of @sigmoid_transposed reads %x at another element than
// the sigmoid does.
// CHECK-LABEL: func.func @sigmoid_two_users
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @sigmoid_of_other
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @sigmoid_broadcast
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @sigmoid_transposed
// CHECK-COUNT-2: linalg.generic
// CHECK:         func.return
func.func @sigmoid_two_users(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %p = math.exp %n : f32
    %d = arith.addf %p, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%x, %s : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  func.return %m, %s : tensor<4xf32>, tensor<4xf32>
}
func.func @sigmoid_of_other(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %p = math.exp %n : f32
    %d = arith.addf %p, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%y, %s : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  func.return %m : tensor<4xf32>
}
func.func @sigmoid_broadcast(%x: tensor<1x3x1x1xf32>, %z: tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x3x1x1xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x3x1x1xf32>) outs(%e : tensor<1x3x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %p = math.exp %n : f32
    %d = arith.addf %p, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x3x1x1xf32>
  %e2 = tensor.empty() : tensor<1x3x2x2xf32>
  %m = linalg.generic {indexing_maps = [#id4, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%z, %s : tensor<1x3x2x2xf32>, tensor<1x3x1x1xf32>) outs(%e2 : tensor<1x3x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x2xf32>
  func.return %m : tensor<1x3x2x2xf32>
}
func.func @sigmoid_transposed(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<3x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %p = math.exp %n : f32
    %d = arith.addf %p, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<3x3xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<3x3xf32>
  func.return %m : tensor<3x3xf32>
}

// torch-mlir's relu6 on 5 channels: the clamp bounds are rank-0 splat tensor constants read
// at (); each becomes a scalar constant in the body and the tensors are erased.
// CHECK-LABEL: func.func @relu6_splat_bounds
// CHECK-NOT:     dense<
// CHECK:         %[[LOW:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}} ins(%x : tensor<1x5x3x1xf32>) outs(%{{.*}} : tensor<1x5x3x1xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %[[IN]], %[[ZERO]] : f32
// CHECK-NEXT:      %{{.*}} = arith.select %[[GT]], %[[IN]], %[[ZERO]] : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}} ins(%[[LOW]] : tensor<1x5x3x1xf32>)
// CHECK-NEXT:    ^{{.*}}(%[[IN2:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[SIX:.*]] = arith.constant 6.000000e+00 : f32
// CHECK-NEXT:      %{{.*}} = arith.cmpf olt, %[[SIX]], %[[IN2]] : f32
func.func @relu6_splat_bounds(%x: tensor<1x5x3x1xf32>) -> tensor<1x5x3x1xf32> {
  %six = arith.constant dense<6.000000e+00> : tensor<f32>
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %e = tensor.empty() : tensor<1x5x3x1xf32>
  %0 = linalg.generic {indexing_maps = [#id4, affine_map<(d0, d1, d2, d3) -> ()>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %zero : tensor<1x5x3x1xf32>, tensor<f32>) outs(%e : tensor<1x5x3x1xf32>) {
  ^bb0(%in: f32, %z: f32, %out: f32):
    %c = arith.cmpf ogt, %in, %z : f32
    %s = arith.select %c, %in, %z : f32
    linalg.yield %s : f32
  } -> tensor<1x5x3x1xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> ()>, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%six, %0 : tensor<f32>, tensor<1x5x3x1xf32>) outs(%e : tensor<1x5x3x1xf32>) {
  ^bb0(%b: f32, %in: f32, %out: f32):
    %c = arith.cmpf olt, %b, %in : f32
    %s = arith.select %c, %b, %in : f32
    linalg.yield %s : f32
  } -> tensor<1x5x3x1xf32>
  func.return %1 : tensor<1x5x3x1xf32>
}

// Not rewritten: a constant that is not a splat (per-channel bounds), and a splat read as
// the output's initial value (an accumulator start, fuse-elementwise's to absorb).
// CHECK-LABEL: func.func @non_splat_input_and_splat_init_stay
// CHECK:         %[[BOUNDS:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK:         %[[INIT:.*]] = arith.constant dense<5.000000e-01> : tensor<1x3x2x2xf32>
// CHECK:         linalg.generic {{.*}} ins(%x, %[[BOUNDS]] : tensor<1x3x2x2xf32>, tensor<3xf32>) outs(%[[INIT]] : tensor<1x3x2x2xf32>)
func.func @non_splat_input_and_splat_init_stay(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32> {
  %bounds = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %init = arith.constant dense<0.5> : tensor<1x3x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id4, affine_map<(d0, d1, d2, d3) -> (d1)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %bounds : tensor<1x3x2x2xf32>, tensor<3xf32>) outs(%init : tensor<1x3x2x2xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %m = arith.minimumf %in, %b : f32
    %a = arith.addf %m, %out : f32
    linalg.yield %a : f32
  } -> tensor<1x3x2x2xf32>
  func.return %0 : tensor<1x3x2x2xf32>
}

// math.fpowi with a constant exponent: the multiplies of upstream's binary exponentiation
// (13 = 0b1101: x * x^4 * x^8), 1 / x^2 for -2, the constant 1 for 0, x itself for 1.
// An exponent that is not a constant, or above 64 in magnitude, stays an fpowi.
// CHECK-LABEL: func.func @fpowi_constant_powers
// CHECK:         ^bb0(%in: f32, %k: i64, %out: f32):
// CHECK-NEXT:      %[[X2:.*]] = arith.mulf %in, %in : f32
// CHECK-NEXT:      %[[P3:.*]] = arith.mulf %in, %[[X2]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[Y2:.*]] = arith.mulf %in, %in : f32
// CHECK-NEXT:      %[[M2:.*]] = arith.divf %[[ONE]], %[[Y2]] : f32
// CHECK-NEXT:      %[[Z2:.*]] = arith.mulf %in, %in : f32
// CHECK-NEXT:      %[[Z4:.*]] = arith.mulf %[[Z2]], %[[Z2]] : f32
// CHECK-NEXT:      %[[Z5:.*]] = arith.mulf %in, %[[Z4]] : f32
// CHECK-NEXT:      %[[Z8:.*]] = arith.mulf %[[Z4]], %[[Z4]] : f32
// CHECK-NEXT:      %[[P13:.*]] = arith.mulf %[[Z5]], %[[Z8]] : f32
// CHECK-NEXT:      %[[P0:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[PK:.*]] = math.fpowi %in, %k : f32, i64
// CHECK-NEXT:      %[[P65:.*]] = math.fpowi %in, %c65 : f32, i64
// CHECK-NEXT:      %[[S1:.*]] = arith.addf %[[P3]], %[[M2]] : f32
// CHECK-NEXT:      %[[S2:.*]] = arith.addf %[[S1]], %[[P13]] : f32
// CHECK-NEXT:      %[[S3:.*]] = arith.addf %[[S2]], %[[P0]] : f32
// CHECK-NEXT:      %[[S4:.*]] = arith.addf %[[S3]], %in : f32
// CHECK-NEXT:      %[[S5:.*]] = arith.addf %[[S4]], %[[PK]] : f32
// CHECK-NEXT:      %[[S6:.*]] = arith.addf %[[S5]], %[[P65]] : f32
// CHECK-NEXT:      linalg.yield %[[S6]] : f32
func.func @fpowi_constant_powers(%x: tensor<2x3xf32>, %n: tensor<2x3xi64>) -> tensor<2x3xf32> {
  %c3 = arith.constant 3 : i64
  %cm2 = arith.constant -2 : i64
  %c13 = arith.constant 13 : i64
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c65 = arith.constant 65 : i64
  %e = tensor.empty() : tensor<2x3xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %n : tensor<2x3xf32>, tensor<2x3xi64>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %k: i64, %out: f32):
    %p3 = math.fpowi %in, %c3 : f32, i64
    %pm2 = math.fpowi %in, %cm2 : f32, i64
    %p13 = math.fpowi %in, %c13 : f32, i64
    %p0 = math.fpowi %in, %c0 : f32, i64
    %p1 = math.fpowi %in, %c1 : f32, i64
    %pk = math.fpowi %in, %k : f32, i64
    %p65 = math.fpowi %in, %c65 : f32, i64
    %s1 = arith.addf %p3, %pm2 : f32
    %s2 = arith.addf %s1, %p13 : f32
    %s3 = arith.addf %s2, %p0 : f32
    %s4 = arith.addf %s3, %p1 : f32
    %s5 = arith.addf %s4, %pk : f32
    %s6 = arith.addf %s5, %p65 : f32
    linalg.yield %s6 : f32
  } -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
