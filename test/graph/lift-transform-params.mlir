// lift-transform-params: the work on parameters (a weight's layout transform, batch-norm
// statistics) moves to @main_prepare; @main takes the prepared values after its input.
// RUN: xdsl-opt %s -p lift-transform-params | filecheck %s
// RUN: xdsl-opt %s -p lift-transform-params,lift-transform-params | filecheck %s
// RUN: xdsl-opt %s -p 'lift-transform-params{params=w}' | filecheck %s --check-prefix=ONLYW
// RUN: xdsl-opt %s -p 'lift-transform-params{params=nope}' --verify-diagnostics | filecheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @main_prepare(%w: tensor<8x4x3x3xf32>, %v: tensor<8x1x1xf32>) -> (tensor<2x4x3x3x4xf32>, tensor<8x1x1xf32>) {
// CHECK-NEXT:    %{{.*}} = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[EPS:.*]] = arith.constant 1.000000e-05 : f32
// CHECK-NEXT:    %[[WT:.*]] = layout.transform %w
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<8x1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = linalg.generic {{.*}} ins(%v : tensor<8x1x1xf32>) outs(%[[E]] : tensor<8x1x1xf32>)
// A check of flags computed from parameters (torch-mlir's assert on the statistics) fails on
// every call or on none: it runs once, in @main_prepare, and its flags are no prepared value.
// CHECK:         %[[FLAGS:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<8x1x1xf32>)
// CHECK:         layout.check %[[FLAGS]], "unimplemented: tensor with zero element"
// CHECK:         func.return %[[WT]], %[[S]] : tensor<2x4x3x3x4xf32>, tensor<8x1x1xf32>
// CHECK-LABEL: func.func @main(%x: tensor<1x4x6x6xf32>, %{{.*}}: tensor<2x4x3x3x4xf32>, %{{.*}}: tensor<8x1x1xf32>) -> tensor<1x2x4x4x4xf32> {
// CHECK-NOT:     layout.transform %w
// CHECK-NOT:     math.sqrt
// CHECK-NOT:     layout.check
// CHECK:         linalg.fill
// CHECK:         func.return

// ONLYW-LABEL: func.func @main_prepare(%w: tensor<8x4x3x3xf32>) -> tensor<2x4x3x3x4xf32> {
// ONLYW-LABEL: func.func @main(%x: tensor<1x4x6x6xf32>, %v: tensor<8x1x1xf32>, %{{.*}}: tensor<2x4x3x3x4xf32>)
// ONLYW:         math.sqrt
// ONLYW:         layout.check

// BAD: lift-transform-params: @main has no argument %nope (arguments: %x, %w, %v)

func.func @main(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %v: tensor<8x1x1xf32>) -> tensor<1x2x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-05 : f32
  %wt = layout.transform %w {index_map = #layout.index_map<(o, i, h, w) -> (o floordiv 4, i, h, w, o mod 4)>} : tensor<8x4x3x3xf32> -> tensor<2x4x3x3x4xf32>
  %ev = tensor.empty() : tensor<8x1x1xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(c, i, j) -> (c, i, j)>, affine_map<(c, i, j) -> (c, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v : tensor<8x1x1xf32>) outs(%ev : tensor<8x1x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.addf %a, %eps : f32
    %q = math.sqrt %p : f32
    linalg.yield %q : f32
  } -> tensor<8x1x1xf32>
  %ef = tensor.empty() : tensor<8x1x1xi8>
  %flags = linalg.generic {indexing_maps = [affine_map<(c, i, j) -> (c, i, j)>, affine_map<(c, i, j) -> (c, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x1x1xf32>) outs(%ef : tensor<8x1x1xi8>) {
  ^bb0(%a: f32, %o: i8):
    %ne = arith.cmpf one, %a, %zero : f32
    %f = arith.extui %ne : i1 to i8
    linalg.yield %f : i8
  } -> tensor<8x1x1xi8>
  layout.check %flags, "unimplemented: tensor with zero element" : tensor<8x1x1xi8>
  %xt = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x4x6x6xf32> -> tensor<1x1x6x6x4xf32>
  %e = tensor.empty() : tensor<1x2x4x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  %c = linalg.generic {indexing_maps = [
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw) -> (n, ic floordiv 4, oh + kh, ow + kw, ic mod 4)>,
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw) -> (oc, ic, kh, kw, ob)>,
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw) -> (n, oc, oh, ow, ob)>],
    iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%xt, %wt : tensor<1x1x6x6x4xf32>, tensor<2x4x3x3x4xf32>) outs(%init : tensor<1x2x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4x4xf32>
  %sv = linalg.generic {indexing_maps = [
      affine_map<(n, c, h, w, b) -> (n, c, h, w, b)>,
      affine_map<(n, c, h, w, b) -> (c * 4 + b, 0, 0)>,
      affine_map<(n, c, h, w, b) -> (n, c, h, w, b)>],
    iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %s : tensor<1x2x4x4x4xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x2x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4x4xf32>
  func.return %sv : tensor<1x2x4x4x4xf32>
}
