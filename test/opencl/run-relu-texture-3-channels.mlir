// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %s --entry relu --check | filecheck %s
// RUN: physlayout run %s --entry relu --check --texture-storage buffer | filecheck %s

// NHWC relu with 3 channels written into an NCHW4c texture: one channel block, the fourth
// lane of every texel is padding (pad value 0).
// CHECK: %a {{.*}} OK
// CHECK-NEXT: %b {{.*}} OK
// CHECK-NEXT: check: passed

func.func @relu(%a: !layout.buffer<1x4x4x3xf32>, %b: !layout.buffer<1x4x4x3xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c4 step %c1 {
      scf.for %w = %c0 to %c4 step %c1 {
        scf.for %c = %c0 to %c3 step %c1 {
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<1x4x4x3xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<1x4x4x3xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}
