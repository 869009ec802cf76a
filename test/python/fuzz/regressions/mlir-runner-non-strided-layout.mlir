// Regression, fixed (checker): a module keeping a non-strided memref layout (left
// unnormalized, as mlir-opt -normalize-memrefs leaves it) cannot be lowered to LLVM by
// mlir-opt-22, so mlir-runner fails on every function of it; the checker now skips
// mlir-runner for such modules instead of reporting a mismatch. Found by the
// 10,000-program campaign:
// fuzz buffer program (minimized): mlir-runner -> MISMATCH (2 program(s) in this class)
// detail: @k1: MlirRunError: mlir-runner failed (exit 1):
// class: buffer | mlir-runner | mismatch | MlirRunError: mlir-runner failed (exit N):
// features used: item1_loop_dependences, item3_small_padded_tiles, item9a_unnormalizable_memrefs
// re-check: PYTHONPATH=test/python python -m fuzz.campaign --check THIS_FILE
// fuzz-functions: [{"name": "k0", "param_types": ["memref<1xf32, affine_map<(d0) -> (d0)>>", "memref<1xf32, affine_map<(d0) -> (d0 floordiv 4, (d0 mod 4) - 1)>>"], "written_params": [0], "allocates": false, "calls": false, "result": false}, {"name": "k1", "param_types": ["memref<1xf32>", "memref<1xf32>"], "written_params": [1], "allocates": false, "calls": false, "result": false}]
func.func @k0(%a0: memref<1xf32, affine_map<(d0) -> (d0)>>, %a1: memref<1xf32, affine_map<(d0) -> (d0 floordiv 4, (d0 mod 4) - 1)>>) {
  %cm1 = arith.constant -1 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i1 = %c0 to %c1 step %c1 {
    %t2 = arith.addi %i1, %cm1 : index
    %t3 = arith.maxsi %t2, %c0 : index
    %v4 = memref.load %a1[%t3] : memref<1xf32, affine_map<(d0) -> (d0 floordiv 4, (d0 mod 4) - 1)>>
    %v5 = memref.load %a1[%i1] : memref<1xf32, affine_map<(d0) -> (d0 floordiv 4, (d0 mod 4) - 1)>>
    %t6 = arith.addi %i1, %c1 : index
    %t7 = arith.minsi %t6, %c0 : index
    %v8 = memref.load %a1[%t7] : memref<1xf32, affine_map<(d0) -> (d0 floordiv 4, (d0 mod 4) - 1)>>
    %v9 = arith.addf %v4, %v5 : f32
    %v10 = arith.addf %v9, %v8 : f32
    memref.store %v10, %a0[%i1] : memref<1xf32, affine_map<(d0) -> (d0)>>
  }
  func.return
}

func.func @k1(%a0: memref<1xf32>, %a1: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i1 = %c0 to %c1 step %c1 {
    %v2 = memref.load %a0[%i1] : memref<1xf32>
    memref.store %v2, %a1[%i1] : memref<1xf32>
  }
  func.return
}
