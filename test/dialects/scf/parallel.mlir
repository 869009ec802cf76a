// scf.parallel and scf.reduce in upstream MLIR's custom syntax (dialects/scf_syntax.py): parsed,
// printed back in the same form, and the generic form parses to the same IR.
// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s
// RUN: physlayout-opt %s | filecheck %s

// The shapes of upstream's mlir/test/Dialect/SCF/ops.mlir: a 2-D loop with a nested 1-D loop
// reducing into two values of different types.
func.func @std_parallel_loop(%arg0 : index, %arg1 : index, %arg2 : index, %arg3 : index, %arg4 : index) {
  %step = arith.constant 1 : index
  scf.parallel (%i0, %i1) = (%arg0, %arg1) to (%arg2, %arg3)
                                          step (%arg4, %step) {
    %min_cmp = arith.cmpi slt, %i0, %i1 : index
    %min = arith.select %min_cmp, %i0, %i1 : index
    %zero = arith.constant 0.0 : f32
    %int_zero = arith.constant 0 : i32
    %red:2 = scf.parallel (%i2) = (%min) to (%i0) step (%i1)
                                      init (%zero, %int_zero) -> (f32, i32) {
      %one = arith.constant 1.0 : f32
      %int_one = arith.constant 1 : i32
      scf.reduce(%one, %int_one : f32, i32) {
        ^bb0(%lhs : f32, %rhs: f32):
          %res = arith.addf %lhs, %rhs : f32
          scf.reduce.return %res : f32
      }, {
        ^bb0(%lhs : i32, %rhs: i32):
          %res = arith.muli %lhs, %rhs : i32
          scf.reduce.return %res : i32
      }
    }
  }
  return
}
// CHECK-LABEL: func.func @std_parallel_loop(
//  CHECK-SAME: %[[ARG0:[A-Za-z0-9]+]]: index, %[[ARG1:[A-Za-z0-9]+]]: index, %[[ARG2:[A-Za-z0-9]+]]: index, %[[ARG3:[A-Za-z0-9]+]]: index, %[[ARG4:[A-Za-z0-9]+]]: index
//       CHECK:   %[[STEP:.*]] = arith.constant 1 : index
//  CHECK-NEXT:   scf.parallel (%[[I0:.*]], %[[I1:.*]]) = (%[[ARG0]], %[[ARG1]]) to (%[[ARG2]], %[[ARG3]]) step (%[[ARG4]], %[[STEP]]) {
//  CHECK-NEXT:     %[[MIN_CMP:.*]] = arith.cmpi slt, %[[I0]], %[[I1]] : index
//  CHECK-NEXT:     %[[MIN:.*]] = arith.select %[[MIN_CMP]], %[[I0]], %[[I1]] : index
//  CHECK-NEXT:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
//  CHECK-NEXT:     %[[INT_ZERO:.*]] = arith.constant 0 : i32
//  CHECK-NEXT:     %{{.*}}, %{{.*}} = scf.parallel (%{{.*}}) = (%[[MIN]]) to (%[[I0]]) step (%[[I1]]) init (%[[ZERO]], %[[INT_ZERO]]) -> (f32, i32) {
//  CHECK-NEXT:       %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
//  CHECK-NEXT:       %[[INT_ONE:.*]] = arith.constant 1 : i32
//  CHECK-NEXT:       scf.reduce(%[[ONE]], %[[INT_ONE]] : f32, i32) {
//  CHECK-NEXT:       ^bb0(%[[LHS:.*]]: f32, %[[RHS:.*]]: f32):
//  CHECK-NEXT:         %[[RES:.*]] = arith.addf %[[LHS]], %[[RHS]] : f32
//  CHECK-NEXT:         scf.reduce.return %[[RES]] : f32
//  CHECK-NEXT:       }, {
//  CHECK-NEXT:       ^bb{{[0-9]+}}(%[[LHS2:.*]]: i32, %[[RHS2:.*]]: i32):
//  CHECK-NEXT:         %[[RES2:.*]] = arith.muli %[[LHS2]], %[[RHS2]] : i32
//  CHECK-NEXT:         scf.reduce.return %[[RES2]] : i32
//  CHECK-NEXT:       }
//  CHECK-NEXT:     }
//  CHECK-NEXT:     scf.reduce
//  CHECK-NEXT:   }
//  CHECK-NEXT:   func.return

// One reduction: `-> T` without parentheses; attributes after the region.
func.func @one_reduction(%lb : index, %ub : index, %st : index, %init : f32) -> f32 {
  %r = scf.parallel (%i) = (%lb) to (%ub) step (%st) init (%init) -> f32 {
    %one = arith.constant 1.0 : f32
    scf.reduce(%one : f32) {
    ^bb0(%lhs : f32, %rhs : f32):
      %s = arith.maximumf %lhs, %rhs : f32
      scf.reduce.return %s : f32
    }
  } {mapping = "x"}
  return %r : f32
}
// CHECK-LABEL: func.func @one_reduction(
//  CHECK-SAME: %[[LB:[A-Za-z0-9]+]]: index, %[[UB:[A-Za-z0-9]+]]: index, %[[ST:[A-Za-z0-9]+]]: index, %[[INIT:[A-Za-z0-9]+]]: f32
//  CHECK-NEXT:   %[[R:.*]] = scf.parallel (%{{.*}}) = (%[[LB]]) to (%[[UB]]) step (%[[ST]]) init (%[[INIT]]) -> f32 {
//       CHECK:       scf.reduce.return %{{.*}} : f32
//  CHECK-NEXT:     }
//  CHECK-NEXT:   } {mapping = "x"}
//  CHECK-NEXT:   func.return %[[R]] : f32

// The terminator may be written or left implicit; it is always printed.
func.func @implicit_and_explicit_terminator(%n : index, %m : memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %v, %m[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %v, %m[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
// CHECK-LABEL: func.func @implicit_and_explicit_terminator(
//       CHECK:   scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
//  CHECK-NEXT:     memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<?xf32>
//  CHECK-NEXT:     scf.reduce
//  CHECK-NEXT:   }
//  CHECK-NEXT:   scf.parallel (%[[J:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
//  CHECK-NEXT:     memref.store %{{.*}}, %{{.*}}[%[[J]]] : memref<?xf32>
//  CHECK-NEXT:     scf.reduce
//  CHECK-NEXT:   }
