// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %s --entry relu --check --rtol 1e-5 | filecheck %s
// RUN: physlayout run --texture-storage image %s --entry relu --print-opencl | filecheck %s --check-prefix=SOURCE
// RUN: physlayout run %s --entry relu --check --rtol 1e-5 --texture-storage buffer | filecheck %s

// relu directly on NHWC-logical buffers laid out as NCHW4c textures: the runtime uploads
// the logical arrays into images with map_ndarray and downloads the result through the
// inverse map.
// SOURCE: __kernel void relu(__read_only image2d_t a, __write_only image2d_t b) {
// SOURCE:   read_imagef(a, px_sampler,
// SOURCE:   write_imagef(b,
// CHECK: relu {{.*}} global size [6, 5, 2]
// CHECK: %a {{.*}} OK
// CHECK-NEXT: %b {{.*}} OK
// CHECK-NEXT: check: passed

func.func @relu(%a: !layout.buffer<2x5x6x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %b: !layout.buffer<2x5x6x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c2 step %c1 {
    scf.for %h = %c0 to %c5 step %c1 {
      scf.for %w = %c0 to %c6 step %c1 {
        scf.for %c = %c0 to %c8 step %c1 {
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<2x5x6x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<2x5x6x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}
