// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels' -t 'opencl{fp16=true}' | filecheck %s
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels' -t opencl | filecheck %s --check-prefix=STORAGE

// f16 with half arithmetic (target option fp16=true, a device with cl_khr_fp16): `half`,
// HALF_FLOAT images read and written with read_imageh/write_imageh, f16 constants as exact
// casts. Without it (the default, any device) f16 is storage only: the same HALF_FLOAT
// images read and written with read_imagef/write_imagef, half buffers with vload_half/
// vstore_half_rte, values in float, each f16 sum rounded to half by px_half_rte
// (target-f16-storage.mlir has the rounding rules).
// STORAGE-NOT:   cl_khr_fp16
// STORAGE-NOT:   px_lane_half
// STORAGE:       static inline float px_half_rte(float x) {
// STORAGE-LABEL: __kernel void relu_half(__read_only image2d_t a, __write_only image2d_t b) {
// STORAGE:         float4 [[V:[a-z0-9_]+]] = read_imagef(a, px_sampler, (int2)([[W:p3]], [[C4:p1]] * 3 + [[H:p2]]));
// STORAGE-NEXT:    float4 [[Z:[a-z0-9_]+]] = (float4)(0.0f);
// STORAGE-NEXT:    float4 [[R:[a-z0-9_]+]] = ([[V]] >= [[Z]] || [[V]] != [[V]]) ? [[V]] : [[Z]];
// STORAGE-NEXT:    write_imagef(b, (int2)([[W]], [[C4]] * 3 + [[H]]), [[R]]);
// STORAGE-LABEL: __kernel void channel_sum_half(__read_only image2d_t t, __global half* out) {
// STORAGE:         float [[S:[a-z0-9_]+]] = 0.0f;
// STORAGE:           float4 [[T:texel[0-9]*]] = read_imagef(t, px_sampler, (int2)(w, [[B:[a-z0-9_]+]] * 3 + h));
// STORAGE-NEXT:      float [[L:[a-z0-9_]+]] = [[T]].s0;
// STORAGE-NEXT:      float [[A:[a-z0-9_]+]] = px_half_rte([[S]] + [[L]]);
// STORAGE-NEXT:      [[S]] = [[A]];
// STORAGE:         vstore_half_rte([[S]], h * 5 + w, out);
// STORAGE-LABEL: __kernel void lane_half(__read_only image2d_t t, __global half* out) {
// STORAGE:         float [[V:[a-z0-9_]+]] = px_lane(read_imagef(t, px_sampler, (int2)(w, c / 4 * 3 + h)), c % 4);
// STORAGE-NEXT:    vstore_half_rte([[V]], h * 40 + w * 8 + c, out);

// CHECK:      #pragma OPENCL EXTENSION cl_khr_fp16 : enable
// CHECK:      static inline half px_lane_half(half4 v, int l) {

// relu on NCHW4c f16 textures: one half4 texel read and written per work-item.
// CHECK-LABEL: __kernel void relu_half(__read_only image2d_t a, __write_only image2d_t b) {
// CHECK:         half4 [[V:[a-z0-9_]+]] = read_imageh(a, px_sampler, (int2)([[W:p3]], [[C4:p1]] * 3 + [[H:p2]]));
// CHECK-NEXT:    half4 [[Z:[a-z0-9_]+]] = (half4)(((half)0.0f));
// CHECK:         write_imageh(b, (int2)([[W]], [[C4]] * 3 + [[H]]), {{.*}});
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

// A lane loop over an f16 texture keeps each texel in a half4; a lane computed at run time
// uses the half helper.
// CHECK-LABEL: __kernel void channel_sum_half(__read_only image2d_t t, __global half* out) {
// CHECK:         half [[S:[a-z0-9_]+]] = ((half)0.0f);
// CHECK:         for (int [[B:[a-z0-9_]+]] = 0; [[B]] < 2; [[B]] += 1) {
// CHECK-NEXT:      half4 [[T:texel[0-9]*]] = read_imageh(t, px_sampler, (int2)(w, [[B]] * 3 + h));
// CHECK-NEXT:      half {{.*}} = [[T]].s0;
// CHECK:         out[h * 5 + w] = [[S]];
// CHECK-LABEL: __kernel void lane_half(__read_only image2d_t t, __global half* out) {
// CHECK:         px_lane_half(read_imageh(t, px_sampler,
func.func @channel_sum_half(%t: !layout.buffer<1x3x5x8xf16, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %out: !layout.buffer<1x3x5xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f16
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c3 step %c1 {
      scf.for %w = %c0 to %c5 step %c1 {
        %s = scf.for %c = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f16) {
          %v = layout.load %t[%n, %h, %w, %c] : !layout.buffer<1x3x5x8xf16, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f16
          %a = arith.addf %acc, %v : f16
          scf.yield %a : f16
        }
        layout.store %s, %out[%n, %h, %w] : !layout.buffer<1x3x5xf16>, f16
      }
    }
  }
  func.return
}
func.func @lane_half(%t: !layout.buffer<1x3x5x8xf16, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %out: !layout.buffer<1x3x5x8xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c3 step %c1 {
      scf.for %w = %c0 to %c5 step %c1 {
        scf.for %c = %c0 to %c8 step %c1 {
          %v = layout.load %t[%n, %h, %w, %c] : !layout.buffer<1x3x5x8xf16, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f16
          layout.store %v, %out[%n, %h, %w, %c] : !layout.buffer<1x3x5x8xf16>, f16
        }
      }
    }
  }
  func.return
}
