// sink-layout-rewrites: a transform back to NCHW in front of elementwise ops sinks below
// them, so the epilogue runs in the blocked layout (and fuses into the conv's kernel).
// RUN: xdsl-opt %s -p 'sink-layout-rewrites{params=b}' | filecheck %s
// RUN: xdsl-opt %s -p 'sink-layout-rewrites{params=b},sink-layout-rewrites{params=b}' | filecheck %s
// With every argument but the first a parameter (the default), the blocked input of @epilogue
// is a parameter too: a rank-raising operand transform never sinks in turn, so the pass
// ends (it used to sink the residual's transform back and forth without end).
// RUN: xdsl-opt %s -p sink-layout-rewrites | filecheck %s --check-prefix=DEFAULT

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch4 = affine_map<(n, c, h, w) -> (c, 0, 0)>
#par4 = ["parallel", "parallel", "parallel", "parallel"]

// The epilogue of a ResNet block's last conv: bias (a parameter: its blocked form is
// parameter work), the residual input (already blocked for the first conv: reused) and a
// relu run on the blocked tensor; one transform back to NCHW comes last.
// DEFAULT-LABEL: func.func @epilogue(
// DEFAULT-COUNT-3: } -> tensor<1x2x3x5x4xf32>
// DEFAULT:         %[[T:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>}
// DEFAULT-NEXT:    func.return %[[T]]
// CHECK-LABEL: func.func @epilogue(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x8x3x5xf32>, %[[Y:[^:]*]]: tensor<1x2x3x5x4xf32>, %[[B:[^:]*]]: tensor<8xf32>)
// CHECK:         %[[XB:.*]] = layout.transform %[[X]]
// CHECK:         %[[BB:.*]] = layout.transform %[[B]] {index_map = #layout.index_map<{{.*}}floordiv 4{{.*}}mod 4)>}
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%[[Y]], %[[BB]] : tensor<1x2x3x5x4xf32>, tensor<2x1x1x4xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[XB]] : tensor<1x2x3x5x4xf32>, tensor<1x2x3x5x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<1x2x3x5x4xf32>)
// CHECK-NEXT:      ^{{.*}}
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        linalg.yield
// CHECK-NEXT:    } -> tensor<1x2x3x5x4xf32>
// CHECK-NEXT:    %[[T:.*]] = layout.transform %[[R]] {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x2x3x5x4xf32> -> tensor<1x8x3x5xf32>
// CHECK-NEXT:    func.return %[[T]], %[[XB]]
func.func @epilogue(%x: tensor<1x8x3x5xf32>, %y: tensor<1x2x3x5x4xf32>, %b: tensor<8xf32>) -> (tensor<1x8x3x5xf32>, tensor<1x2x3x5x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %xb = layout.transform %x {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>} : tensor<1x8x3x5xf32> -> tensor<1x2x3x5x4xf32>
  %t = layout.transform %y {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x2x3x5x4xf32> -> tensor<1x8x3x5xf32>
  %e = tensor.empty() : tensor<1x8x3x5xf32>
  %a = linalg.generic {indexing_maps = [#id4, affine_map<(n, c, h, w) -> (c)>, #id4], iterator_types = #par4} ins(%t, %b : tensor<1x8x3x5xf32>, tensor<8xf32>) outs(%e : tensor<1x8x3x5xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x8x3x5xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = #par4} ins(%a, %x : tensor<1x8x3x5xf32>, tensor<1x8x3x5xf32>) outs(%e : tensor<1x8x3x5xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x8x3x5xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%s : tensor<1x8x3x5xf32>) outs(%e : tensor<1x8x3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %m = arith.maximumf %u, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x3x5xf32>
  func.return %r, %xb : tensor<1x8x3x5xf32>, tensor<1x2x3x5x4xf32>
}

// REFUSED: the other operand is the function's input with no blocked form computed yet
// (and an earlier transform of it by another map, NHWC, is not the one needed): sinking
// would add a transform kernel per inference.
// CHECK-LABEL: func.func @unblocked_input(
// CHECK:         %[[T:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>}
// CHECK:         linalg.generic {{.*}} ins(%[[T]], %{{.*}} : tensor<1x8x3x5xf32>, tensor<1x8x3x5xf32>)
func.func @unblocked_input(%x: tensor<1x8x3x5xf32>, %y: tensor<1x2x3x5x4xf32>) -> (tensor<1x8x3x5xf32>, tensor<1x3x5x8xf32>) {
  %nhwc = layout.transform %x {index_map = #layout.index_map<(N, C, H, W) -> (N, H, W, C)>} : tensor<1x8x3x5xf32> -> tensor<1x3x5x8xf32>
  %t = layout.transform %y {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x2x3x5x4xf32> -> tensor<1x8x3x5xf32>
  %e = tensor.empty() : tensor<1x8x3x5xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = #par4} ins(%t, %x : tensor<1x8x3x5xf32>, tensor<1x8x3x5xf32>) outs(%e : tensor<1x8x3x5xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.subf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x8x3x5xf32>
  func.return %s, %nhwc : tensor<1x8x3x5xf32>, tensor<1x3x5x8xf32>
}

// REFUSED: a transform that pads (6 channels into two blocks of 4: two padding lanes) is
// not a bijection: sunk below the relu, the padding lanes would have to be proven to hold
// relu's value of them.
// CHECK-LABEL: func.func @padding_transform(
// CHECK:         %[[T:.*]] = layout.transform
// CHECK-NEXT:    tensor.empty
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[T]] : tensor<1x2x3x5x4xf32>)
func.func @padding_transform(%y: tensor<1x6x3x5xf32>) -> tensor<1x2x3x5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %t = layout.transform %y {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>, pad_value = 1.0 : f32} : tensor<1x6x3x5xf32> -> tensor<1x2x3x5x4xf32>
  %e = tensor.empty() : tensor<1x2x3x5x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, l) -> (a, b, c, d, l)>, affine_map<(a, b, c, d, l) -> (a, b, c, d, l)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<1x2x3x5x4xf32>) outs(%e : tensor<1x2x3x5x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %m = arith.negf %u : f32
    linalg.yield %m : f32
  } -> tensor<1x2x3x5x4xf32>
  func.return %r : tensor<1x2x3x5x4xf32>
}

