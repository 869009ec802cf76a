// lower-layout: one case per lowering rule, after apply-layout and flatten-buffers (the
// physlayout-memref pipeline gives the same output: lower-layout itself only lowers).
// Upstream acceptance of this output: lower-layout-upstream.mlir.
// RUN: xdsl-opt %s -p apply-layout,flatten-buffers,lower-layout | filecheck %s
// RUN: xdsl-opt %s -p 'physlayout-memref{rewrite-loops=false}' | filecheck %s
// RUN: xdsl-opt %s -p 'physlayout-memref{rewrite-loops=false affine-loops=false}' | filecheck %s --check-prefix=SCF
// RUN: xdsl-opt %s -p 'physlayout-memref{rewrite-loops=false}' | filecheck %s --check-prefix=NOLAYOUT
// A second run changes nothing:
// RUN: xdsl-opt %s -p 'physlayout-memref{rewrite-loops=false}' --print-op-generic | xdsl-opt -p lower-layout | filecheck %s

// NOLAYOUT-NOT: layout.
// NOLAYOUT-NOT: !layout

// NHWC -> NCHW4c with a separator after h: parameters become memrefs of their transformed
// (unflattened) shape, the flat alias is a collapse_shape grouped by the separator, and the
// raised loops give affine accesses with dimension maps.
// CHECK-LABEL: func.func @relu_nchw4c
// CHECK-SAME:    (%[[IN:.*]]: memref<1x8x8x16xf32>, %[[OUT:.*]]: memref<1x4x8x8x4xf32>)
// CHECK-NEXT:    %[[OUT2D:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0 : i64, 1 : i64, 2 : i64], [3 : i64, 4 : i64]] : memref<1x4x8x8x4xf32> into memref<32x32xf32>
// CHECK-NEXT:    %[[IN1D:.*]] = memref.collapse_shape %[[IN]] {{\[}}[0 : i64, 1 : i64, 2 : i64, 3 : i64]] : memref<1x8x8x16xf32> into memref<1024xf32>
// CHECK:         affine.for %{{.*}} = 0 to 1 {
// CHECK-NEXT:      affine.for %[[H:.*]] = 0 to 8 {
// CHECK-NEXT:        affine.for %[[W:.*]] = 0 to 8 {
// CHECK-NEXT:          affine.for %[[C:.*]] = 0 to 16 {
// CHECK-NEXT:            %[[X:.*]] = affine.load %[[IN1D]][%[[H]] * 128 + %[[W]] * 16 + %[[C]]] : memref<1024xf32>
// CHECK-NEXT:            %[[Y:.*]] = arith.maximumf %[[X]], %{{.*}} : f32
// CHECK-NEXT:            affine.store %[[Y]], %[[OUT2D]][%[[C]] floordiv 4 * 8 + %[[H]], %[[W]] * 4 + %[[C]] mod 4] : memref<32x32xf32>
// CHECK-NEXT:          }
// SCF-LABEL:   func.func @relu_nchw4c
// SCF:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// SCF-NEXT:        scf.for %[[H:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// SCF-NEXT:          scf.for %[[W:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// SCF-NEXT:            scf.for %[[C:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// SCF:                   memref.load %{{.*}}[%{{.*}}] : memref<1024xf32>
// SCF:                   %[[C4:.*]] = arith.divsi %[[C]], %{{.*}} : index
// SCF:                   memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<32x32xf32>
func.func @relu_nchw4c(%in: !layout.buffer<1x8x8x16xf32>, %out: !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c8 step %c1 {
      scf.for %w = %c0 to %c8 step %c1 {
        scf.for %c = %c0 to %c16 step %c1 {
          %v = layout.load %in[%n, %h, %w, %c] : !layout.buffer<1x8x8x16xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %out[%n, %h, %w, %c] : !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>, f32
        }
      }
    }
  }
  func.return
}

