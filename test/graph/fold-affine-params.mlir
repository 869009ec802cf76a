// fold-affine-params: a chain of elementwise add/sub/mul steps by parameters becomes one
// multiply-add x * A + B, with A and B computed from the parameters alone (a batch norm in
// inference: four per-channel operands become two).
// RUN: xdsl-opt %s -p fold-affine-params | filecheck %s
// RUN: xdsl-opt %s -p fold-affine-params,fold-affine-params | filecheck %s
// With only %m a parameter, no chain of @bn has all its operands computed from parameters.
// RUN: xdsl-opt %s -p 'fold-affine-params{params=m}' | filecheck %s --check-prefix=ONLYM

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch4 = affine_map<(n, c, h, w) -> (c, 0, 0)>
#par4 = ["parallel", "parallel", "parallel", "parallel"]

// torch-mlir's batch norm: (x - mean) * (1 / sqrt(var + eps)) * gamma + beta.
// CHECK-LABEL: func.func @bn(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x3x2x2xf32>, %[[M:[^:]*]]: tensor<3x1x1xf32>, %[[R:[^:]*]]: tensor<3x1x1xf32>, %[[G:[^:]*]]: tensor<3x1x1xf32>, %[[B:[^:]*]]: tensor<3x1x1xf32>)
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%[[R]], %[[G]] : tensor<3x1x1xf32>, tensor<3x1x1xf32>)
// CHECK-NEXT:    ^{{.*}}(%[[R1:.*]]: f32, %[[G1:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[RG:.*]] = arith.mulf %[[R1]], %[[G1]] : f32
// CHECK-NEXT:      linalg.yield %[[RG]] : f32
// CHECK:         %[[BB:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[R]], %[[G]], %[[B]] : {{.*}})
// CHECK-NEXT:    ^{{.*}}(%[[M2:.*]]: f32, %[[R2:.*]]: f32, %[[G2:.*]]: f32, %[[B2:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[NM:.*]] = arith.negf %[[M2]] : f32
// CHECK-NEXT:      %[[NMR:.*]] = arith.mulf %[[NM]], %[[R2]] : f32
// CHECK-NEXT:      %[[NMRG:.*]] = arith.mulf %[[NMR]], %[[G2]] : f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[NMRG]], %[[B2]] : f32
// CHECK-NEXT:      linalg.yield %[[SUM]] : f32
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}} ins(%[[X]], %[[A]], %[[BB]] :
// CHECK-NEXT:    ^{{.*}}(%[[X3:.*]]: f32, %[[A3:.*]]: f32, %[[B3:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[XA:.*]] = arith.mulf %[[X3]], %[[A3]] : f32
// CHECK-NEXT:      %[[XAB:.*]] = arith.addf %[[XA]], %[[B3]] : f32
// CHECK-NEXT:      linalg.yield %[[XAB]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         func.return %[[Y]]
// ONLYM-LABEL: func.func @bn(
// ONLYM-COUNT-4: arith.{{subf|mulf|mulf|addf}}
// ONLYM-NOT:     arith.negf
func.func @bn(%x: tensor<1x3x2x2xf32>, %m: tensor<3x1x1xf32>, %r: tensor<3x1x1xf32>, %g: tensor<3x1x1xf32>, %b: tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32> {
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%x, %m : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.subf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%0, %r : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %2 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%1, %g : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %3 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%2, %b : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  func.return %3 : tensor<1x3x2x2xf32>
}

// The parameter first, in the operands (q * x) and in the body (p - y): p - q * x is
// x * A + B with A = -q and B = p.
// CHECK-LABEL: func.func @reversed(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x3x2x2xf32>, %[[P:[^:]*]]: tensor<3x1x1xf32>, %[[Q:[^:]*]]: tensor<3x1x1xf32>)
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<3x1x1xf32>)
// CHECK-NEXT:    ^{{.*}}(%[[Q1:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[NQ:.*]] = arith.negf %[[Q1]] : f32
// CHECK-NEXT:      linalg.yield %[[NQ]] : f32
// CHECK-NOT:     linalg.generic {{.*}} ins(%[[P]]
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[A]], %[[P]] :
func.func @reversed(%x: tensor<1x3x2x2xf32>, %p: tensor<3x1x1xf32>, %q: tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32> {
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#ch4, #id4, #id4], iterator_types = #par4} ins(%q, %x : tensor<3x1x1xf32>, tensor<1x3x2x2xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%v: f32, %u: f32, %o: f32):
    %s = arith.mulf %v, %u : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%0, %p : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.subf %v, %u : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  func.return %1 : tensor<1x3x2x2xf32>
}

// Refused: the first step's result has a second reader (it is needed as it is), so only
// the two steps after it fold; a step by an activation (%x, the input) is no affine step;
// a step by a per-pixel operand and one by a per-channel operand are no chain.
// CHECK-LABEL: func.func @refused(
// CHECK:         %[[S0:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>)
// CHECK:           arith.subf
// CHECK:         %[[F:.*]] = linalg.generic {{.*}} ins(%[[S0]], %{{.*}}, %{{.*}} : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>, tensor<3x1x1xf32>)
// CHECK:         %[[ACT:.*]] = linalg.generic {{.*}} ins(%[[F]], %{{.*}} : tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>)
// CHECK-NEXT:    ^{{.*}}
// CHECK-NEXT:      arith.mulf
// CHECK:         %[[PIX:.*]] = linalg.generic {{.*}} ins(%[[ACT]], %{{.*}} : tensor<1x3x2x2xf32>, tensor<2x2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[PIX]], %{{.*}} : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>)
// CHECK:         func.return
func.func @refused(%x: tensor<1x3x2x2xf32>, %m: tensor<3x1x1xf32>, %r: tensor<3x1x1xf32>, %b: tensor<3x1x1xf32>, %pix: tensor<2x2xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>) {
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%x, %m : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.subf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%0, %r : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %2 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%1, %b : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %3 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = #par4} ins(%2, %x : tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %4 = linalg.generic {indexing_maps = [#id4, affine_map<(n, c, h, w) -> (h, w)>, #id4], iterator_types = #par4} ins(%3, %pix : tensor<1x3x2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %5 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%4, %r : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  func.return %5, %0 : tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>
}

// Refused: operands that are constants alone (A and B would be computed on every call),
// and a single step (nothing to fold).
// CHECK-LABEL: func.func @constants_and_single(
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @constants_and_single(%x: tensor<1x3x2x2xf32>, %r: tensor<3x1x1xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>) {
  %c = arith.constant dense<[[[1.0]], [[2.0]], [[3.0]]]> : tensor<3x1x1xf32>
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%x, %c : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.subf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%0, %c : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %2 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%x, %r : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  func.return %1, %2 : tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>
}

// The scale of a folded batch norm after a convolution moves into its weights (they are
// parameters): conv(x, W) * A + B = conv(x, W * A) + B, A along the output channel, which
// is the weights' dimension 0 (named conv) or the one the output channel indexes (the
// generic depthwise conv normalize-graph makes).
// CHECK-LABEL: func.func @conv_bn(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x2x4x4xf32>, %[[W:[^:]*]]: tensor<3x2x3x3xf32>, %[[M:[^:]*]]: tensor<3x1x1xf32>, %[[R:[^:]*]]: tensor<3x1x1xf32>, %[[B:[^:]*]]: tensor<3x1x1xf32>)
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK:         %[[BB:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[R]], %[[B]] :
// CHECK:         %[[WS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}} ins(%[[W]], %[[R]] :
// CHECK-NEXT:    ^{{.*}}(%[[W1:.*]]: f32, %[[R1:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[W1]], %[[R1]] : f32
// CHECK-NEXT:      linalg.yield %[[P]] : f32
// CHECK:         %[[C:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X]], %[[WS]] : {{.*}}) outs(%[[INIT]] :
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[BB]] :
// CHECK-NEXT:    ^{{.*}}(%[[C1:.*]]: f32, %[[B1:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[C1]], %[[B1]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         func.return %[[Y]]
func.func @conv_bn(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %m: tensor<3x1x1xf32>, %r: tensor<3x1x1xf32>, %b: tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%c, %m : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.subf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%0, %r : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %2 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%1, %b : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  func.return %2 : tensor<1x3x2x2xf32>
}

// A depthwise conv (as normalize-graph writes it): the weight's dimension 0 is indexed by
// the output channel (d3 of its loops); a scale alone (no shift) leaves the conv itself.
// CHECK-LABEL: func.func @depthwise_scale(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x3x4x4xf32>, %[[W:[^:]*]]: tensor<3x3x3xf32>, %[[R:[^:]*]]: tensor<3x1x1xf32>, %[[G:[^:]*]]: tensor<3x1x1xf32>)
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%[[R]], %[[G]] :
// CHECK:         %[[WS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], {{.*}} ins(%[[W]], %[[A]] :
// CHECK:         %[[C:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[WS]] :
// CHECK:         func.return %[[C]]
func.func @depthwise_scale(%x: tensor<1x3x4x4xf32>, %w: tensor<3x3x3xf32>, %r: tensor<3x1x1xf32>, %g: tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<3x3x3xf32>) outs(%init : tensor<1x3x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%c, %r : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%0, %g : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  func.return %1 : tensor<1x3x2x2xf32>
}

// Refused: an init that is not zero (1 * A would be added), a conv result read twice, a
// scale per pixel (not along the weights), weights that are the input (an activation).
// CHECK-LABEL: func.func @conv_refused(
// CHECK-COUNT-4: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{[a-z0-9_]*}}, %{{[a-z]+}} :
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         func.return
func.func @conv_refused(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>, %r: tensor<3x1x1xf32>, %g: tensor<3x1x1xf32>, %pix: tensor<2x2xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %init1 = linalg.fill ins(%one : f32) outs(%e : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) outs(%init1 : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %s1 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%c1, %r : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %s2 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%c2, %g : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %c3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %s3 = linalg.generic {indexing_maps = [#id4, affine_map<(n, c, h, w) -> (h, w)>, #id4], iterator_types = #par4} ins(%c3, %pix : tensor<1x3x2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  %xw = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 3, 3] [1, 1, 1, 1] : tensor<1x2x4x4xf32> to tensor<1x2x3x3xf32>
  %wx = tensor.concat dim(0) %xw, %xw, %xw : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<3x2x3x3xf32>
  %c4 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %wx : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %s4 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%c4, %r : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  func.return %s1, %s2, %c2, %s3, %s4 : tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>
}

// A scale of a value made by an op with one operand (a reshape): no weights to fold into.
// CHECK-LABEL: func.func @scale_after_reshape(
// CHECK:         %[[R:.*]] = tensor.expand_shape
// CHECK:         linalg.generic {{.*}} ins(%[[R]], %{{.*}} : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>)
func.func @scale_after_reshape(%x: tensor<1x3x4xf32>, %r: tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32> {
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %0 = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [1, 3, 2, 2] : tensor<1x3x4xf32> into tensor<1x3x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%0, %r : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.mulf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  func.return %1 : tensor<1x3x2x2xf32>
}
