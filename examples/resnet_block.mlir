// A ResNet-style block shaped like torch-mlir's linalg-on-tensors export (what
// ../shared/models/*.mlir hold): named convolutions with a `linalg.fill` init, batch norms
// as chains of elementwise `linalg.generic`s with per-channel broadcast operands
// ((n, c, h, w) -> (c, 0, 0)), relus, and a residual add. The batch-norm statistics are
// parameters: `1 / sqrt(var^2 + eps)` (squared: random inputs may be negative) is computed
// from them on every call.
//
//   physlayout run examples/resnet_block.mlir --check
//   physlayout run examples/resnet_block.mlir --check --pipeline 'physlayout-adreno{fuse=false}'
//
// `fuse-elementwise` (in physlayout-adreno) makes conv1 + bn1 + relu one kernel and conv2 +
// bn2 + the residual add + relu another; `%r1` feeds conv2 and the add, so it is stored.

#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c, 0, 0)>
#p = affine_map<(c, i, j) -> (c, i, j)>
func.func @main(%x: tensor<1x8x10x10xf32>,
                %w1: tensor<8x8x3x3xf32>, %m1: tensor<8x1x1xf32>, %v1: tensor<8x1x1xf32>,
                %g1: tensor<8x1x1xf32>, %b1: tensor<8x1x1xf32>,
                %w2: tensor<8x8x1x1xf32>, %m2: tensor<8x1x1xf32>, %v2: tensor<8x1x1xf32>,
                %g2: tensor<8x1x1xf32>, %b2: tensor<8x1x1xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-05 : f32
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %ep = tensor.empty() : tensor<8x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w1 : tensor<1x8x10x10xf32>, tensor<8x8x3x3xf32>) outs(%init : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %s1 = linalg.generic {indexing_maps = [#p, #p], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v1 : tensor<8x1x1xf32>) outs(%ep : tensor<8x1x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %vv = arith.mulf %v, %v : f32
    %a = arith.addf %vv, %eps : f32
    %s = math.sqrt %a : f32
    %r = arith.divf %one, %s : f32
    linalg.yield %r : f32
  } -> tensor<8x1x1xf32>
  %n1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1, %m1 : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %n2 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%n1, %s1 : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %n3 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%n2, %g1 : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %n4 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%n3, %b1 : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%n4 : tensor<1x8x8x8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.cmpf ugt, %a, %zero : f32
    %r = arith.select %c, %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%r1, %w2 : tensor<1x8x8x8xf32>, tensor<8x8x1x1xf32>) outs(%init2 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %s2 = linalg.generic {indexing_maps = [#p, #p], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v2 : tensor<8x1x1xf32>) outs(%ep : tensor<8x1x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %vv = arith.mulf %v, %v : f32
    %a = arith.addf %vv, %eps : f32
    %s = math.sqrt %a : f32
    %r = arith.divf %one, %s : f32
    linalg.yield %r : f32
  } -> tensor<8x1x1xf32>
  %k1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c2, %m2 : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %k2 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k1, %s2 : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %k3 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k2, %g2 : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %k4 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k3, %b2 : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k4, %r1 : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %out = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum : tensor<1x8x8x8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.cmpf ugt, %a, %zero : f32
    %r = arith.select %c, %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  func.return %out : tensor<1x8x8x8xf32>
}