// RFC 0039 (first example): constant indices fold into constant maps (no operands);
// function index arguments are valid affine operands.
// CHECK-LABEL: func.func @constant_and_argument_indices
// CHECK-SAME:    (%[[X:.*]]: memref<64x128xf32>, %[[I:.*]]: index, %[[J:.*]]: index)
// CHECK:         %[[F:.*]] = memref.collapse_shape %[[X]]
// CHECK:         %[[V:.*]] = affine.load %[[F]][1295] : memref<8192xf32>
// CHECK-NEXT:    affine.store %{{.*}}, %[[F]][2583] : memref<8192xf32>
// CHECK-NEXT:    %[[W:.*]] = affine.load %[[F]][%[[I]] * 128 + %[[J]]] : memref<8192xf32>
func.func @constant_and_argument_indices(%x: !layout.buffer<64x128xf32>, %i: index, %j: index) -> f32 {
  %c10 = arith.constant 10 : index
  %c15 = arith.constant 15 : index
  %c20 = arith.constant 20 : index
  %c23 = arith.constant 23 : index
  %seven = arith.constant 7.0 : f32
  %v = layout.load %x[%c10, %c15] : !layout.buffer<64x128xf32>, f32
  layout.store %seven, %x[%c20, %c23] : !layout.buffer<64x128xf32>, f32
  %w = layout.load %x[%i, %j] : !layout.buffer<64x128xf32>, f32
  %s = arith.addf %v, %w : f32
  func.return %s : f32
}

// A function-level value the index analysis cannot see through is a valid affine operand;
// a value computed inside a loop is not: that access falls back to memref.load on the
// arith index values.
// CHECK-LABEL: func.func @affine_and_memref_accesses
// CHECK:         %[[K:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK:         affine.for %[[I:.*]] = 0 to 16 {
// CHECK-NEXT:      %[[A:.*]] = affine.load %{{.*}}[%[[I]] * 2 + %[[K]]] : memref<64xf32>
// CHECK-NEXT:      %[[L:.*]] = affine.load %{{.*}}[%[[I]]] : memref<16xi32>
// CHECK-NEXT:      %[[G:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK-NEXT:      %[[B:.*]] = memref.load %{{.*}}[%[[G]]] : memref<64xf32>
func.func @affine_and_memref_accesses(%a: !layout.buffer<64xf32>, %idx: !layout.buffer<16xi32>, %out: !layout.buffer<16xf32>, %k32: i32) {
  %k = arith.index_cast %k32 : i32 to index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %i2 = arith.muli %i, %c2 : index
    %p = arith.addi %i2, %k : index
    %x = layout.load %a[%p] : !layout.buffer<64xf32>, f32
    %g32 = layout.load %idx[%i] : !layout.buffer<16xi32>, i32
    %g = arith.index_cast %g32 : i32 to index
    %y = layout.load %a[%g] : !layout.buffer<64xf32>, f32
    %s = arith.addf %x, %y : f32
    layout.store %s, %out[%i] : !layout.buffer<16xf32>, f32
  }
  func.return
}

// A loop whose bound is not a constant or function-level value stays scf.for, so its
// induction variable is no affine operand: the access uses memref.load.
// CHECK-LABEL: func.func @triangular
// CHECK:         affine.for %[[I:.*]] = 0 to 8 {
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %[[I]] step %{{.*}} {
// CHECK:             memref.load %{{.*}}[%{{.*}}] : memref<64xf32>
// CHECK:             memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<64xf32>
func.func @triangular(%a: !layout.buffer<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %i step %c1 {
      %v = layout.load %a[%j, %i] : !layout.buffer<8x8xf32>, f32
      layout.store %v, %a[%i, %j] : !layout.buffer<8x8xf32>, f32
    }
  }
  func.return
}

