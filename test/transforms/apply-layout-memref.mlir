// apply-layout normalizes upstream memref layout maps (what `mlir-opt -normalize-memrefs` does):
// each memref<SHAPE x T, affine_map> becomes memref<NEWSHAPE x T> and every access indexes
// through the map. affine.load/affine.store are written in generic form so that their maps use
// dimensions (xDSL reads the custom form `%A[%i]` as symbols).
// RUN: xdsl-opt %s -p apply-layout | filecheck %s
// RUN: xdsl-opt %s -p apply-layout,apply-layout | filecheck %s
// Idempotence across a round trip: a second run over the printed output changes nothing.
// RUN: xdsl-opt %s -p apply-layout --print-op-generic -o %t.once.mlir
// RUN: xdsl-opt %t.once.mlir -p apply-layout --print-op-generic -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

#transpose = affine_map<(d0, d1) -> (d1, d0)>
#tile2d = affine_map<(d0, d1) -> (d0 floordiv 4, d1 floordiv 4, d0 mod 4, d1 mod 4)>
#tile1d = affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>
#spread = affine_map<(d0, d1) -> (d0 * 2, d1 + 1)>

// Permutation: the allocation is transposed and so is every access.
// CHECK-LABEL: func.func @permute
// CHECK-SAME:    (%[[OUT:.*]]: memref<64x256xf32>)
// CHECK:         %[[A:.*]] = memref.alloc() : memref<256x64xf32>
// CHECK-NEXT:    affine.for %[[I:.*]] = 0 to 64 {
// CHECK-NEXT:      affine.for %[[J:.*]] = 0 to 256 {
// CHECK-NEXT:        %[[V:.*]] = affine.load %[[A]][%[[J]], %[[I]]] : memref<256x64xf32>
// CHECK-NEXT:        affine.store %[[V]], %[[OUT]][%[[I]], %[[J]]] : memref<64x256xf32>
// CHECK:         memref.dealloc %[[A]] : memref<256x64xf32>
// CHECK-NOT:     affine.apply
func.func @permute(%out: memref<64x256xf32>) {
  %A = memref.alloc() : memref<64x256xf32, #transpose>
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 256 {
      %v = "affine.load"(%A, %i, %j) <{map = affine_map<(d0, d1) -> (d0, d1)>}> : (memref<64x256xf32, #transpose>, index, index) -> f32
      "affine.store"(%v, %out, %i, %j) <{map = affine_map<(d0, d1) -> (d0, d1)>}> : (f32, memref<64x256xf32>, index, index) -> ()
    }
  }
  memref.dealloc %A : memref<64x256xf32, #transpose>
  func.return
}

// Tiled 2-D layout: 4x4 tiles; the access map becomes the tiling map itself.
// CHECK-LABEL: func.func @tiled_2d
// CHECK:         %[[A:.*]] = memref.alloc() : memref<16x32x4x4xf32>
// CHECK:         affine.for %[[I:.*]] = 0 to 64 {
// CHECK-NEXT:      affine.for %[[J:.*]] = 0 to 128 {
// CHECK-NEXT:        affine.store %{{.*}}, %[[A]][%[[I]] floordiv 4, %[[J]] floordiv 4, %[[I]] mod 4, %[[J]] mod 4] : memref<16x32x4x4xf32>
// CHECK:         memref.dealloc %[[A]] : memref<16x32x4x4xf32>
// CHECK-NOT:     affine.apply
func.func @tiled_2d(%v: f32) {
  %A = memref.alloc() : memref<64x128xf32, #tile2d>
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 128 {
      "affine.store"(%v, %A, %i, %j) <{map = affine_map<(d0, d1) -> (d0, d1)>}> : (f32, memref<64x128xf32, #tile2d>, index, index) -> ()
    }
  }
  memref.dealloc %A : memref<64x128xf32, #tile2d>
  func.return
}

