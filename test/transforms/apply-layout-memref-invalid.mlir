// With strict=true, apply-layout refuses memref layout maps it cannot normalize soundly (by
// default it leaves them with a warning; upstream -normalize-memrefs silently aliases or skips).
// RUN: xdsl-opt %s -p 'apply-layout{strict=true}' --split-input-file --verify-diagnostics --allow-unregistered-dialect | filecheck %s

// A map that is not injective on the shape: upstream would let elements 0 and 1 share storage.
func.func @not_injective(%v: f32) {
  %A = memref.alloc() : memref<10xf32, affine_map<(d0) -> (d0 floordiv 2)>>
  %c0 = arith.constant 0 : index
  memref.store %v, %A[%c0] : memref<10xf32, affine_map<(d0) -> (d0 floordiv 2)>>
  func.return
}

// CHECK: apply-layout: cannot normalize memref<10xf32, affine_map<(d0) -> ((d0 floordiv 2))>>: its layout map is not injective on shape [10]: indices [0] and [1] both map to [0]

// -----

// Injective on Z^2 but not on the box: (0, 4) and (1, 0) meet.
func.func @not_injective_on_box(%A: memref<8x8xf32, affine_map<(d0, d1) -> (d0 * 4 + d1)>>) {
  func.return
}

// CHECK: apply-layout: cannot normalize memref<8x8xf32, affine_map<(d0, d1) -> (((d0 * 4) + d1))>>: its layout map is not injective on shape [8, 8]: indices [0, 4] and [1, 0] both map to [4]

// -----

// A use that cannot be rewritten: upstream skips the whole call graph silently.
func.func @subview(%A: memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>) -> memref<4xf32, strided<[1]>> {
  %S = memref.subview %A[0] [4] [1] : memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>> to memref<4xf32, strided<[1]>>
  func.return %S : memref<4xf32, strided<[1]>>
}

// CHECK: apply-layout: cannot normalize memref<16xf32, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>: it is used by 'memref.subview', which cannot be rewritten to the normalized layout (in @subview)

// -----

func.func @copy(%A: memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>, %B: memref<16xf32>) {
  "memref.copy"(%A, %B) : (memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>, memref<16xf32>) -> ()
  func.return
}

// CHECK: apply-layout: cannot normalize memref<16xf32, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>: it is used by 'memref.copy', which cannot be rewritten to the normalized layout (in @copy)

// -----

func.func @unknown_op(%A: memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>) {
  "test.opaque"(%A) : (memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>) -> ()
  func.return
}

// CHECK: apply-layout: cannot normalize memref<16xf32, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>: it is used by 'test.opaque', which cannot be rewritten to the normalized layout (in @unknown_op)

// -----

func.func @loop_carried(%A: memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>) -> memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%B = %A) -> (memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>) {
    scf.yield %B : memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>
  }
  func.return %r : memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>
}

// CHECK: apply-layout: cannot normalize memref<16xf32, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>: it is used by 'scf.for', which cannot be rewritten to the normalized layout (in @loop_carried)

// -----

// A map with a symbol.
func.func @symbol(%A: memref<16xf32, affine_map<(d0)[s0] -> (d0 + s0)>>) {
  func.return
}

// CHECK: apply-layout: cannot normalize memref<16xf32, affine_map<(d0)[s0] -> ((d0 + s0))>>: its layout map has symbols

// -----

func.func @dynamic(%A: memref<?xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>) {
  func.return
}

// CHECK: apply-layout: cannot normalize memref<?xf32, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>: its shape is not static

// -----

// A result below zero has no storage.
func.func @negative(%A: memref<8xf32, affine_map<(d0) -> (d0 - 1)>>) {
  func.return
}

// CHECK: apply-layout: cannot normalize memref<8xf32, affine_map<(d0) -> ((d0 + -1))>>: layout result d0 - 1 has the negative minimum -1 on shape [8] (at index [0])

// -----

func.func @global() -> memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>> {
  %G = memref.get_global @g : memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>
  func.return %G : memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>
}

// CHECK: apply-layout: cannot normalize memref<16xf32, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>: it is produced by 'memref.get_global', which cannot be rewritten to the normalized layout (in @global)
