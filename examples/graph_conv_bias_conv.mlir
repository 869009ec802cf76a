// The running example of the Relax layout-transformation design: conv -> add(bias) -> conv,
// with both convolutions frozen in NCHW4c / OIHW4i4o (`layout.frozen`) and layout rewrites
// on their edges. `flow-layout-rewrites` moves the NCHW -> NCHW4c rewrite after the add to
// the add's operands; `fold-layout-rewrites` then cancels it against the NCHW4c -> NCHW
// rewrite of the first conv (their composition is proven the identity) and folds it into the
// bias constant. Only the rewrites on the graph boundary remain:
//
//   physlayout-opt examples/graph_conv_bias_conv.mlir -p flow-layout-rewrites,fold-layout-rewrites
//
// @conv_bias_conv_padded is the same graph with 6 channels: the NCHW4c tensors are padded
// (with 0.0), the rewrite back to NCHW crops the padding away with the promise
// `cropped_value = 0.0` (the frozen conv computes 0 there from the zero-padded filter), and
// the padded rewrite flows through the add because add(0.0, 0.0) == 0.0.

func.func @conv_bias_conv(%x: tensor<1x8x6x6xf32>, %f1: tensor<8x8x3x3xf32>, %f2: tensor<8x8x3x3xf32>) -> tensor<1x8x2x2xf32> {
  %xt = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x8x6x6xf32> -> tensor<1x2x6x6x4xf32>
  %f1t = layout.transform %f1 {index_map = #layout.index_map<(o, i, kh, kw) -> (o floordiv 4, i floordiv 4, kh, kw, i mod 4, o mod 4)>} : tensor<8x8x3x3xf32> -> tensor<2x2x3x3x4x4xf32>
  %zero1 = arith.constant dense<0.0> : tensor<1x2x4x4x4xf32>
  %c1 = linalg.generic {indexing_maps = [
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (n, ic, oh + kh, ow + kw, ib)>,
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (oc, ic, kh, kw, ib, ob)>,
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (n, oc, oh, ow, ob)>],
    iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%xt, %f1t : tensor<1x2x6x6x4xf32>, tensor<2x2x3x3x4x4xf32>) outs(%zero1 : tensor<1x2x4x4x4xf32>) attrs = {layout.frozen} {
  ^bb0(%xv: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %xv, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4x4xf32>
  %r = layout.transform %c1 {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x4x4x4xf32> -> tensor<1x8x4x4xf32>
  %bias = arith.constant dense<[[[-0.3523]], [[-0.6983]], [[0.3019]], [[-0.8551]], [[0.0718]], [[-0.2686]], [[-0.8840]], [[0.0149]]]> : tensor<8x1x1xf32>
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %a = linalg.generic {indexing_maps = [
      affine_map<(n, c, h, w) -> (n, c, h, w)>,
      affine_map<(n, c, h, w) -> (c, 0, 0)>,
      affine_map<(n, c, h, w) -> (n, c, h, w)>],
    iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r, %bias : tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%xv: f32, %bv: f32, %ov: f32):
    %s = arith.addf %xv, %bv : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4x4xf32>
  %at = layout.transform %a {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x8x4x4xf32> -> tensor<1x2x4x4x4xf32>
  %f2t = layout.transform %f2 {index_map = #layout.index_map<(o, i, kh, kw) -> (o floordiv 4, i floordiv 4, kh, kw, i mod 4, o mod 4)>} : tensor<8x8x3x3xf32> -> tensor<2x2x3x3x4x4xf32>
  %zero2 = arith.constant dense<0.0> : tensor<1x2x2x2x4xf32>
  %c2 = linalg.generic {indexing_maps = [
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (n, ic, oh + kh, ow + kw, ib)>,
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (oc, ic, kh, kw, ib, ob)>,
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (n, oc, oh, ow, ob)>],
    iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%at, %f2t : tensor<1x2x4x4x4xf32>, tensor<2x2x3x3x4x4xf32>) outs(%zero2 : tensor<1x2x2x2x4xf32>) attrs = {layout.frozen} {
  ^bb0(%xv: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %xv, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x2x2x2x4xf32>
  %out = layout.transform %c2 {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x2x2x4xf32> -> tensor<1x8x2x2xf32>
  func.return %out : tensor<1x8x2x2xf32>
}

func.func @conv_bias_conv_padded(%x: tensor<1x6x6x6xf32>, %f1: tensor<6x6x3x3xf32>, %f2: tensor<6x6x3x3xf32>) -> tensor<1x6x2x2xf32> {
  %xt = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x6x6x6xf32> -> tensor<1x2x6x6x4xf32>
  %f1t = layout.transform %f1 {index_map = #layout.index_map<(o, i, kh, kw) -> (o floordiv 4, i floordiv 4, kh, kw, i mod 4, o mod 4)>, pad_value = 0.0 : f32} : tensor<6x6x3x3xf32> -> tensor<2x2x3x3x4x4xf32>
  %zero1 = arith.constant dense<0.0> : tensor<1x2x4x4x4xf32>
  %c1 = linalg.generic {indexing_maps = [
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (n, ic, oh + kh, ow + kw, ib)>,
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (oc, ic, kh, kw, ib, ob)>,
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (n, oc, oh, ow, ob)>],
    iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%xt, %f1t : tensor<1x2x6x6x4xf32>, tensor<2x2x3x3x4x4xf32>) outs(%zero1 : tensor<1x2x4x4x4xf32>) attrs = {layout.frozen} {
  ^bb0(%xv: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %xv, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4x4xf32>
  %r8 = layout.transform %c1 {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x4x4x4xf32> -> tensor<1x8x4x4xf32>
  %r = layout.crop %r8 {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 6, 4, 4>, cropped_value = 0.0 : f32} : tensor<1x8x4x4xf32> -> tensor<1x6x4x4xf32>
  %bias = arith.constant dense<[[[-0.9250]], [[-0.1327]], [[-0.8603]], [[-0.8186]], [[-0.1510]], [[0.6537]]]> : tensor<6x1x1xf32>
  %e = tensor.empty() : tensor<1x6x4x4xf32>
  %a = linalg.generic {indexing_maps = [
      affine_map<(n, c, h, w) -> (n, c, h, w)>,
      affine_map<(n, c, h, w) -> (c, 0, 0)>,
      affine_map<(n, c, h, w) -> (n, c, h, w)>],
    iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r, %bias : tensor<1x6x4x4xf32>, tensor<6x1x1xf32>) outs(%e : tensor<1x6x4x4xf32>) {
  ^bb0(%xv: f32, %bv: f32, %ov: f32):
    %s = arith.addf %xv, %bv : f32
    linalg.yield %s : f32
  } -> tensor<1x6x4x4xf32>
  %at = layout.transform %a {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x6x4x4xf32> -> tensor<1x2x4x4x4xf32>
  %f2t = layout.transform %f2 {index_map = #layout.index_map<(o, i, kh, kw) -> (o floordiv 4, i floordiv 4, kh, kw, i mod 4, o mod 4)>, pad_value = 0.0 : f32} : tensor<6x6x3x3xf32> -> tensor<2x2x3x3x4x4xf32>
  %zero2 = arith.constant dense<0.0> : tensor<1x2x2x2x4xf32>
  %c2 = linalg.generic {indexing_maps = [
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (n, ic, oh + kh, ow + kw, ib)>,
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (oc, ic, kh, kw, ib, ob)>,
      affine_map<(n, oc, oh, ow, ob, ic, kh, kw, ib) -> (n, oc, oh, ow, ob)>],
    iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%at, %f2t : tensor<1x2x4x4x4xf32>, tensor<2x2x3x3x4x4xf32>) outs(%zero2 : tensor<1x2x2x2x4xf32>) attrs = {layout.frozen} {
  ^bb0(%xv: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %xv, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x2x2x2x4xf32>
  %o8 = layout.transform %c2 {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x2x2x4xf32> -> tensor<1x8x2x2xf32>
  %out = layout.crop %o8 {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 6, 2, 2>, cropped_value = 0.0 : f32} : tensor<1x8x2x2xf32> -> tensor<1x6x2x2xf32>
  func.return %out : tensor<1x6x2x2xf32>
}
