// fuse-elementwise recomputes a cheap producer in each of its readers (RecomputeInReaders)
// and lets a reduction compute a group without reductions it reads (InlineProducerIntoRoot
// over `collapsed`): torch-mlir's LayerNorm, whose f64 statistics read ``extf(x)`` twice and
// the centred square once. Refusals: a costly body, a reader that is not a generic or a
// group, a reduction. Extents are primes (rows of 3, 5 or 7 columns), so a wrong row or
// column index reads another element in bounds (test_fuse_recompute.py runs every function
// before and after, and after legalize-layout).
// RUN: xdsl-opt %s -p fuse-elementwise | filecheck %s
// RUN: xdsl-opt %s -p fuse-elementwise,fuse-elementwise | filecheck %s
// RUN: xdsl-opt %s -p 'fuse-elementwise{remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#par2 = ["parallel", "parallel"]
#red2 = ["parallel", "reduction"]
#id1 = affine_map<(i) -> (i)>

// RECOMPUTED: a negation read by two elementwise generics: each computes it from %x where
// it reads it (one op per element), and %a is never stored nor launched.
// CHECK-LABEL: func.func @cheap_two_readers
// CHECK-NEXT:    %{{.*}} = tensor.empty
// CHECK-NEXT:    %b = linalg.generic {{.*}} ins(%x : tensor<3x5xf32>)
// CHECK-NEXT:    ^{{.*}}(%[[U:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[U]] : f32
// CHECK-NEXT:      %{{.*}} = arith.addf %[[N]], %[[N]] : f32
// CHECK:         %c = linalg.generic {{.*}} ins(%x : tensor<3x5xf32>)
// CHECK-NEXT:    ^{{.*}}(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.negf %[[V]] : f32
// CHECK-NEXT:      %{{.*}} = arith.mulf %[[M]], %[[M]] : f32
// CHECK:         func.return %b, %c
func.func @cheap_two_readers(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %e = tensor.empty() : tensor<3x5xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%x : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%a : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%a : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.mulf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  func.return %b, %c : tensor<3x5xf32>, tensor<3x5xf32>
}