// Loop-carried values survive the raise (scf.yield -> affine.yield).
// CHECK-LABEL: func.func @reduction
// CHECK:         %[[S:.*]] = affine.for %[[I:.*]] = 0 to 32 step 2 iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK-NEXT:      %[[V:.*]] = affine.load %{{.*}}[%[[I]]] : memref<32xf32>
// CHECK-NEXT:      %[[N:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:      affine.yield %[[N]] : f32
// CHECK:         func.return %[[S]] : f32
func.func @reduction(%a: !layout.buffer<32xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c32 step %c2 iter_args(%acc = %zero) -> (f32) {
    %v = layout.load %a[%i] : !layout.buffer<32xf32>, f32
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  func.return %s : f32
}

// scf.parallel without reductions becomes affine.parallel (printed in generic form).
// CHECK-LABEL: func.func @parallel_copy
// CHECK:         "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0)>, {{.*}}upperBoundsMap = affine_map<() -> (4, 8)>, {{.*}}steps = [1 : i64, 1 : i64]}> ({
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[V:.*]] = affine.load %{{.*}}[%[[I]] * 8 + %[[J]]] : memref<32xf32>
// CHECK-NEXT:      affine.store %[[V]], %{{.*}}[%[[J]] * 4 + %[[I]]] : memref<32xf32>
// CHECK-NEXT:      affine.yield
func.func @parallel_copy(%a: !layout.buffer<4x8xf32>, %b: !layout.buffer<4x8xf32, transform = #layout.index_map<(i, j) -> (j, i)>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  "scf.parallel"(%c0, %c0, %c4, %c8, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = layout.load %a[%i, %j] : !layout.buffer<4x8xf32>, f32
    layout.store %v, %b[%i, %j] : !layout.buffer<4x8xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, f32
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// Allocations: the flat declaration is the allocation itself; an alias at an offset is a
// reinterpret_cast; the allocation is freed at the end of its block.
// CHECK-LABEL: func.func @allocation
// CHECK:         %[[P:.*]] = memref.alloc() : memref<96xf32>
// CHECK-NEXT:    %[[S:.*]] = memref.reinterpret_cast %[[P]] to offset: [32], sizes: [64], strides: [1] : memref<96xf32> to memref<64xf32, strided<[1], offset: 32>>
// CHECK:         affine.store %{{.*}}, %[[P]][%{{.*}} * 13] : memref<96xf32>
// CHECK-NEXT:    %[[W:.*]] = affine.load %[[S]][%{{.*}} * 9] : memref<64xf32, strided<[1], offset: 32>>
// CHECK-NEXT:    memref.dealloc %[[P]] : memref<96xf32>
// CHECK-NEXT:    func.return %[[W]] : f32
func.func @allocation(%v: f32, %i: index) -> f32 {
  %p = layout.allocate [8, 12] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<8x12xf32>
  %s = layout.decl_buffer %p offset 32 : !layout.ptr<f32> -> !layout.buffer<8x8xf32>
  layout.store %v, %b[%i, %i] : !layout.buffer<8x12xf32>, f32
  %w = layout.load %s[%i, %i] : !layout.buffer<8x8xf32>, f32
  func.return %w : f32
}

// Local scope allocates on the stack (no dealloc).
// CHECK-LABEL: func.func @local_scratch
// CHECK:         %[[T:.*]] = memref.alloca() : memref<16xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return
func.func @local_scratch(%v: f32, %i: index) -> f32 {
  %p = layout.allocate [16] : !layout.ptr<f32, scope = "local">
  %t = layout.decl_buffer %p : !layout.ptr<f32, scope = "local"> -> !layout.buffer<16xf32, scope = "local">
  layout.store %v, %t[%i] : !layout.buffer<16xf32, scope = "local">, f32
  %w = layout.load %t[%i] : !layout.buffer<16xf32, scope = "local">, f32
  func.return %w : f32
}

// Aliases of a parameter: more axes -> expand_shape; a different grouping of the same
// elements -> collapse to one axis, then expand.
// CHECK-LABEL: func.func @parameter_aliases
// CHECK-SAME:    (%[[A:.*]]: memref<64xf32>, %[[B:.*]]: memref<8x12xf32>, %{{.*}}: index)
// CHECK:         %[[E:.*]] = memref.expand_shape %[[A]] {{\[}}[0 : i64, 1 : i64]] output_shape [4, 16] : memref<64xf32> into memref<4x16xf32>
// CHECK:         %[[F:.*]] = memref.collapse_shape %[[B]] {{\[}}[0 : i64, 1 : i64]] : memref<8x12xf32> into memref<96xf32>
// CHECK-NEXT:    %[[G:.*]] = memref.expand_shape %[[F]] {{\[}}[0 : i64, 1 : i64]] output_shape [12, 8] : memref<96xf32> into memref<12x8xf32>
// CHECK:         affine.load %[[E]][%{{.*}}, %{{.*}}] : memref<4x16xf32>
// CHECK:         affine.store %{{.*}}, %[[G]][%{{.*}}, %{{.*}}] : memref<12x8xf32>
func.func @parameter_aliases(%a: !layout.buffer<64xf32>, %b: !layout.buffer<8x12xf32, axis_separators = [1]>, %i: index) {
  %pa = layout.data %a : !layout.buffer<64xf32> -> !layout.ptr<f32>
  %a2 = layout.decl_buffer %pa : !layout.ptr<f32> -> !layout.buffer<4x16xf32, axis_separators = [1]>
  %pb = layout.data %b : !layout.buffer<8x12xf32, axis_separators = [1]> -> !layout.ptr<f32>
  %b2 = layout.decl_buffer %pb : !layout.ptr<f32> -> !layout.buffer<12x8xf32, axis_separators = [1]>
  %v = layout.load %a2[%i, %i] : !layout.buffer<4x16xf32, axis_separators = [1]>, f32
  layout.store %v, %b2[%i, %i] : !layout.buffer<12x8xf32, axis_separators = [1]>, f32
  func.return
}

// Vector element types are kept; a vector value over scalar elements (RFC 0039 option 1,
// `A[T.ramp(0, 1, 4)]`) is an affine.vector_load.
// CHECK-LABEL: func.func @vector_accesses
// CHECK-SAME:    (%[[V:.*]]: memref<16xvector<4xf32>>, %[[S:.*]]: memref<64xf32>, %[[I:.*]]: index)
// CHECK-NEXT:    %[[X:.*]] = affine.load %[[V]][%[[I]]] : memref<16xvector<4xf32>>
// CHECK-NEXT:    %[[Y:.*]] = affine.vector_load %[[S]][%[[I]] * 4] : memref<64xf32>, vector<4xf32>
// CHECK-NEXT:    %[[Z:.*]] = arith.addf %[[X]], %[[Y]] : vector<4xf32>
// CHECK-NEXT:    affine.vector_store %[[Z]], %[[S]][%[[I]] * 4] : memref<64xf32>, vector<4xf32>
func.func @vector_accesses(%v: !layout.buffer<16xvector<4xf32>>, %s: !layout.buffer<64xf32>, %i: index) {
  %c4 = arith.constant 4 : index
  %i4 = arith.muli %i, %c4 : index
  %x = layout.load %v[%i] : !layout.buffer<16xvector<4xf32>>, vector<4xf32>
  %y = layout.load %s[%i4] : !layout.buffer<64xf32>, vector<4xf32>
  %z = arith.addf %x, %y : vector<4xf32>
  layout.store %z, %s[%i4] : !layout.buffer<64xf32>, vector<4xf32>
  func.return
}

// A vector<4xf32> buffer declared over f32 storage (RFC 0039 option 2, `A_vector`):
// a view of the scalars whose innermost index is scaled by the lanes.
// CHECK-LABEL: func.func @vector_view_of_scalars
// CHECK-SAME:    (%[[S:.*]]: memref<64xf32>, %[[I:.*]]: index, %{{.*}}: memref<1xi32>)
// CHECK-NEXT:    %[[X:.*]] = affine.vector_load %[[S]][%[[I]] * 4] : memref<64xf32>, vector<4xf32>
// With an index that is no affine operand (computed in a loop), the scaling is arith math.
// CHECK-NEXT:    affine.for %{{.*}} = 0 to 1 {
// CHECK-NEXT:      %[[G32:.*]] = affine.load %{{.*}}[0] : memref<1xi32>
// CHECK-NEXT:      %[[G:.*]] = arith.index_cast %[[G32]] : i32 to index
// CHECK-NEXT:      %[[K:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[G4:.*]] = arith.muli %[[G]], %[[K]] : index
// CHECK-NEXT:      vector.store %[[X]], %[[S]][%[[G4]]] : memref<64xf32>, vector<4xf32>
func.func @vector_view_of_scalars(%s: !layout.buffer<64xf32>, %i: index, %where: !layout.buffer<1xi32>) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %p = layout.data %s : !layout.buffer<64xf32> -> !layout.ptr<f32>
  %v = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xvector<4xf32>>
  %x = layout.load %v[%i] : !layout.buffer<16xvector<4xf32>>, vector<4xf32>
  %c1 = arith.constant 1 : index
  scf.for %t = %c0 to %c1 step %c1 {
    %g32 = layout.load %where[%t] : !layout.buffer<1xi32>, i32
    %g = arith.index_cast %g32 : i32 to index
    layout.store %x, %v[%g] : !layout.buffer<16xvector<4xf32>>, vector<4xf32>
  }
  func.return %x : vector<4xf32>
}