// 1-D tiling with padding: 10 elements in whole tiles of 4 need 3x4. A memref.load at the
// constant 7 reads tile 1, lane 3.
// CHECK-LABEL: func.func @padded_1d
// CHECK:         %[[A:.*]] = memref.alloc() : memref<3x4xf32>
// CHECK-NEXT:    affine.for %[[I:.*]] = 0 to 10 {
// CHECK-NEXT:      affine.store %{{.*}}, %[[A]][%[[I]] floordiv 4, %[[I]] mod 4] : memref<3x4xf32>
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         %[[R:.*]] = memref.load %[[A]][%[[C1]], %[[C3]]] : memref<3x4xf32>
// CHECK-NEXT:    memref.dealloc %[[A]] : memref<3x4xf32>
// CHECK-NEXT:    func.return %[[R]] : f32
func.func @padded_1d(%v: f32) -> f32 {
  %A = memref.alloc() : memref<10xf32, #tile1d>
  affine.for %i = 0 to 10 {
    "affine.store"(%v, %A, %i) <{map = affine_map<(d0) -> (d0)>}> : (f32, memref<10xf32, #tile1d>, index) -> ()
  }
  %c7 = arith.constant 7 : index
  %r = memref.load %A[%c7] : memref<10xf32, #tile1d>
  memref.dealloc %A : memref<10xf32, #tile1d>
  func.return %r : f32
}

// A strided map (every other row, one column of offset) on an alloca: the new extents are
// max + 1 of each result (31 = 15 * 2 + 1, 9 = 7 + 1 + 1).
// CHECK-LABEL: func.func @strided_by_map
// CHECK:         %[[A:.*]] = memref.alloca() : memref<31x9xf32>
// CHECK:         affine.for %[[I:.*]] = 0 to 16 {
// CHECK-NEXT:      affine.for %[[J:.*]] = 0 to 8 {
// CHECK-NEXT:        affine.store %{{.*}}, %[[A]][%[[I]] * 2, %[[J]] + 1] : memref<31x9xf32>
func.func @strided_by_map(%v: f32) {
  %A = memref.alloca() : memref<16x8xf32, #spread>
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 8 {
      "affine.store"(%v, %A, %i, %j) <{map = affine_map<(d0, d1) -> (d0, d1)>}> : (f32, memref<16x8xf32, #spread>, index, index) -> ()
    }
  }
  func.return
}

// Access maps are composed with the layout: (d0, d1 + 1) through the transpose.
// CHECK-LABEL: func.func @composed_access
// CHECK-SAME:    (%[[A:.*]]: memref<8x4xf32>)
// CHECK:         affine.for %[[I:.*]] = 0 to 4 {
// CHECK-NEXT:      affine.for %[[J:.*]] = 0 to 7 {
// CHECK-NEXT:        %[[V:.*]] = affine.load %[[A]][%[[J]] + 1, %[[I]]] : memref<8x4xf32>
// CHECK-NEXT:        affine.store %[[V]], %[[A]][%[[J]], %[[I]]] : memref<8x4xf32>
func.func @composed_access(%A: memref<4x8xf32, #transpose>) {
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 7 {
      %v = "affine.load"(%A, %i, %j) <{map = affine_map<(d0, d1) -> (d0, d1 + 1)>}> : (memref<4x8xf32, #transpose>, index, index) -> f32
      "affine.store"(%v, %A, %i, %j) <{map = affine_map<(d0, d1) -> (d0, d1)>}> : (f32, memref<4x8xf32, #transpose>, index, index) -> ()
    }
  }
  func.return
}

// memref.load/store get their new indices as arith index math, composed with the arithmetic
// that computed the old index and simplified; the old index math is gone.
// CHECK-LABEL: func.func @memref_accesses_in_scf
// CHECK-SAME:    (%[[A:.*]]: memref<8x8xf32>, %[[V:.*]]: f32)
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[N:.*]] = arith.addi %[[I]], %[[C1]] : index
// CHECK-NEXT:      %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:      %[[Q:.*]] = arith.divsi %[[N]], %[[C8]] : index
// CHECK-NEXT:      %[[R:.*]] = arith.remsi %[[N]], %[[C8]] : index
// CHECK-NEXT:      memref.store %[[V]], %[[A]][%[[Q]], %[[R]]] : memref<8x8xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     affine.apply
func.func @memref_accesses_in_scf(%A: memref<64xf32, affine_map<(d0) -> (d0 floordiv 8, d0 mod 8)>>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  scf.for %i = %c0 to %c63 step %c1 {
    %next = arith.addi %i, %c1 : index
    memref.store %v, %A[%next] : memref<64xf32, affine_map<(d0) -> (d0 floordiv 8, d0 mod 8)>>
  }
  func.return
}

// Across calls: signatures, call sites, returns and the callee's accesses change together.
// CHECK-LABEL: func.func @callee
// CHECK-SAME:    (%[[A:.*]]: memref<4x4xf32>) -> memref<4x4xf32>
// CHECK:         %[[V:.*]] = memref.load %[[A]][%[[C1:.*]], %[[C1]]] : memref<4x4xf32>
// CHECK:         memref.store %[[V]], %[[A]][%{{.*}}, %{{.*}}] : memref<4x4xf32>
// CHECK:         func.return %[[A]] : memref<4x4xf32>
func.func @callee(%A: memref<16xf32, #tile1d>) -> memref<16xf32, #tile1d> {
  %c5 = arith.constant 5 : index
  %v = memref.load %A[%c5] : memref<16xf32, #tile1d>
  memref.store %v, %A[%c5] : memref<16xf32, #tile1d>
  func.return %A : memref<16xf32, #tile1d>
}

// CHECK-LABEL: func.func @caller
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT:    %[[B:.*]] = func.call @callee(%[[A]]) : (memref<4x4xf32>) -> memref<4x4xf32>
// CHECK-NEXT:    memref.dealloc %[[B]] : memref<4x4xf32>
func.func @caller() {
  %A = memref.alloc() : memref<16xf32, #tile1d>
  %B = func.call @callee(%A) : (memref<16xf32, #tile1d>) -> memref<16xf32, #tile1d>
  memref.dealloc %B : memref<16xf32, #tile1d>
  func.return
}

// Declarations follow the type too; symbol operands (custom affine syntax) compose as well.
// CHECK-LABEL: func.func private @external(memref<4x4xf32>) -> memref<4x4xf32>
// CHECK-LABEL: func.func @uses_external
// CHECK-SAME:    (%[[A:.*]]: memref<4x4xf32>, %[[N:.*]]: index)
// CHECK-NEXT:    %[[B:.*]] = func.call @external(%[[A]]) : (memref<4x4xf32>) -> memref<4x4xf32>
// CHECK-NEXT:    %[[V:.*]] = affine.load %[[B]][%[[N]] floordiv 4, %[[N]] mod 4] : memref<4x4xf32>
// CHECK-NEXT:    affine.store %[[V]], %[[A]][(%[[N]] + 3) floordiv 4, (%[[N]] + 3) mod 4] : memref<4x4xf32>
func.func private @external(memref<16xf32, #tile1d>) -> memref<16xf32, #tile1d>
func.func @uses_external(%A: memref<16xf32, #tile1d>, %n: index) -> f32 {
  %B = func.call @external(%A) : (memref<16xf32, #tile1d>) -> memref<16xf32, #tile1d>
  %v = affine.load %B[%n] : memref<16xf32, #tile1d>
  affine.store %v, %A[%n + 3] : memref<16xf32, #tile1d>
  func.return %v : f32
}

// The memory space is kept.
// CHECK-LABEL: func.func @memory_space
// CHECK:         memref.alloc() : memref<2x4xf32, 1 : i64>
func.func @memory_space(%v: f32) {
  %A = memref.alloc() : memref<8xf32, affine_map<(d0) -> (d0 mod 2, d0 floordiv 2)>, 1>
  %c0 = arith.constant 0 : index
  memref.store %v, %A[%c0] : memref<8xf32, affine_map<(d0) -> (d0 mod 2, d0 floordiv 2)>, 1>
  func.return
}

// Already normalized layouts are left alone: strided layouts and identity maps.
// CHECK-LABEL: func.func @already_normalized
// CHECK-SAME:    memref<4x4xf32, strided<[1, 4]>>
// CHECK-SAME:    memref<8xf32, affine_map<(d0) -> (d0)>>
// CHECK:         memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<4x4xf32, strided<[1, 4]>>
// CHECK:         memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<8xf32, affine_map<(d0) -> (d0)>>
func.func @already_normalized(%S: memref<4x4xf32, strided<[1, 4]>>, %I: memref<8xf32, affine_map<(d0) -> (d0)>>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %S[%c0, %c0] : memref<4x4xf32, strided<[1, 4]>>
  memref.store %v, %I[%c0] : memref<8xf32, affine_map<(d0) -> (d0)>>
  func.return
}
