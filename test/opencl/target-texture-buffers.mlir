// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels' -t 'opencl{texture-storage=buffer}' | filecheck %s
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels' -t 'opencl{texture-storage=buffer fp16=true}' | filecheck %s --check-prefix=HALF
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels' -t opencl | filecheck %s --check-prefix=IMAGE
// RUN: not xdsl-opt %s -t 'opencl{texture-storage=texels}' 2>&1 | filecheck %s --check-prefix=BAD

// texture-storage=buffer: a texture parameter is a __global array of its image's texels,
// row-major (the image's bytes), so texel (x, y) of a W-texel-wide image is p[y * W + x].
// Here every image is [1 * 2 * 3 rows, 5 texels]: row = c4 * 3 + h, x = w. Accesses proven
// inside the image are plain loads and stores; the gather's row is loaded from memory, so
// its read goes through px_texel, which gives (0, 0, 0, 0) outside the image as the
// image's CLK_ADDRESS_CLAMP sampler does. f16 textures are half arrays read and written
// four halves at a time (vload_half4 / vstore_half4_rte of float values without half
// arithmetic, vload4 / vstore4 of half4 with it).

// BAD: opencl: option texture-storage must be image or buffer, got 'texels'

// CHECK-NOT:   sampler_t
// CHECK:       static inline float4 px_texel(__global const float4* p, int x, int y, int w, int h) {
// CHECK-NEXT:    return ((uint)x < (uint)w && (uint)y < (uint)h) ? p[y * w + x] : (float4)(0.0f);
// CHECK-LABEL: __kernel void relu(__global const float4* a, __global float4* b) {
// CHECK:         float4 [[V:[a-z0-9_]+]] = a{{\[}}[[C4:p1]] * 15 + [[H:p2]] * 5 + [[W:p3]]];
// CHECK:         b{{\[}}[[C4]] * 15 + [[H]] * 5 + [[W]]] = {{.*}};
// IMAGE-LABEL: __kernel void relu(__read_only image2d_t a, __write_only image2d_t b) {
// IMAGE:         read_imagef(a, px_sampler, (int2)(p3, p1 * 3 + p2));
// IMAGE:         write_imagef(b, (int2)(p3, p1 * 3 + p2), {{.*}});
func.func @relu(%a: !layout.buffer<1x3x5x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %b: !layout.buffer<1x3x5x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c3 step %c1 {
      scf.for %w = %c0 to %c5 step %c1 {
        scf.for %c = %c0 to %c8 step %c1 {
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<1x3x5x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<1x3x5x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

// One lane of a texel at a lane computed at run time.
// CHECK-LABEL: __kernel void lane(__global const float4* t, __global float* out) {
// CHECK:         float [[L:[a-z0-9_]+]] = px_lane(t[c / 4 * 15 + h * 5 + w], c % 4);
// CHECK-NEXT:    out[h * 40 + w * 8 + c] = [[L]];
func.func @lane(%t: !layout.buffer<1x3x5x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %out: !layout.buffer<1x3x5x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c3 step %c1 {
      scf.for %w = %c0 to %c5 step %c1 {
        scf.for %c = %c0 to %c8 step %c1 {
          %v = layout.load %t[%n, %h, %w, %c] : !layout.buffer<1x3x5x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
          layout.store %v, %out[%n, %h, %w, %c] : !layout.buffer<1x3x5x8xf32>, f32
        }
      }
    }
  }
  func.return
}

// A gather: the row comes from memory, so the read is not proven inside the image.
// CHECK-LABEL: __kernel void gather(__global const float4* t, __global const int* rows, __global float4* out) {
// CHECK:         int [[R32:[a-z0-9_]+]] = rows[w];
// CHECK-NEXT:    int [[R:[a-z0-9_]+]] = (int)[[R32]];
// CHECK-NEXT:    float4 [[V:[a-z0-9_]+]] = px_texel(t, w, [[R]], 5, 6);
// CHECK-NEXT:    out[y * 5 + w] = [[V]];
func.func @gather(%t: !layout.buffer<6x20xf32, scope = "global.texture">, %rows: !layout.buffer<5xi32>, %out: !layout.buffer<6x20xf32, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  scf.for %y = %c0 to %c6 step %c1 {
    scf.for %w = %c0 to %c5 step %c1 {
      %r32 = layout.load %rows[%w] : !layout.buffer<5xi32>, i32
      %r = arith.index_cast %r32 : i32 to index
      %col = arith.muli %w, %c4 : index
      %v = layout.load %t[%r, %col] : !layout.buffer<6x20xf32, scope = "global.texture">, vector<4xf32>
      layout.store %v, %out[%y, %col] : !layout.buffer<6x20xf32, scope = "global.texture">, vector<4xf32>
    }
  }
  func.return
}

// f16 textures: half arrays.
// CHECK-LABEL: __kernel void relu_half(__global const half* a, __global half* b) {
// CHECK:         float4 [[V:[a-z0-9_]+]] = vload_half4([[C4:p1]] * 15 + [[H:p2]] * 5 + [[W:p3]], a);
// CHECK:         vstore_half4_rte({{.*}}, [[C4]] * 15 + [[H]] * 5 + [[W]], b);
// HALF:        #pragma OPENCL EXTENSION cl_khr_fp16 : enable
// HALF-LABEL:  __kernel void relu_half(__global const half* a, __global half* b) {
// HALF:          half4 [[V:[a-z0-9_]+]] = vload4([[C4:p1]] * 15 + [[H:p2]] * 5 + [[W:p3]], a);
// HALF:          vstore4({{.*}}, [[C4]] * 15 + [[H]] * 5 + [[W]], b);
func.func @relu_half(%a: !layout.buffer<1x3x5x8xf16, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %b: !layout.buffer<1x3x5x8xf16, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f16
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c3 step %c1 {
      scf.for %w = %c0 to %c5 step %c1 {
        scf.for %c = %c0 to %c8 step %c1 {
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<1x3x5x8xf16, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f16
          %r = arith.maximumf %v, %zero : f16
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<1x3x5x8xf16, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f16
        }
      }
    }
  }
  func.return
}
