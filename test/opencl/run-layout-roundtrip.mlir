// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %s --check --rtol 0 | filecheck %s

// NCHW (global) -> NCHW4c texture -> NCHW (global), through a host function that
// allocates the texture. Both copies are exact: %y equals %x and the numpy evaluator.
// The first kernel gathers four channels into one texel write; the second reads single
// lanes.
// CHECK: @main: 2 launch(es)
// CHECK-NEXT: to_texture {{.*}} global size [8, 8, 2]
// CHECK-NEXT: from_texture {{.*}} global size [8, 8, 8]
// CHECK:      %x {{.*}} max|opencl - numpy| = 0 (relative 0)  OK
// CHECK-NEXT: %y {{.*}} max|opencl - numpy| = 0 (relative 0)  OK
// CHECK-NEXT: check: passed (rtol 0)

func.func @to_texture(%x: !layout.buffer<1x8x8x8xf32>, %t: !layout.buffer<1x8x8x8xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %c = %c0 to %c8 step %c1 {
      scf.for %h = %c0 to %c8 step %c1 {
        scf.for %w = %c0 to %c8 step %c1 {
          %v = layout.load %x[%n, %c, %h, %w] : !layout.buffer<1x8x8x8xf32>, f32
          layout.store %v, %t[%n, %c, %h, %w] : !layout.buffer<1x8x8x8xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

func.func @from_texture(%t: !layout.buffer<1x8x8x8xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %y: !layout.buffer<1x8x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %c = %c0 to %c8 step %c1 {
      scf.for %h = %c0 to %c8 step %c1 {
        scf.for %w = %c0 to %c8 step %c1 {
          %v = layout.load %t[%n, %c, %h, %w] : !layout.buffer<1x8x8x8xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
          layout.store %v, %y[%n, %c, %h, %w] : !layout.buffer<1x8x8x8xf32>, f32
        }
      }
    }
  }
  func.return
}

func.func @main(%x: !layout.buffer<1x8x8x8xf32>, %y: !layout.buffer<1x8x8x8xf32>) {
  %p = layout.allocate [1, 8, 8, 8] : !layout.ptr<f32, scope = "global.texture">
  %t = layout.decl_buffer %p : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<1x8x8x8xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">
  func.call @to_texture(%x, %t) : (!layout.buffer<1x8x8x8xf32>, !layout.buffer<1x8x8x8xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) -> ()
  func.call @from_texture(%t, %y) : (!layout.buffer<1x8x8x8xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, !layout.buffer<1x8x8x8xf32>) -> ()
  func.return
}
