// normalize-memref-layouts on its own: the memref half of apply-layout as a registered pass.
// It normalizes upstream memref layout maps and leaves `!layout.buffer` transforms pending
// (those are apply-layout's); its diagnostics name it.
// RUN: xdsl-opt %s -p normalize-memref-layouts | filecheck %s
// RUN: xdsl-opt %s -p normalize-memref-layouts,normalize-memref-layouts | filecheck %s
// RUN: xdsl-opt %s -p normalize-memref-layouts 2>&1 >/dev/null | filecheck %s --check-prefix=WARN
// RUN: not xdsl-opt %s -p 'normalize-memref-layouts{strict=true}' 2>&1 | filecheck %s --check-prefix=STRICT
// apply-layout runs it as its last step: same memref types.
// RUN: xdsl-opt %s -p apply-layout | filecheck %s --check-prefix=APPLY

#tile1d = affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>

// CHECK-LABEL: func.func @tiled
// CHECK-SAME:    (%[[A:.*]]: memref<3x4xf32>, %[[I:.*]]: index)
// CHECK:         %[[T:.*]] = arith.divsi %[[I]], %[[C4:.*]] : index
// CHECK-NEXT:    %[[L:.*]] = arith.remsi %[[I]], %[[C4]] : index
// CHECK-NEXT:    memref.load %[[A]][%[[T]], %[[L]]] : memref<3x4xf32>
// APPLY-LABEL: func.func @tiled
// APPLY-SAME:    memref<3x4xf32>
func.func @tiled(%A: memref<10xf32, #tile1d>, %i: index) -> f32 {
  %v = memref.load %A[%i] : memref<10xf32, #tile1d>
  func.return %v : f32
}

// A pending buffer transform is not this pass's business.
// CHECK-LABEL: func.func @buffer_left_pending
// CHECK-SAME:    transform = #layout.index_map
// APPLY-LABEL: func.func @buffer_left_pending
// APPLY-NOT:     transform =
func.func @buffer_left_pending(%B: !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  func.return
}

// Not injective: left with a warning (refused with strict=true), named by this pass.
// CHECK-LABEL: func.func @halves
// CHECK-SAME:    memref<8xf32, affine_map<(d0) -> ((d0 floordiv 2))>>
// WARN: warning: normalize-memref-layouts: left memref<8xf32, affine_map<(d0) -> ((d0 floordiv 2))>> unnormalized: its layout map is not injective on shape [8]
// STRICT: normalize-memref-layouts: cannot normalize memref<8xf32, affine_map<(d0) -> ((d0 floordiv 2))>>: its layout map is not injective on shape [8]
func.func @halves(%A: memref<8xf32, affine_map<(d0) -> (d0 floordiv 2)>>) {
  func.return
}
