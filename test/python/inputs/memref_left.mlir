func.func @f() {
  %T = memref.alloc() : memref<10xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>
  %S = memref.alloc() : memref<10xf32, affine_map<(d0) -> (d0 floordiv 2)>>
  func.return
}