// REFUSED: the result is read by a transform (a layout its consumer decided: the backward
// flow's business), and a window read (a transposed operand) is not elementwise.
// CHECK-LABEL: func.func @decided_consumer(
// CHECK:         %[[T:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>}
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[T]] :
// CHECK:         layout.transform %[[R]]
// CHECK:         linalg.generic {{.*}} ins(%[[T]] :
func.func @decided_consumer(%y: tensor<1x2x3x3x4xf32>) -> (tensor<1x3x3x8xf32>, tensor<1x8x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = layout.transform %y {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
  %e = tensor.empty() : tensor<1x8x3x3xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%t : tensor<1x8x3x3xf32>) outs(%e : tensor<1x8x3x3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %m = arith.maximumf %u, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x3x3xf32>
  %n = layout.transform %r {index_map = #layout.index_map<(N, C, H, W) -> (N, H, W, C)>} : tensor<1x8x3x3xf32> -> tensor<1x3x3x8xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, w, h)>, #id4], iterator_types = #par4} ins(%t : tensor<1x8x3x3xf32>) outs(%e : tensor<1x8x3x3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %m = arith.negf %u : f32
    linalg.yield %m : f32
  } -> tensor<1x8x3x3xf32>
  func.return %n, %q : tensor<1x3x3x8xf32>, tensor<1x8x3x3xf32>
}

// REFUSED: an earlier transform of the residual input has the right shape but another map
// (H and W swapped inside the blocks): it is not the blocked form, so the sink would need a
// new transform kernel.
// CHECK-LABEL: func.func @same_shape_other_map(
// CHECK:         %[[T:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>}
// CHECK:         linalg.generic {{.*}} ins(%[[T]], %{{.*}} : tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>)
func.func @same_shape_other_map(%x: tensor<1x8x3x3xf32>, %y: tensor<1x2x3x3x4xf32>) -> (tensor<1x8x3x3xf32>, tensor<1x2x3x3x4xf32>) {
  %xt = layout.transform %x {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, W, H, C mod 4)>} : tensor<1x8x3x3xf32> -> tensor<1x2x3x3x4xf32>
  %t = layout.transform %y {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
  %e = tensor.empty() : tensor<1x8x3x3xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = #par4} ins(%t, %x : tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>) outs(%e : tensor<1x8x3x3xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.subf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x8x3x3xf32>
  func.return %s, %xt : tensor<1x8x3x3xf32>, tensor<1x2x3x3x4xf32>
}

// A result read by the blocked layout it came from (the next convolution's input transform,
// M^-1) and by the function's return: the relu sinks; the consumer's transform now reads
// T(relu'), which fold-layout-rewrites folds to relu' (the pair is a proven identity).
// CHECK-LABEL: func.func @blocked_consumer(
// CHECK-SAME:      %[[Y:[^:]*]]: tensor<1x2x3x3x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<1x2x3x3x4xf32>)
// CHECK:         %[[T:.*]] = layout.transform %[[R]] {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>}
// CHECK-NEXT:    %[[B:.*]] = layout.transform %[[T]] {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>}
// CHECK-NEXT:    func.return %[[B]], %[[T]]
func.func @blocked_consumer(%y: tensor<1x2x3x3x4xf32>) -> (tensor<1x2x3x3x4xf32>, tensor<1x8x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = layout.transform %y {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
  %e = tensor.empty() : tensor<1x8x3x3xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%t : tensor<1x8x3x3xf32>) outs(%e : tensor<1x8x3x3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %m = arith.maximumf %u, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x3x3xf32>
  %b = layout.transform %r {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>} : tensor<1x8x3x3xf32> -> tensor<1x2x3x3x4xf32>
  func.return %b, %r : tensor<1x2x3x3x4xf32>, tensor<1x8x3x3xf32>
}

// A residual add of two convolutions' results, both transformed back to NCHW (RegNet's
// first block of a stage at 1x1 pixels: the shortcut's projection and the last conv): the
// operand transform the sink gives the second result undoes the transform that computed
// it, so the add and the relu read both blocked results directly and no transform is added.
// CHECK-LABEL: func.func @residual_of_two_convs(
// CHECK-SAME:      %[[Y1:[^:]*]]: tensor<1x2x1x1x4xf32>, %[[Y2:[^:]*]]: tensor<1x2x1x1x4xf32>)
// CHECK-NOT:     layout.transform %[[Y2]]
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[Y1]], %[[Y2]] : tensor<1x2x1x1x4xf32>, tensor<1x2x1x1x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<1x2x1x1x4xf32>)
// CHECK:         %[[T:.*]] = layout.transform %[[R]] {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>}
// CHECK-NEXT:    %[[B:.*]] = layout.transform %[[T]] {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>}
// CHECK-NEXT:    func.return %[[B]]
func.func @residual_of_two_convs(%y1: tensor<1x2x1x1x4xf32>, %y2: tensor<1x2x1x1x4xf32>) -> tensor<1x2x1x1x4xf32> {
  %zero = arith.constant 0.0 : f32
  %t1 = layout.transform %y1 {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x2x1x1x4xf32> -> tensor<1x8x1x1xf32>
  %t2 = layout.transform %y2 {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x2x1x1x4xf32> -> tensor<1x8x1x1xf32>
  %e = tensor.empty() : tensor<1x8x1x1xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = #par4} ins(%t1, %t2 : tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>) outs(%e : tensor<1x8x1x1xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x8x1x1xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%s : tensor<1x8x1x1xf32>) outs(%e : tensor<1x8x1x1xf32>) {
  ^bb0(%u: f32, %o: f32):
    %m = arith.maximumf %u, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x1x1xf32>
  %b = layout.transform %r {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>} : tensor<1x8x1x1xf32> -> tensor<1x2x1x1x4xf32>
  func.return %b : tensor<1x2x1x1x4xf32>
}

// REFUSED: the second result comes back to NCHW through another bijection of the same
// shapes (its channels interleaved: c * 2 + C), which the blocked layout does not undo:
// reading it blocked would permute its channels, and transforming it costs a kernel.
// CHECK-LABEL: func.func @residual_other_layout(
// CHECK:         %[[T2:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(N, C, H, W, c) -> (N, c * 2 + C, H, W)>}
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[T2]] : tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>)
func.func @residual_other_layout(%y1: tensor<1x2x1x1x4xf32>, %y2: tensor<1x2x1x1x4xf32>) -> tensor<1x8x1x1xf32> {
  %t1 = layout.transform %y1 {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x2x1x1x4xf32> -> tensor<1x8x1x1xf32>
  %t2 = layout.transform %y2 {index_map = #layout.index_map<(N, C, H, W, c) -> (N, c * 2 + C, H, W)>} : tensor<1x2x1x1x4xf32> -> tensor<1x8x1x1xf32>
  %e = tensor.empty() : tensor<1x8x1x1xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = #par4} ins(%t1, %t2 : tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>) outs(%e : tensor<1x8x1x1xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.subf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x8x1x1xf32>
  func.return %s : tensor<1x8x1x1xf32>
}

// A sigmoid after the crop of a padded channel (3 of 4) of a relayout to NCHW: the crop
// sinks below the sigmoid, then the relayout does, so the sigmoid runs on the blocked
// tensor (and fuses into the convolution that makes it); the crop of the NCHW result comes
// last.
// CHECK-LABEL: func.func @sigmoid_after_crop
// CHECK-SAME:      (%[[X:.*]]: tensor<1x1x3x2x4xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x1x3x2x4xf32>)
// CHECK:           math.exp
// CHECK:         %[[T:.*]] = layout.transform %[[S]] {{.*}} : tensor<1x1x3x2x4xf32> -> tensor<1x4x3x2xf32>
// CHECK-NEXT:    %[[C:.*]] = layout.crop %[[T]] {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 3, 3, 2>} : tensor<1x4x3x2xf32> -> tensor<1x3x3x2xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @sigmoid_after_crop(%x: tensor<1x1x3x2x4xf32>) -> tensor<1x3x3x2xf32> {
  %one = arith.constant 1.0 : f32
  %t = layout.transform %x {index_map = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>} : tensor<1x1x3x2x4xf32> -> tensor<1x4x3x2xf32>
  %c = layout.crop %t {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 3, 3, 2>} : tensor<1x4x3x2xf32> -> tensor<1x3x3x2xf32>
  %e = tensor.empty() : tensor<1x3x3x2xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%c : tensor<1x3x3x2xf32>) outs(%e : tensor<1x3x3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x3x3x2xf32>
  func.return %s : tensor<1x3x3x2xf32>
}

// Left alone: the crop is read twice (it would be computed twice), and a crop whose
// source no producer could take the op into (an argument).
// CHECK-LABEL: func.func @crop_read_twice_or_of_an_argument
// CHECK:         %[[C:.*]] = layout.crop %{{.*}} : tensor<1x4x3x2xf32> -> tensor<1x3x3x2xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[C]] : tensor<1x3x3x2xf32>)
// CHECK:         %[[D:.*]] = layout.crop %y {{.*}} : tensor<1x4x3x2xf32> -> tensor<1x3x3x2xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[D]] : tensor<1x3x3x2xf32>)
func.func @crop_read_twice_or_of_an_argument(%x: tensor<1x1x3x2x4xf32>, %y: tensor<1x4x3x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>) {
  %t = layout.transform %x {index_map = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>} : tensor<1x1x3x2x4xf32> -> tensor<1x4x3x2xf32>
  %c = layout.crop %t {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 3, 3, 2>} : tensor<1x4x3x2xf32> -> tensor<1x3x3x2xf32>
  %e = tensor.empty() : tensor<1x3x3x2xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%c : tensor<1x3x3x2xf32>) outs(%e : tensor<1x3x3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<1x3x3x2xf32>
  %d = layout.crop %y {start = array<i64: 0, 1, 0, 0>, sizes = array<i64: 1, 3, 3, 2>} : tensor<1x4x3x2xf32> -> tensor<1x3x3x2xf32>
  %u = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%d : tensor<1x3x3x2xf32>) outs(%e : tensor<1x3x3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<1x3x3x2xf32>
  func.return %s, %c, %u : tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>
}

// A crop of channels 1..3 of 5 (a prime count) of a generic's one-use result: the negation
// runs on all 5 channels, the crop (same window) comes after it.
// CHECK-LABEL: func.func @neg_after_offset_crop
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%x : tensor<1x5x3x1xf32>)
// CHECK:         %[[N:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<1x5x3x1xf32>) outs(%{{.*}} : tensor<1x5x3x1xf32>)
// CHECK:         } -> tensor<1x5x3x1xf32>
// CHECK-NEXT:    %[[C:.*]] = layout.crop %[[N]] {start = array<i64: 0, 1, 0, 0>, sizes = array<i64: 1, 3, 3, 1>} : tensor<1x5x3x1xf32> -> tensor<1x3x3x1xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @neg_after_offset_crop(%x: tensor<1x5x3x1xf32>) -> tensor<1x3x3x1xf32> {
  %e5 = tensor.empty() : tensor<1x5x3x1xf32>
  %a = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%x : tensor<1x5x3x1xf32>) outs(%e5 : tensor<1x5x3x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<1x5x3x1xf32>
  %c = layout.crop %a {start = array<i64: 0, 1, 0, 0>, sizes = array<i64: 1, 3, 3, 1>} : tensor<1x5x3x1xf32> -> tensor<1x3x3x1xf32>
  %e = tensor.empty() : tensor<1x3x3x1xf32>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%c : tensor<1x3x3x1xf32>) outs(%e : tensor<1x3x3x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<1x3x3x1xf32>
  func.return %n : tensor<1x3x3x1xf32>
}
