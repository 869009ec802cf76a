// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %s --check --rtol 0 | filecheck %s

// RFC DeclBuffer "physical view": a texture allocation is written through its logical NHWC
// view (a pending NCHW4c transform) and read back through views declared over the same
// handle: its 2-D image view, its 5-D transformed view, and a second logical view with the
// same transform. The storage is physical once the transform is applied, so the 2-D view
// reads y[(n * 2 + c floordiv 4) * 4 + h][w * 4 + c mod 4] = x[n][h][w][c] (the numpy
// evaluator gives every view this meaning: check passed, exactly).
// CHECK: @main: 4 launch(es)
// CHECK:      %x {{.*}} OK
// CHECK-NEXT: %y {{.*}} max|opencl - numpy| = 0 (relative 0)  OK
// CHECK-NEXT: %z {{.*}} max|opencl - numpy| = 0 (relative 0)  OK
// CHECK-NEXT: %w {{.*}} max|opencl - numpy| = 0 (relative 0)  OK
// CHECK-NEXT: check: passed (rtol 0)

func.func @write(%x: !layout.buffer<1x4x4x8xf32>, %t: !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c4 step %c1 {
      scf.for %w = %c0 to %c4 step %c1 {
        scf.for %c = %c0 to %c8 step %c1 {
          %v = layout.load %x[%n, %h, %w, %c] : !layout.buffer<1x4x4x8xf32>, f32
          layout.store %v, %t[%n, %h, %w, %c] : !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

func.func @read_image(%p: !layout.buffer<8x16xf32, axis_separators = [1], scope = "global.texture">, %y: !layout.buffer<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %r = %c0 to %c8 step %c1 {
    scf.for %q = %c0 to %c16 step %c1 {
      %v = layout.load %p[%r, %q] : !layout.buffer<8x16xf32, axis_separators = [1], scope = "global.texture">, f32
      layout.store %v, %y[%r, %q] : !layout.buffer<8x16xf32>, f32
    }
  }
  func.return
}

func.func @read_nchw4c(%p: !layout.buffer<1x2x4x4x4xf32, scope = "global.texture">, %z: !layout.buffer<1x2x4x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %k = %c0 to %c2 step %c1 {
      scf.for %h = %c0 to %c4 step %c1 {
        scf.for %w = %c0 to %c4 step %c1 {
          scf.for %l = %c0 to %c4 step %c1 {
            %v = layout.load %p[%n, %k, %h, %w, %l] : !layout.buffer<1x2x4x4x4xf32, scope = "global.texture">, f32
            layout.store %v, %z[%n, %k, %h, %w, %l] : !layout.buffer<1x2x4x4x4xf32>, f32
          }
        }
      }
    }
  }
  func.return
}

func.func @read_logical(%t: !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">, %o: !layout.buffer<1x4x4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c4 step %c1 {
      scf.for %w = %c0 to %c4 step %c1 {
        scf.for %c = %c0 to %c8 step %c1 {
          %v = layout.load %t[%n, %h, %w, %c] : !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">, f32
          layout.store %v, %o[%n, %h, %w, %c] : !layout.buffer<1x4x4x8xf32>, f32
        }
      }
    }
  }
  func.return
}

func.func @main(%x: !layout.buffer<1x4x4x8xf32>, %y: !layout.buffer<8x16xf32>, %z: !layout.buffer<1x2x4x4x4xf32>, %w: !layout.buffer<1x4x4x8xf32>) {
  %p = layout.allocate [1, 4, 4, 8] : !layout.ptr<f32, scope = "global.texture">
  %t = layout.decl_buffer %p : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">
  %image = layout.decl_buffer %p : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<8x16xf32, axis_separators = [1], scope = "global.texture">
  %nchw4c = layout.decl_buffer %p : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<1x2x4x4x4xf32, scope = "global.texture">
  %again = layout.decl_buffer %p : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">
  func.call @write(%x, %t) : (!layout.buffer<1x4x4x8xf32>, !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">) -> ()
  func.call @read_image(%image, %y) : (!layout.buffer<8x16xf32, axis_separators = [1], scope = "global.texture">, !layout.buffer<8x16xf32>) -> ()
  func.call @read_nchw4c(%nchw4c, %z) : (!layout.buffer<1x2x4x4x4xf32, scope = "global.texture">, !layout.buffer<1x2x4x4x4xf32>) -> ()
  func.call @read_logical(%again, %w) : (!layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">, !layout.buffer<1x4x4x8xf32>) -> ()
  func.return
}
