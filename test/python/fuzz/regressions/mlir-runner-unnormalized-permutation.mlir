// Regression, fixed (checker): memrefs left unnormalized (a negative minimum, as
// mlir-opt -normalize-memrefs leaves them) cannot be lowered to LLVM by mlir-opt-22; the
// checker skips mlir-runner for a module that keeps any non-identity affine layout.
// Found by the 2,000-program confirmation run:
// fuzz buffer program (minimized): mlir-runner -> MISMATCH (1 program(s) in this class)
// detail: @k0: MlirRunError: mlir-runner failed (exit 1):
// class: buffer | mlir-runner | mismatch | MlirRunError: mlir-runner failed (exit N):
// features used: item1_loop_dependences, item9a_unnormalizable_memrefs
// re-check: PYTHONPATH=test/python python -m fuzz.campaign --check THIS_FILE
// fuzz-functions: [{"name": "k0", "param_types": ["memref<1x1x1xf32, affine_map<(d0, d1, d2) -> (d0 * 1 + d1, d2)>>", "memref<1x1x1xf32, affine_map<(d0, d1, d2) -> (d0, d2, d1)>>"], "written_params": [0], "allocates": false, "calls": false, "result": false}, {"name": "k1", "param_types": ["memref<1x1x1xf32, affine_map<(d0, d1, d2) -> (d0, d1, d2 - 1)>>", "memref<1x1x1xf32>"], "written_params": [1], "allocates": false, "calls": false, "result": false}]
func.func @k0(%a0: memref<1x1x1xf32, affine_map<(d0, d1, d2) -> (d0 * 1 + d1, d2)>>, %a1: memref<1x1x1xf32, affine_map<(d0, d1, d2) -> (d0, d2, d1)>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f0 = arith.constant 0.0 : f32
  scf.for %i1 = %c0 to %c1 step %c1 {
    scf.for %i2 = %c0 to %c1 step %c1 {
      %v5 = scf.for %i4 = %c0 to %c1 step %c1 iter_args(%v3 = %f0) -> (f32) {
        %v6 = memref.load %a1[%i4, %i1, %i2] : memref<1x1x1xf32, affine_map<(d0, d1, d2) -> (d0, d2, d1)>>
        %v7 = arith.addf %v3, %v6 : f32
        memref.store %v7, %a0[%i4, %i1, %i2] : memref<1x1x1xf32, affine_map<(d0, d1, d2) -> (d0 * 1 + d1, d2)>>
        scf.yield %v7 : f32
      }
    }
  }
  func.return
}

func.func @k1(%a0: memref<1x1x1xf32, affine_map<(d0, d1, d2) -> (d0, d1, d2 - 1)>>, %a1: memref<1x1x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i1 = %c0 to %c1 step %c1 {
    scf.for %i2 = %c0 to %c1 step %c1 {
      scf.for %i3 = %c0 to %c1 step %c1 {
        %v4 = memref.load %a0[%i1, %i2, %i3] : memref<1x1x1xf32, affine_map<(d0, d1, d2) -> (d0, d1, d2 - 1)>>
        memref.store %v4, %a1[%i1, %i2, %i3] : memref<1x1x1xf32>
      }
    }
  }
  func.return
}
