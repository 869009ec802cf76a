// physlayout-memref = apply-layout{rewrite-loops}, flatten-buffers, lower-layout: pending
// transforms are applied (with apply-layout's diagnostics), then lowered.
// RUN: xdsl-opt %s -p physlayout-memref --split-input-file --verify-diagnostics | filecheck %s
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,lower-layout' --split-input-file --verify-diagnostics | filecheck %s

func.func @not_injective(%a: !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>) {
  func.return
}
// CHECK: apply-layout: %a of type !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>: index map (i) -> (i floordiv 2) is not injective on shape [8]: indices [0] and [1] both map to [0]

// -----

func.func @tiled(%a: !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>, %i: index) -> f32 {
  %x = layout.load %a[%i] : !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>, f32
  func.return %x : f32
}
// CHECK-LABEL: func.func @tiled
// CHECK-SAME:    (%[[A:.*]]: memref<2x4xf32>, %[[I:.*]]: index) -> f32
// CHECK:         memref.collapse_shape %[[A]] {{.*}} into memref<8xf32>
// CHECK:         affine.load
// CHECK-NOT:     layout.