// An allocation of vector<4xf32> elements with an f32 alias is allocated as f32 scalars.
// CHECK-LABEL: func.func @mixed_element_allocation
// CHECK:         %[[P:.*]] = memref.alloc() : memref<64xf32>
// CHECK-NEXT:    %[[T:.*]] = memref.reinterpret_cast %[[P]] to offset: [8], sizes: [56], strides: [1] : memref<64xf32> to memref<56xf32, strided<[1], offset: 8>>
// CHECK:         affine.vector_store %{{.*}}, %[[P]][%{{.*}} * 4] : memref<64xf32>, vector<4xf32>
// CHECK-NEXT:    %[[X:.*]] = affine.load %[[T]][%{{.*}}] : memref<56xf32, strided<[1], offset: 8>>
// CHECK-NEXT:    memref.dealloc %[[P]] : memref<64xf32>
func.func @mixed_element_allocation(%v: vector<4xf32>, %i: index) -> f32 {
  %p = layout.allocate [16] : !layout.ptr<vector<4xf32>>
  %vec = layout.decl_buffer %p : !layout.ptr<vector<4xf32>> -> !layout.buffer<16xvector<4xf32>>
  %q = layout.data %vec : !layout.buffer<16xvector<4xf32>> -> !layout.ptr<vector<4xf32>>
  %tail = layout.decl_buffer %q offset 2 : !layout.ptr<vector<4xf32>> -> !layout.buffer<56xf32>
  layout.store %v, %vec[%i] : !layout.buffer<16xvector<4xf32>>, vector<4xf32>
  %x = layout.load %tail[%i] : !layout.buffer<56xf32>, f32
  func.return %x : f32
}

