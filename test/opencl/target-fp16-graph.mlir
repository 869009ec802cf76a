// f16 through the Adreno passes to OpenCL C, pinned as text, for both kinds of device.
// The activations and weights are f16 textures (HALF_FLOAT images: core OpenCL, so
// annotate-texture-scope makes them textures on any device, without a remark), one texel
// per access. With half arithmetic (-t opencl{fp16=true}, a device with cl_khr_fp16) they
// are read with read_imageh and written with write_imageh as half4; by default (storage
// only, any device: test_opencl_fp16.py runs it on PoCL) they are read with read_imagef
// and written with write_imagef as float4, every f16 product and sum rounded to half by
// px_half_rte4, and the half buffers go through vload_half/vstore_half4_rte.
// RUN: xdsl-opt %s -p 'convert-layout,flow-layout-rewrites,fold-layout-rewrites,annotate-texture-scope,realize-scopes,legalize-layout,apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels,dce' -t 'opencl{fp16=true}' | filecheck %s
// RUN: xdsl-opt %s -p 'convert-layout,flow-layout-rewrites,fold-layout-rewrites,annotate-texture-scope,realize-scopes,legalize-layout,apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels,dce' -t opencl | filecheck %s --check-prefix=STORAGE
// RUN: xdsl-opt %s -p 'convert-layout,flow-layout-rewrites,fold-layout-rewrites,annotate-texture-scope' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK --allow-empty

// REMARK-NOT: annotate-texture-scope

// CHECK:       #pragma OPENCL EXTENSION cl_khr_fp16 : enable
// CHECK-LABEL: __kernel void main_transform_x(__global const half* src, __write_only image2d_t dst) {
// CHECK:         half [[A:v[0-9]+]] = src[p1 * 144 + p2 * 6 + p3];
// CHECK-NEXT:    half4 [[B:v[0-9]+]] = (half4)([[A]]);
// CHECK:         [[T:v[0-9]+]].s3 = {{.*}};
// CHECK-NEXT:    write_imageh(dst, (int2)(p3, p1 * 6 + p2), [[T]]);
// CHECK-NEXT:  }
// CHECK-LABEL: __kernel void main_transform_w(__global const half* src, __write_only image2d_t dst) {
// CHECK:         write_imageh(dst, (int2)(p1 * 9 + p2 * 3 + p3, 0), {{.*}});
// CHECK-LABEL: __kernel void main_generic_init(__write_only image2d_t init) {
// CHECK:         half4 [[Z:v[0-9]+]] = (half4)(((half)0.0f));
// CHECK-NEXT:    write_imageh(init, (int2)(d3, d2), [[Z]]);
// CHECK-LABEL: __kernel void main_generic_conv(
// CHECK-NEXT:      __read_only image2d_t x,
// CHECK-NEXT:      __read_only image2d_t w,
// CHECK-NEXT:      __read_only image2d_t init,
// CHECK-NEXT:      __write_only image2d_t conv) {
// CHECK:         half4 [[ACC:v[0-9]+]] = read_imageh(init, px_sampler, (int2)(d3, d2));
// CHECK:         half4 [[X:texel[0-9]+]] = read_imageh(x, px_sampler, (int2)(d3, b3 * 6 + d2));
// CHECK-NEXT:    half [[XL:v[0-9]+]] = [[X]].s0;
// CHECK-NEXT:    half4 [[W:v[0-9]+]] = read_imageh(w, px_sampler, (int2)(b3 * 36, 0));
// CHECK-NEXT:    half4 [[XB:v[0-9]+]] = (half4)([[XL]]);
// CHECK-NEXT:    half4 {{v[0-9]+}} = [[XB]] * [[W]];
// CHECK:         write_imageh(conv, (int2)(d3, d2), {{.*}});
// CHECK-LABEL: __kernel void main_transform_conv(__read_only image2d_t src, __write_only image2d_t dst) {
// The final relu (texture -> global) reads one texel per work-item (vectorize-texels splits
// the lane dimension off legalize-layout's 4-d nest) and writes it as one half4.
// CHECK-LABEL: __kernel void main_generic_relu(__read_only image2d_t conv, __global half* result0) {
// CHECK-NEXT:    int d2 = (int)get_global_id(0);
// CHECK-NEXT:    int d1 = (int)get_global_id(1);
// CHECK:         half4 [[V:v[0-9]+]] = read_imageh(conv, px_sampler, (int2)(d2, d1));
// CHECK-NEXT:    half4 [[Z:v[0-9]+]] = (half4)(((half)0.0f));
// CHECK-NEXT:    half4 [[R:r]] = ([[V]] >= [[Z]] || [[V]] != [[V]]) ? [[V]] : [[Z]];
// CHECK-NEXT:    *(__global half4*)(result0 + d1 * 16 + d2 * 4) = [[R]];
// CHECK-NEXT:  }
// CHECK:       // host function @main launches: main_transform_x, main_transform_w, main_generic_init, main_generic_conv, main_transform_conv, main_generic_relu

