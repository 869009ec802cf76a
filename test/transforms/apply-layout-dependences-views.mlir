// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true}' | filecheck %s
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// Views of one storage with different layouts are compared byte by byte in the storage.
// (Kept out of the numeric before/after check of apply-layout-dependences.mlir: the
// evaluator gives a physical view of a pending-transform buffer its physical meaning only
// once issue 12 item 2 is fixed.)

!T = !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>>
!X = !layout.buffer<16xf32>
!V = !layout.buffer<4xvector<4xf32>>

// A physical view of the storage: compared byte by byte in the storage (y[i] lies at
// physical element 4 * (i mod 4) + i floordiv 4).
// CHECK-LABEL: func.func @physical_view
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=1) and (i=4) access one element, %flat[1] (load) and %y[4] (store); the new order runs (i=4) first
func.func @physical_view(%y: !T) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %p = layout.data %y : !T -> !layout.ptr<f32>
  %flat = layout.decl_buffer %p : !layout.ptr<f32> -> !X
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %flat[%i] : !X, f32
    layout.store %v, %y[%i] : !T, f32
  }
  func.return
}

// The physical view written through vectors of 4: physical vector k holds y[k], y[k + 4],
// y[k + 8] and y[k + 12]. Iteration 1 writes vector 0, which holds y[4], before iteration
// 4 stores y[4].
// CHECK-LABEL: func.func @physical_vectors
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=1) and (i=4) access one element, %y[1] (load) and %v[1] (store); the new order runs (i=4) first
func.func @physical_vectors(%y: !T) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c4 = arith.constant 4 : index
  %p = layout.data %y : !T -> !layout.ptr<f32>
  %v = layout.decl_buffer %p : !layout.ptr<f32> -> !V
  scf.for %i = %c0 to %c16 step %c1 {
    %a = layout.load %y[%i] : !T, f32
    %k = arith.divsi %i, %c4 : index
    %w = vector.broadcast %a : f32 to vector<4xf32>
    layout.store %w, %v[%k] : !V, vector<4xf32>
    layout.store %a, %y[%i] : !T, f32
  }
  func.return
}

// Views at different offsets of one parameter: the bytes of %lo and %hi do not overlap,
// so the nest that copies %hi into %lo is re-iterated; %mid overlaps both.
// CHECK-LABEL: func.func @disjoint_views
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// REMARK: remark: apply-layout: re-iterated the loop nest over %i in the physical order of %lo
func.func @disjoint_views(%y: !layout.buffer<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %p = layout.data %y : !layout.buffer<32xf32> -> !layout.ptr<f32>
  %lo = layout.decl_buffer %p : !layout.ptr<f32> -> !T
  %hi = layout.decl_buffer %p offset 16 : !layout.ptr<f32> -> !X
  scf.for %i = %c0 to %c16 step %c1 {
    %a = layout.load %hi[%i] : !X, f32
    layout.store %a, %lo[%i] : !T, f32
  }
  func.return
}

// CHECK-LABEL: func.func @overlapping_views
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=3) and (i=14) access one element, %mid[3] (load) and %lo[14] (store); the new order runs (i=14) first
func.func @overlapping_views(%y: !layout.buffer<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %p = layout.data %y : !layout.buffer<32xf32> -> !layout.ptr<f32>
  %lo = layout.decl_buffer %p : !layout.ptr<f32> -> !T
  %mid = layout.decl_buffer %p offset 8 : !layout.ptr<f32> -> !X
  scf.for %i = %c0 to %c16 step %c1 {
    %a = layout.load %mid[%i] : !X, f32
    layout.store %a, %lo[%i] : !T, f32
  }
  func.return
}

// The re-iterated nest would write the padding of %y (logical i lies at physical
// [i mod 4, i floordiv 4] of a 4x3 box: physical elements 8 and 11 are padding), which
// another view of its storage can see.
// The padding is filled at the function's entry, then the nest runs in logical order.
// CHECK-LABEL: func.func @padding_seen_by_a_view
// CHECK:         scf.if
// CHECK:         layout.decl_buffer
// CHECK-NEXT:    scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: %flat, %y are views of one storage and the physical order would also write the padding of %y
!P = !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>, pad_value = 0.0 : f32>
func.func @padding_seen_by_a_view(%y: !P, %out: !layout.buffer<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %p = layout.data %y : !P -> !layout.ptr<f32>
  %flat = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<10xf32>
  scf.for %i = %c0 to %c10 step %c1 {
    %v = layout.load %flat[%c8] : !layout.buffer<10xf32>, f32
    layout.store %v, %out[%i] : !layout.buffer<10xf32>, f32
    layout.store %v, %y[%i] : !P, f32
  }
  func.return
}

// Views whose element width is unknown (index) cannot be placed in their storage.
// CHECK-LABEL: func.func @index_views
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: %a, %b share allocation %p at offsets that cannot be compared
func.func @index_views() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %p = layout.allocate [16] : !layout.ptr<index>
  %a = layout.decl_buffer %p : !layout.ptr<index> -> !layout.buffer<16xindex, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>>
  %b = layout.decl_buffer %p : !layout.ptr<index> -> !layout.buffer<16xindex>
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %b[%i] : !layout.buffer<16xindex>, index
    layout.store %v, %a[%i] : !layout.buffer<16xindex, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>>, index
  }
  func.return
}