// Calls pass the lowered memrefs; a cast of a buffer to an unranked memref (how a driver
// hands a buffer to printMemrefF32) becomes memref.cast of the physical memref, and a cast
// of a memref to a buffer that lowers to the same memref type (memref code calling a
// kernel with a pending transform, passing the physical memref) folds away.
// CHECK-LABEL: func.func @callee
// CHECK-SAME:    (%{{.*}}: memref<4x4xf32>)
// CHECK-LABEL: func.func @caller
// CHECK:         %[[P:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT:    func.call @callee(%[[P]]) : (memref<4x4xf32>) -> ()
// CHECK-NEXT:    %[[U:.*]] = "memref.cast"(%[[P]]) : (memref<4x4xf32>) -> memref<*xf32>
// CHECK-NEXT:    func.call @consume(%[[U]]) : (memref<*xf32>) -> ()
// CHECK-NEXT:    memref.dealloc %[[P]] : memref<4x4xf32>
// CHECK-LABEL: func.func @from_memref
// CHECK-SAME:    (%[[M:.*]]: memref<4x4xf32>)
// CHECK-NEXT:    func.call @callee(%[[M]]) : (memref<4x4xf32>) -> ()
func.func @callee(%b: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  func.return
}
func.func private @consume(memref<*xf32>)
func.func @caller() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>
  func.call @callee(%b) : (!layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) -> ()
  %u = builtin.unrealized_conversion_cast %b : !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>> to memref<*xf32>
  func.call @consume(%u) : (memref<*xf32>) -> ()
  func.return
}
func.func @from_memref(%m: memref<4x4xf32>) {
  %b = builtin.unrealized_conversion_cast %m : memref<4x4xf32> to !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>
  func.call @callee(%b) : (!layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) -> ()
  func.return
}

// A view at an offset has a strided type; it can still be cast to an unranked memref.
// CHECK-LABEL: func.func @print_tail
// CHECK:         %[[P:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT:    %[[T:.*]] = memref.reinterpret_cast %[[P]] to offset: [8], sizes: [8], strides: [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
// CHECK-NEXT:    %[[U:.*]] = "memref.cast"(%[[T]]) : (memref<8xf32, strided<[1], offset: 8>>) -> memref<*xf32>
// CHECK-NEXT:    func.call @consume(%[[U]]) : (memref<*xf32>) -> ()
func.func @print_tail() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %tail = layout.decl_buffer %p offset 8 : !layout.ptr<f32> -> !layout.buffer<8xf32>
  %u = builtin.unrealized_conversion_cast %tail : !layout.buffer<8xf32> to memref<*xf32>
  func.call @consume(%u) : (memref<*xf32>) -> ()
  func.return
}

// Loop bounds that are function-level values become symbol bounds of affine.for.
// CHECK-LABEL: func.func @symbolic_bounds
// CHECK-SAME:    (%[[A:.*]]: memref<64xf32>, %[[LO:.*]]: index, %[[HI:.*]]: index)
// CHECK:         affine.for %[[I:.*]] = %[[LO]] to %[[HI]] step 2 {
// CHECK-NEXT:      affine.store %{{.*}}, %[[A]][%[[I]]] : memref<64xf32>
func.func @symbolic_bounds(%a: !layout.buffer<64xf32>, %lo: index, %hi: index) {
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %lo to %hi step %c2 {
    layout.store %one, %a[%i] : !layout.buffer<64xf32>, f32
  }
  func.return
}
