// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %s --entry split4_of_3 --check --rtol 0 | filecheck %s --check-prefix=SPLIT
// RUN: physlayout run --texture-storage image %s --entry mod16_of_14 --check --rtol 0 | filecheck %s --check-prefix=MOD
// RUN: physlayout run --texture-storage image %s --entry split_then_transpose --check --rtol 0 | filecheck %s --check-prefix=LIST

// Global buffers smaller than one tile run on OpenCL (issue 12 item 3): the kernels write
// the physical [1, 4], [16] and [4, 1] buffers, padding included, and the logical values
// read back through the layouts equal the numpy evaluator's. The [1, 4] buffer's loop
// over its 4 columns (a masked if: column 3 is padding) becomes one vector<4xf32> store
// (vectorize-texels), so that kernel is one work-item.
// SPLIT: split4_of_3 {{.*}} global size [1]
// SPLIT: %y {{.*}} OK
// SPLIT-NEXT: check: passed
// MOD: mod16_of_14 {{.*}} global size [16]
// MOD: %y {{.*}} OK
// MOD-NEXT: check: passed
// LIST: split_then_transpose {{.*}} global size [4]
// LIST: %y {{.*}} OK
// LIST-NEXT: check: passed

func.func @split4_of_3(%x: !layout.buffer<3xf32>, %y: !layout.buffer<3xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = -1.0 : f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<3xf32>, f32
    layout.store %v, %y[%i] : !layout.buffer<3xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = -1.0 : f32>, f32
  }
  func.return
}
func.func @mod16_of_14(%x: !layout.buffer<14xf32>, %y: !layout.buffer<14xf32, transform = #layout.index_map<(i) -> (i mod 16)>, pad_value = 0.0 : f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  scf.for %i = %c0 to %c14 step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<14xf32>, f32
    layout.store %v, %y[%i] : !layout.buffer<14xf32, transform = #layout.index_map<(i) -> (i mod 16)>, pad_value = 0.0 : f32>, f32
  }
  func.return
}
func.func @split_then_transpose(%x: !layout.buffer<3xf32>, %y: !layout.buffer<3xf32, transform = [#layout.index_map<(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a, b) -> (b, a)>], pad_value = -1.0 : f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<3xf32>, f32
    layout.store %v, %y[%i] : !layout.buffer<3xf32, transform = [#layout.index_map<(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a, b) -> (b, a)>], pad_value = -1.0 : f32>, f32
  }
  func.return
}
