// Issue 12 item 1 (fixed; a regression test), as the random-program checker found it:
// an in-place stencil over a reversed buffer. apply-layout{rewrite-loops=true} re-iterates
// the nest in physical order (i = 2, 1, 0), but iteration i reads y[i - 1], which the
// logical order has already overwritten: every element differs, and `physlayout run`
// (which always rewrites loops) computes the same wrong values on OpenCL.
//   PYTHONPATH=test/python python -m fuzz.campaign --check THIS_FILE
//   -> apply-layout{rewrite-loops=true}: mismatch; opencl-run: mismatch
func.func @stencil(%y: !layout.buffer<3xf32, transform = #layout.index_map<(i) -> (2 - i)>>) {
  %cm1 = arith.constant -1 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %t4 = arith.addi %i, %cm1 : index
    %t5 = arith.maxsi %t4, %c0 : index
    %v6 = layout.load %y[%t5] : !layout.buffer<3xf32, transform = #layout.index_map<(i) -> (2 - i)>>, f32
    %v7 = layout.load %y[%i] : !layout.buffer<3xf32, transform = #layout.index_map<(i) -> (2 - i)>>, f32
    %t8 = arith.addi %i, %c1 : index
    %t9 = arith.minsi %t8, %c2 : index
    %v10 = layout.load %y[%t9] : !layout.buffer<3xf32, transform = #layout.index_map<(i) -> (2 - i)>>, f32
    %v11 = arith.addf %v6, %v7 : f32
    %v12 = arith.addf %v11, %v10 : f32
    layout.store %v12, %y[%i] : !layout.buffer<3xf32, transform = #layout.index_map<(i) -> (2 - i)>>, f32
  }
  func.return
}
