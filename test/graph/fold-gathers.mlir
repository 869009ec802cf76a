// fold-layout-rewrites reads a gather through the layout it reads: `tensor.extract T(x)[i]`
// becomes `tensor.extract x[M^-1(i)]` when T pads nothing (M^-1 proven by isl on the box of
// x); T goes when nothing else reads it. test/python/test_gathers.py evaluates both sides.
// RUN: xdsl-opt %s -p fold-layout-rewrites | filecheck %s
// RUN: xdsl-opt %s -p fold-layout-rewrites,fold-layout-rewrites | filecheck %s

#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// The nearest upsample of fpn_tiny reading the NCHW tensor convert-layout made back from
// NCHW4c: it reads the NCHW4c tensor at (n, c floordiv 4, h, w, c mod 4) instead, and the
// transform back to NCHW is gone.
// CHECK-LABEL: func.func @nearest_through_nchw4c
// CHECK-SAME:    (%[[S:.*]]: tensor<1x2x2x2x4xf32>)
// CHECK-NOT:     layout.transform
// CHECK:           %[[C:.*]] = linalg.index 1 : index
// CHECK:           %[[C4:.*]] = arith.divsi %[[C]], %{{.*}} : index
// CHECK-NEXT:      %[[L:.*]] = arith.remsi %[[C]], %{{.*}} : index
// CHECK-NEXT:      tensor.extract %[[S]][%{{.*}}, %[[C4]], %{{.*}}, %{{.*}}, %[[L]]] : tensor<1x2x2x2x4xf32>
func.func @nearest_through_nchw4c(%s: tensor<1x2x2x2x4xf32>) -> tensor<1x8x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_3 = arith.constant 2.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_4 = arith.constant 1.000000e+00 : f32
  %61 = layout.transform %s {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x2x2x4xf32> -> tensor<1x8x2x2xf32>
  %36 = tensor.empty() : tensor<1x8x4x4xf32>
  %63 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%36 : tensor<1x8x4x4xf32>) {
  ^bb0(%out: f32):
    %78 = linalg.index 1 : index
    %79 = linalg.index 2 : index
    %80 = linalg.index 3 : index
    %81 = arith.index_cast %79 : index to i64
    %82 = arith.sitofp %81 : i64 to f32
    %83 = arith.divf %82, %cst_3 : f32
    %84 = math.floor %83 : f32
    %85 = arith.maximumf %84, %cst : f32
    %86 = arith.minimumf %85, %cst_4 : f32
    %87 = arith.fptosi %86 : f32 to i64
    %88 = arith.index_cast %87 : i64 to index
    %89 = arith.index_cast %80 : index to i64
    %90 = arith.sitofp %89 : i64 to f32
    %91 = arith.divf %90, %cst_3 : f32
    %92 = math.floor %91 : f32
    %93 = arith.maximumf %92, %cst : f32
    %94 = arith.minimumf %93, %cst_4 : f32
    %95 = arith.fptosi %94 : f32 to i64
    %96 = arith.index_cast %95 : i64 to index
    %extracted = tensor.extract %61[%c0, %78, %88, %96] : tensor<1x8x2x2xf32>
    linalg.yield %extracted : f32
  } -> tensor<1x8x4x4xf32>
  return %63 : tensor<1x8x4x4xf32>
}

// A transform that pads (3 channels into one texel): the padding lane holds the pad value,
// not an element of x, so the gather keeps reading the transform's result.
// CHECK-LABEL: func.func @padded_stays
// CHECK:         %[[T:.*]] = layout.transform
// CHECK:           tensor.extract %[[T]]
func.func @padded_stays(%x: tensor<1x3x2x2xf32>) -> tensor<1x1x2x2x4xf32> {
  %t = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<1x3x2x2xf32> -> tensor<1x1x2x2x4xf32>
  %e = tensor.empty() : tensor<1x1x2x2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x1x2x2x4xf32>) {
  ^bb0(%out: f32):
    %a = linalg.index 0 : index
    %b = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %l = linalg.index 4 : index
    %v = tensor.extract %t[%a, %b, %w, %h, %l] : tensor<1x1x2x2x4xf32>
    linalg.yield %v : f32
  } -> tensor<1x1x2x2x4xf32>
  return %r : tensor<1x1x2x2x4xf32>
}