// RECOMPUTED: LayerNorm's statistics as torch-mlir prints them (var_mean in f64): %x64 =
// extf(x) is read by the mean's sum and by the centred difference; the difference and its
// square are one group, read by the variance's sum. The variance's sum computes the square
// (InlineProducerIntoRoot: sub and mul, per row element), then both sums compute extf: two
// kernels, the two reductions, where there were four.
// CHECK-LABEL: func.func @layernorm_f64_statistics
// CHECK:         %[[MEAN:.*]] = layout.fused ins(%x : tensor<3x5xf32>) -> tensor<3xf64> {
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK-NEXT:      ^{{.*}}(%[[A:.*]]: f32, %[[ACC:.*]]: f64):
// CHECK-NEXT:        %[[W:.*]] = arith.extf %[[A]] : f32 to f64
// CHECK-NEXT:        arith.addf %[[W]], %[[ACC]] : f64
// CHECK:           arith.divf
// CHECK:         %{{.*}} = layout.fused ins(%x, %[[MEAN]] : tensor<3x5xf32>, tensor<3xf64>) -> tensor<3xf64> {
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK-NEXT:      ^{{.*}}(%[[B:.*]]: f32, %[[M:.*]]: f64, %[[ACC2:.*]]: f64):
// CHECK-NEXT:        %[[W2:.*]] = arith.extf %[[B]] : f32 to f64
// CHECK-NEXT:        %[[D:.*]] = arith.subf %[[W2]], %[[M]] : f64
// CHECK-NEXT:        %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f64
// CHECK-NEXT:        arith.addf %[[SQ]], %[[ACC2]] : f64
// CHECK:           arith.divf
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
func.func @layernorm_f64_statistics(%x: tensor<3x5xf32>) -> tensor<3xf64> {
  %zero = arith.constant 0.0 : f64
  %n = arith.constant 5.0 : f64
  %e64 = tensor.empty() : tensor<3x5xf64>
  %x64 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%x : tensor<3x5xf32>) outs(%e64 : tensor<3x5xf64>) {
  ^bb0(%u: f32, %o: f64):
    %r = arith.extf %u : f32 to f64
    linalg.yield %r : f64
  } -> tensor<3x5xf64>
  %er = tensor.empty() : tensor<3xf64>
  %f = linalg.fill ins(%zero : f64) outs(%er : tensor<3xf64>) -> tensor<3xf64>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = #red2} ins(%x64 : tensor<3x5xf64>) outs(%f : tensor<3xf64>) {
  ^bb0(%u: f64, %o: f64):
    %r = arith.addf %u, %o : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %mean = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%s : tensor<3xf64>) outs(%er : tensor<3xf64>) {
  ^bb0(%u: f64, %o: f64):
    %r = arith.divf %u, %n : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %d = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = #par2} ins(%x64, %mean : tensor<3x5xf64>, tensor<3xf64>) outs(%e64 : tensor<3x5xf64>) {
  ^bb0(%u: f64, %m: f64, %o: f64):
    %r = arith.subf %u, %m : f64
    linalg.yield %r : f64
  } -> tensor<3x5xf64>
  %sq = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = #par2} ins(%d, %d : tensor<3x5xf64>, tensor<3x5xf64>) outs(%e64 : tensor<3x5xf64>) {
  ^bb0(%u: f64, %v: f64, %o: f64):
    %r = arith.mulf %u, %v : f64
    linalg.yield %r : f64
  } -> tensor<3x5xf64>
  %f2 = linalg.fill ins(%zero : f64) outs(%er : tensor<3xf64>) -> tensor<3xf64>
  %vs = linalg.generic {indexing_maps = [#id2, #row], iterator_types = #red2} ins(%sq : tensor<3x5xf64>) outs(%f2 : tensor<3xf64>) {
  ^bb0(%u: f64, %o: f64):
    %r = arith.addf %u, %o : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %var = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%vs : tensor<3xf64>) outs(%er : tensor<3xf64>) {
  ^bb0(%u: f64, %o: f64):
    %r = arith.divf %u, %n : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  func.return %var : tensor<3xf64>
}

// RECOMPUTED THROUGH A VIEW: the readers read %a through a collapse (a relabelling
// transform, torch-mlir's reshape before a LayerNorm's mean): each reads %x at the composed
// map and negates it; neither the view nor %a is left.
// CHECK-LABEL: func.func @through_a_view
// CHECK-NOT:     layout.transform
// CHECK:         layout.fused ins(%x : tensor<1x7x5xf32>) -> tensor<7xf32> {
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>, affine_map<(d0, d1) -> (d0)>]
// CHECK-NEXT:      ^{{.*}}(%[[U:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:        %[[N:.*]] = arith.negf %[[U]] : f32
// CHECK-NEXT:        arith.addf %[[N]], %[[ACC]] : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]{{.*}} ins(%x : tensor<1x7x5xf32>)
// CHECK-NEXT:    ^{{.*}}(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.negf %[[V]] : f32
// CHECK-NOT:     layout.transform
// CHECK:         func.return
func.func @through_a_view(%x: tensor<1x7x5xf32>) -> (tensor<7xf32>, tensor<7x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x5xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x7x5xf32>) outs(%e : tensor<1x7x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<1x7x5xf32>
  %v = layout.transform %a {index_map = #layout.index_map<(b, i, j) -> (i, j)>} : tensor<1x7x5xf32> -> tensor<7x5xf32>
  %er = tensor.empty() : tensor<7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<7xf32>) -> tensor<7xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = #red2} ins(%v : tensor<7x5xf32>) outs(%f : tensor<7xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<7xf32>
  %e2 = tensor.empty() : tensor<7x5xf32>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%v : tensor<7x5xf32>) outs(%e2 : tensor<7x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.mulf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<7x5xf32>
  func.return %s, %t : tensor<7xf32>, tensor<7x5xf32>
}