// STORAGE-NOT:   cl_khr_fp16
// STORAGE:       static inline float4 px_half_rte4(float4 x) {
// STORAGE-LABEL: __kernel void main_transform_x(__global const half* src, __write_only image2d_t dst) {
// STORAGE:         float [[A:v[0-9]+]] = vload_half(p1 * 144 + p2 * 6 + p3, src);
// STORAGE-NEXT:    float4 {{v[0-9]+}} = (float4)([[A]]);
// STORAGE:         write_imagef(dst, (int2)(p3, p1 * 6 + p2), {{v[0-9]+}});
// STORAGE-LABEL: __kernel void main_generic_init(__write_only image2d_t init) {
// STORAGE:         float4 [[Z:v[0-9]+]] = (float4)(0.0f);
// STORAGE-NEXT:    write_imagef(init, (int2)(d3, d2), [[Z]]);
// STORAGE-LABEL: __kernel void main_generic_conv(
// STORAGE:         float4 [[ACC:v[0-9]+]] = read_imagef(init, px_sampler, (int2)(d3, d2));
// STORAGE:         float4 [[X:texel[0-9]+]] = read_imagef(x, px_sampler, (int2)(d3, b3 * 6 + d2));
// STORAGE-NEXT:    float [[XL:v[0-9]+]] = [[X]].s0;
// STORAGE-NEXT:    float4 [[W:v[0-9]+]] = read_imagef(w, px_sampler, (int2)(b3 * 36, 0));
// STORAGE-NEXT:    float4 [[XB:v[0-9]+]] = (float4)([[XL]]);
// STORAGE-NEXT:    float4 [[P:v[0-9]+]] = px_half_rte4([[XB]] * [[W]]);
// STORAGE-NEXT:    float4 {{v[0-9]+}} = px_half_rte4([[P]] + {{v[0-9]+}});
// STORAGE:         write_imagef(conv, (int2)(d3, d2), {{.*}});
// STORAGE-LABEL: __kernel void main_generic_relu(__read_only image2d_t conv, __global half* result0) {
// STORAGE:         float4 [[V:v[0-9]+]] = read_imagef(conv, px_sampler, (int2)(d2, d1));
// STORAGE-NEXT:    float4 [[Z:v[0-9]+]] = (float4)(0.0f);
// STORAGE-NEXT:    float4 [[R:r]] = ([[V]] >= [[Z]] || [[V]] != [[V]]) ? [[V]] : [[Z]];
// STORAGE-NEXT:    vstore_half4_rte([[R]], 0, result0 + d1 * 16 + d2 * 4);
// STORAGE-NEXT:  }

func.func @main(%x: tensor<1x8x6x6xf16>, %w: tensor<4x8x3x3xf16>) -> tensor<1x4x4x4xf16> {
  %zero = arith.constant 0.0 : f16
  %e1 = tensor.empty() : tensor<1x4x4x4xf16>
  %init = linalg.fill ins(%zero : f16) outs(%e1 : tensor<1x4x4x4xf16>) -> tensor<1x4x4x4xf16>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x6xf16>, tensor<4x8x3x3xf16>) outs(%init : tensor<1x4x4x4xf16>) -> tensor<1x4x4x4xf16>
  %e2 = tensor.empty() : tensor<1x4x4x4xf16>
  %relu = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv : tensor<1x4x4x4xf16>) outs(%e2 : tensor<1x4x4x4xf16>) {
  ^bb0(%v: f16, %o: f16):
    %r = arith.maximumf %v, %zero : f16
    linalg.yield %r : f16
  } -> tensor<1x4x4x4xf16>
  func.return %relu : tensor<1x4x4x4xf16>
}
