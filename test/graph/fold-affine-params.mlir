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