// REFUSED: an exp read by a sum and an elementwise generic: no cheap body (each reader
// would repeat it per read), so it is stored for both.
// CHECK-LABEL: func.func @costly_two_readers
// CHECK:         %a = linalg.generic
// CHECK-NEXT:    ^{{.*}}
// CHECK-NEXT:      math.exp
// CHECK:         func.return
// REMARK: remark: fuse-elementwise: %a is not fused into %{{.*}}: it has 2 users, so it is needed whole (fusing would compute it once per consumer); nor recomputed by its 2 readers: its body has 'math.exp', which the root would repeat per read
func.func @costly_two_readers(%x: tensor<3x5xf32>) -> (tensor<3xf32>, tensor<3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%x : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  %er = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = #red2} ins(%a : tensor<3x5xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%a : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.mulf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  func.return %s, %t : tensor<3xf32>, tensor<3x5xf32>
}

// REFUSED: a cheap producer that is also a result of the function is needed whole; its
// readers do not recompute it (the kernel would stay).
// CHECK-LABEL: func.func @also_returned
// CHECK:         %a = linalg.generic
// CHECK:         linalg.generic {{.*}} ins(%a :
// CHECK:         func.return
// REMARK: remark: fuse-elementwise: %a is not fused into %{{.*}}: it has 2 users, so it is needed whole (fusing would compute it once per consumer); nor recomputed by its 2 readers: it is used by 'func.return'
func.func @also_returned(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %e = tensor.empty() : tensor<3x5xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%x : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%a : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.mulf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  func.return %a, %t : tensor<3x5xf32>, tensor<3x5xf32>
}

// REFUSED: a sum read by two elementwise generics (a broadcast of each row's sum) is a
// reduction: never recomputed (each reader would repeat the whole row per element).
// CHECK-LABEL: func.func @reduction_two_readers
// CHECK:         %[[S:.*]] = layout.fused ins(%x : tensor<3x5xf32>) -> tensor<3xf32>
// CHECK:         linalg.generic {{.*}} ins(%x, %[[S]] :
// CHECK:         linalg.generic {{.*}} ins(%x, %[[S]] :
// CHECK:         func.return
func.func @reduction_two_readers(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = #red2} ins(%x : tensor<3x5xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %e = tensor.empty() : tensor<3x5xf32>
  %a = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = #par2} ins(%x, %s : tensor<3x5xf32>, tensor<3xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %m: f32, %o: f32):
    %r = arith.subf %u, %m : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  %b = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = #par2} ins(%x, %s : tensor<3x5xf32>, tensor<3xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %m: f32, %o: f32):
    %r = arith.mulf %u, %m : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  func.return %a, %b : tensor<3x5xf32>, tensor<3x5xf32>
}

// COMPUTED BY THE ROOT THAT READS IT ONCE: an exp (no cheap prologue) read by a row sum at
// a permutation of all its loops: each element is read once, so the sum computes it where
// it reads it and nothing is repeated (MLP-Mixer's last LayerNorm read by the mean pool).
// CHECK-LABEL: func.func @costly_read_once
// CHECK:         layout.fused ins(%x : tensor<3x5xf32>) -> tensor<3xf32> {
// CHECK:           ^{{.*}}(%[[U:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[U]] : f32
// CHECK-NEXT:        arith.addf %[[E]], %[[ACC]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
func.func @costly_read_once(%x: tensor<3x5xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%x : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  %er = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = #red2} ins(%a : tensor<3x5xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  func.return %s : tensor<3xf32>
}

// The same through a unit axis (a keepdim batch of 1 read at 0): still each element once.
// CHECK-LABEL: func.func @costly_read_once_unit_axis
// CHECK:         layout.fused ins(%x : tensor<1x3x5xf32>) -> tensor<3xf32> {
// CHECK:           affine_map<(d0, d1) -> (0, d0, d1)>
// CHECK:           math.exp
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
func.func @costly_read_once_unit_axis(%x: tensor<1x3x5xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x5xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x3x5xf32>) outs(%e : tensor<1x3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<1x3x5xf32>
  %er = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (0, i, j)>, #row], iterator_types = #red2} ins(%a : tensor<1x3x5xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  func.return %s : tensor<3xf32>
}
