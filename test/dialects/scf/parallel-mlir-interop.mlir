// REQUIRES: mlir
// scf.parallel / scf.reduce round trip with upstream MLIR in its custom syntax, both ways:
// xDSL's output parses in mlir-opt, and mlir-opt's (custom, not generic) output parses in
// xDSL; after the trip the IR is the same (same CHECK lines either way).
// RUN: xdsl-opt %s | %mlir-opt | xdsl-opt | filecheck %s
// RUN: %mlir-opt %s | xdsl-opt | %mlir-opt | filecheck %s --check-prefix=UPSTREAM
// RUN: %mlir-opt %s | xdsl-opt | filecheck %s

func.func @sum_rows(%m : memref<?x?xf32>, %n : index, %k : index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %big = arith.constant -1.0e30 : f32
  %sum:2 = scf.parallel (%i, %j) = (%c0, %c0) to (%n, %k) step (%c1, %c1) init (%zero, %big) -> (f32, f32) {
    %v = memref.load %m[%i, %j] : memref<?x?xf32>
    scf.reduce(%v, %v : f32, f32) {
    ^bb0(%lhs : f32, %rhs : f32):
      %s = arith.addf %lhs, %rhs : f32
      scf.reduce.return %s : f32
    }, {
    ^bb0(%lhs : f32, %rhs : f32):
      %s = arith.maximumf %lhs, %rhs : f32
      scf.reduce.return %s : f32
    }
  } {tag}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %sum#0, %m[%i, %c0] : memref<?x?xf32>
  }
  %one = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    scf.reduce(%sum#1 : f32) {
    ^bb0(%lhs : f32, %rhs : f32):
      %s = arith.minimumf %lhs, %rhs : f32
      scf.reduce.return %s : f32
    }
  }
  return %one : f32
}
// CHECK-LABEL: func.func @sum_rows(
//       CHECK:   %[[SUM:.*]], %[[MAX:.*]] = scf.parallel (%[[I:.*]], %[[J:.*]]) = (%[[C0:.*]], %[[C0]]) to (%{{.*}}, %{{.*}}) step (%[[C1:.*]], %[[C1]]) init (%{{.*}}, %{{.*}}) -> (f32, f32) {
//  CHECK-NEXT:     %[[V:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<?x?xf32>
//  CHECK-NEXT:     scf.reduce(%[[V]], %[[V]] : f32, f32) {
//  CHECK-NEXT:     ^bb0(%{{.*}}: f32, %{{.*}}: f32):
//  CHECK-NEXT:       arith.addf
//  CHECK-NEXT:       scf.reduce.return
//  CHECK-NEXT:     }, {
//  CHECK-NEXT:     ^bb0(%{{.*}}: f32, %{{.*}}: f32):
//  CHECK-NEXT:       arith.maximumf
//  CHECK-NEXT:       scf.reduce.return
//  CHECK-NEXT:     }
//  CHECK-NEXT:   } {tag}
//  CHECK-NEXT:   scf.parallel (%[[K:.*]]) = (%[[C0]]) to (%{{.*}}) step (%[[C1]]) {
//  CHECK-NEXT:     memref.store %[[SUM]], %{{.*}}[%[[K]], %[[C0]]] : memref<?x?xf32>
//  CHECK-NEXT:     scf.reduce
//  CHECK-NEXT:   }
//  CHECK-NEXT:   %[[ONE:.*]] = scf.parallel (%{{.*}}) = (%[[C0]]) to (%{{.*}}) step (%[[C1]]) init (%{{.*}}) -> f32 {
//  CHECK-NEXT:     scf.reduce(%[[MAX]] : f32) {
//       CHECK:   func.return %[[ONE]] : f32

// UPSTREAM-LABEL: func.func @sum_rows(
//       UPSTREAM:   %[[SUM:.*]]:2 = scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) init (%{{.*}}, %{{.*}}) -> (f32, f32) {
//  UPSTREAM-NEXT:     %[[V:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<?x?xf32>
//  UPSTREAM-NEXT:     scf.reduce(%[[V]], %[[V]] : f32, f32) {
//       UPSTREAM:     }, {
//       UPSTREAM:   } {tag}
//  UPSTREAM-NEXT:   scf.parallel
//  UPSTREAM-NEXT:     memref.store %[[SUM]]#0
//  UPSTREAM-NEXT:     scf.reduce
//  UPSTREAM-NEXT:   }
//  UPSTREAM-NEXT:   %{{.*}} = scf.parallel {{.*}} init (%{{.*}}) -> f32 {
//  UPSTREAM-NEXT:     scf.reduce(%[[SUM]]#1 : f32) {
