// lower-layout refuses what upstream memref cannot express, with a diagnostic naming it.
// RUN: xdsl-opt %s -p lower-layout --split-input-file --verify-diagnostics | filecheck %s

// Upstream memref has no element-type cast: an f32 view of vector<4xf32> argument storage.
func.func @scalar_view_of_vectors(%v: !layout.buffer<16xvector<4xf32>>, %i: index) -> f32 {
  %p = layout.data %v : !layout.buffer<16xvector<4xf32>> -> !layout.ptr<vector<4xf32>>
  %s = layout.decl_buffer %p : !layout.ptr<vector<4xf32>> -> !layout.buffer<64xf32>
  %x = layout.load %s[%i] : !layout.buffer<64xf32>, f32
  func.return %x : f32
}
// CHECK: lower-layout: cannot view storage of vector<4xf32> as %s of f32: upstream memref has no element-type cast (declare the storage with the scalar type)

// -----

// Storage of 2-D vector elements cannot be shared with scalar views.
func.func @matrix_elements(%i: index) -> f32 {
  %p = layout.allocate [4] : !layout.ptr<vector<2x2xf32>>
  %m = layout.decl_buffer %p : !layout.ptr<vector<2x2xf32>> -> !layout.buffer<4xvector<2x2xf32>>
  %s = layout.decl_buffer %p : !layout.ptr<vector<2x2xf32>> -> !layout.buffer<16xf32>
  %x = layout.load %s[%i] : !layout.buffer<16xf32>, f32
  func.return %x : f32
}
// CHECK: lower-layout: cannot allocate !layout.ptr<vector<2x2xf32>> storage viewed with other element types: only 1-D vector elements can share scalar storage

// -----

// A buffer declared over a !layout.ptr argument has no storage to view.
func.func @pointer_argument(%p: !layout.ptr<f32>, %i: index) -> f32 {
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32>
  %x = layout.load %b[%i] : !layout.buffer<16xf32>, f32
  func.return %x : f32
}
// CHECK: lower-layout: the data handle of %b has no storage: declare buffers over a layout.allocate or the layout.data of a buffer, not over a !layout.ptr argument

// -----

// An alias larger than the argument it views.
func.func @alias_too_large(%a: !layout.buffer<16xf32>, %i: index) -> f32 {
  %p = layout.data %a : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %big = layout.decl_buffer %p offset 4 : !layout.ptr<f32> -> !layout.buffer<16xf32>
  %x = layout.load %big[%i] : !layout.buffer<16xf32>, f32
  func.return %x : f32
}
// CHECK: lower-layout: the input has invalid buffers (see verify-buffers)
// CHECK-NEXT: verify-buffers: buffer %big of 64 bytes at byte offset 16 does not fit in its storage (parameter %a) of 64 bytes

// -----

// A buffer of vector elements over scalar storage lowers to a scalar view: it cannot be
// passed where the buffer's own type is expected.
func.func private @use(!layout.buffer<4xvector<4xf32>>)
func.func @vector_view_to_call() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %vec = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<4xvector<4xf32>>
  func.call @use(%vec) : (!layout.buffer<4xvector<4xf32>>) -> ()
  func.return
}
// CHECK: lower-layout: %vec lowers to a view of type memref<16xf32>, not memref<4xvector<4xf32>>, so it cannot be passed to 'func.call'; only layout.load/layout.store may use a buffer declared with another element type than its storage

// -----

// A cast whose two sides lower to different memrefs (the buffer as apply-layout leaves it).
func.func @wrong_cast(%b: !layout.buffer<4x4xf32>) -> memref<16xf32> {
  %m = builtin.unrealized_conversion_cast %b : !layout.buffer<4x4xf32> to memref<16xf32>
  func.return %m : memref<16xf32>
}
// CHECK: lower-layout: cannot cast %b to memref<16xf32>: the buffer lowers to memref<4x4xf32>

// -----

// A data handle handed to other code.
func.func private @take(!layout.ptr<f32>)
func.func @pointer_escapes() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  func.call @take(%p) : (!layout.ptr<f32>) -> ()
  func.return
}
// CHECK: lower-layout: cannot lower 'func.call': it uses %p of type !layout.ptr<f32>

// -----

// A !layout.ptr argument nothing is declared over.
func.func @unused_pointer(%p: !layout.ptr<f32>) {
  func.return
}
// CHECK: lower-layout: cannot lower 'func.func': it still uses !layout.ptr<f32>

// -----

// lower-layout lowers only: a buffer accessed before flatten-buffers is refused, pointing
// at the access.
func.func @not_flat(%a: !layout.buffer<4x4xf32>, %i: index) -> f32 {
  %x = layout.load %a[%i, %i] : !layout.buffer<4x4xf32>, f32
  func.return %x : f32
}
// CHECK: lower-layout: 'layout.load' accesses %a of type !layout.buffer<4x4xf32>, which is not flat (physical shape [16]); run physlayout-memref (or apply-layout,flatten-buffers) first (flatten-buffers flattens function parameters and layout.decl_buffer results)
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      "layout.load"
// CHECK-NEXT: ^^^^^^^^^^^^^
// CHECK-NEXT: | 'layout.load' accesses %a

// -----

// flatten-buffers flattens parameters and declarations only; a buffer made from a memref
// by a cast and accessed as 2-D is not flat.
func.func @accessed_cast(%m: memref<4x4xf32>, %i: index) -> f32 {
  %b = builtin.unrealized_conversion_cast %m : memref<4x4xf32> to !layout.buffer<4x4xf32>
  %x = layout.load %b[%i, %i] : !layout.buffer<4x4xf32>, f32
  func.return %x : f32
}
// CHECK: lower-layout: 'layout.load' accesses %b of type !layout.buffer<4x4xf32>, which is not flat (physical shape [16]); run physlayout-memref (or apply-layout,flatten-buffers) first (flatten-buffers flattens function parameters and layout.decl_buffer results)

// -----

// lower-layout does not apply layouts: a pending transform is refused (physlayout-memref
// applies it; its diagnostics are then apply-layout's: see physlayout-memref.mlir).
func.func @not_injective(%a: !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>) {
  func.return
}
// CHECK: lower-layout: %a of type !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>> in @not_injective has a pending transform; run physlayout-memref (or apply-layout,flatten-buffers) first

// -----

// A pending transform on a declared buffer, pointing at the declaration.
func.func @pending_declaration() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>
  func.return
}
// CHECK: lower-layout: %b of type !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>> in 'layout.decl_buffer' has a pending transform; run physlayout-memref (or apply-layout,flatten-buffers) first
// CHECK:      "layout.decl_buffer"
// CHECK-NEXT: ^^^^^^^^^^^^^^^^^^^^
