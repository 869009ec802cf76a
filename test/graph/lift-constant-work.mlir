// lift-transform-params: work on no argument at all (torch-mlir's index tensors of a
// bilinear upsampling: linalg.index arithmetic, fptosi, a clamp) is the same on every call,
// so it moves to @main_prepare with the parameter work; a linalg.fill (an accumulator's
// start) and the work that reads the input stay in @main.
// RUN: xdsl-opt %s -p lift-transform-params | filecheck %s
// RUN: xdsl-opt %s -p lift-transform-params,lift-transform-params | filecheck %s
// RUN: xdsl-opt %s -p 'lift-transform-params{function=alone}' | filecheck %s --check-prefix=ALONE

// CHECK-LABEL: func.func @main_prepare(%b: tensor<3xf32>) -> (tensor<6xi64>, tensor<3xf32>) {
// CHECK:         %[[SRC:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6xf32>)
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: f32):
// CHECK-NEXT:      linalg.index 0 : index
// CHECK:         %[[IDX:.*]] = linalg.generic {{.*}} ins(%[[SRC]] : tensor<6xf32>) outs(%{{.*}} : tensor<6xi64>)
// CHECK:           arith.fptosi
// CHECK:         %[[CLAMPED:.*]] = linalg.generic {{.*}} ins(%[[IDX]] : tensor<6xi64>)
// CHECK:           arith.minsi
// CHECK-NOT:     linalg.fill
// CHECK:         %[[NEG:.*]] = linalg.generic {{.*}} ins(%b : tensor<3xf32>)
// CHECK:         func.return %[[CLAMPED]], %[[NEG]] : tensor<6xi64>, tensor<3xf32>
// CHECK-LABEL: func.func @main(
// The clamped index tensor keeps what ValueBounds proved of it (fptosi(i * 0.5) for i in
// [0, 5], then minsi with 2: [0, 2]); the negated parameter has no bound.
// CHECK-SAME:    %x: tensor<3xf32>, %[[I:[a-z_0-9]+]]: tensor<6xi64> {layout.bounds = [0 : i64, 2 : i64]}, %{{[a-z_0-9]+}}: tensor<3xf32>) -> (tensor<6xf32>, tensor<3xf32>) {
// CHECK-NOT:     linalg.index
// CHECK-NOT:     arith.fptosi
// CHECK:         %[[UP:.*]] = linalg.generic {{.*}} ins(%[[I]] : tensor<6xi64>)
// CHECK:           tensor.extract %x[
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1xf32>)
// CHECK:         linalg.generic {{.*}} ins(%x, %{{.*}}, %[[F]] : tensor<3xf32>, tensor<3xf32>, tensor<1xf32>)
// CHECK:         func.return
func.func @main(%x: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<6xf32>, tensor<3xf32>) {
  %half = arith.constant 0.5 : f32
  %top = arith.constant 2 : i64
  %zero = arith.constant 0.0 : f32
  %e6 = tensor.empty() : tensor<6xf32>
  %src = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%e6 : tensor<6xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %s = arith.mulf %f, %half : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  %ei = tensor.empty() : tensor<6xi64>
  %idx = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%src : tensor<6xf32>) outs(%ei : tensor<6xi64>) {
  ^bb0(%a: f32, %o: i64):
    %n = arith.fptosi %a : f32 to i64
    linalg.yield %n : i64
  } -> tensor<6xi64>
  %clamped = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%idx : tensor<6xi64>) outs(%ei : tensor<6xi64>) {
  ^bb0(%a: i64, %o: i64):
    %m = arith.minsi %a, %top : i64
    linalg.yield %m : i64
  } -> tensor<6xi64>
  %up = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%clamped : tensor<6xi64>) outs(%e6 : tensor<6xf32>) {
  ^bb0(%k: i64, %o: f32):
    %kk = arith.index_cast %k : i64 to index
    %v = tensor.extract %x[%kk] : tensor<3xf32>
    linalg.yield %v : f32
  } -> tensor<6xf32>
  %e1 = tensor.empty() : tensor<1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1xf32>) -> tensor<1xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %nb = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%b : tensor<3xf32>) outs(%e3 : tensor<3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<3xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (0)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %nb, %f : tensor<3xf32>, tensor<3xf32>, tensor<1xf32>) outs(%e3 : tensor<3xf32>) {
  ^bb0(%a: f32, %c: f32, %z: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.addf %s, %z : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  func.return %up, %sum : tensor<6xf32>, tensor<3xf32>
}

// A function whose only argument is its input (no parameter): its work on no argument
// still moves, to a @alone_prepare without arguments.
// ALONE-LABEL: func.func @alone_prepare() -> tensor<4xi64> {
// ALONE:         linalg.index 0
// ALONE-LABEL: func.func @alone(%x: tensor<4xf32>, %{{.*}}: tensor<4xi64> {layout.bounds = [0 : i64, 3 : i64]}) -> tensor<4xf32> {
// ALONE-NOT:     linalg.index
// ALONE:         tensor.extract %x
func.func @alone(%x: tensor<4xf32>) -> tensor<4xf32> {
  %ei = tensor.empty() : tensor<4xi64>
  %rev = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%ei : tensor<4xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %c3 = arith.constant 3 : index
    %r = arith.subi %c3, %i : index
    %ri = arith.index_cast %r : index to i64
    linalg.yield %ri : i64
  } -> tensor<4xi64>
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%rev : tensor<4xi64>) outs(%e : tensor<4xf32>) {
  ^bb0(%k: i64, %o: f32):
    %kk = arith.index_cast %k : i64 to index
    %v = tensor.extract %x[%kk] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
