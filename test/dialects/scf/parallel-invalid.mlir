// Malformed custom-syntax scf.parallel / scf.reduce: located diagnostics, no traceback.
// RUN: physlayout-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @init_without_types(%n : index, %x : f32) {
  %r = scf.parallel (%i) = (%n) to (%n) step (%n) init (%x) {
    scf.reduce(%x : f32) {
    ^bb0(%l : f32, %r2 : f32):
      scf.reduce.return %l : f32
    }
  }
  return
}
// CHECK: parallel-invalid.mlir:[[# @LINE - 8]]:{{[0-9]+}}: error: scf.parallel has 1 init values but 0 result types

// -----
func.func @more_ivs_than_bounds(%n : index) {
  scf.parallel (%i, %j) = (%n) to (%n) step (%n) {
  }
  return
}
// CHECK: parallel-invalid.mlir:[[# @LINE - 4]]:3: error: 'scf.parallel' op Number of block arguments must exactly equal the number of induction variables

// -----
func.func @reduce_operand_type_count(%n : index, %x : f32) {
  %r = scf.parallel (%i) = (%n) to (%n) step (%n) init (%x) -> f32 {
    scf.reduce(%x, %x : f32) {
    ^bb0(%l : f32, %r2 : f32):
      scf.reduce.return %l : f32
    }
  }
  return
}
// CHECK: parallel-invalid.mlir:[[# @LINE - 7]]:{{[0-9]+}}: error: scf.reduce has 2 operands but 1 types

// -----
func.func @bound_not_index(%n : index, %x : i32) {
  scf.parallel (%i) = (%x) to (%n) step (%n) {
  }
  return
}
// CHECK: parallel-invalid.mlir:[[# @LINE - 4]]:24: error: operand is used with type index, but has been previously used or defined with type i32
