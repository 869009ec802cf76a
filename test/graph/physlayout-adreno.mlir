// The declared pipeline on the RFC example: the graph's layout rewrites are cancelled down
// to the boundary (x and the weights in, the result out), every activation lives in a
// texture, the weights in global.texture-weight, and no copy is needed. fuse-elementwise
// makes conv1 + relu one kernel and each conv's fill its accumulator's start, and conv2
// stores the NCHW result itself through the boundary relayout (relayout_stores: 5 kernels);
// with fuse=false each graph op is a kernel but the relayout conv2 stores through (8).
// RUN: xdsl-opt %S/../../examples/rfc_conv_relu_conv.mlir -p physlayout-adreno | filecheck %s
// RUN: xdsl-opt %S/../../examples/rfc_conv_relu_conv.mlir -p 'physlayout-adreno{fuse=false}' | filecheck %s --check-prefix=UNFUSED
// RUN: xdsl-opt %S/../../examples/rfc_conv_relu_conv.mlir -p physlayout-adreno -t opencl | filecheck %s --check-prefix=OPENCL
// RUN: xdsl-opt %S/../../examples/rfc_conv_relu_conv.mlir -p 'physlayout-adreno{weights-in-global=true}' | filecheck %s --check-prefix=MIXED

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: !layout.buffer<2x64x56x56xf32>, %[[W1:.*]]: !layout.buffer<32x64x3x3xf32>, %[[W2:.*]]: !layout.buffer<32x32x3x3xf32>, %[[OUT:.*]]: !layout.buffer<2x32x52x52xf32>)
// CHECK-NEXT:    layout.allocate [2, 16, 56, 56, 4] : !layout.ptr<f32, scope = "global.texture">
// CHECK:         func.call @main_transform_x(%[[X]],
// CHECK:         layout.allocate [8, 64, 3, 3, 4] : !layout.ptr<f32, scope = "global.texture-weight">
// CHECK:         func.call @main_transform_w1(%[[W1]],
// CHECK-NOT:     func.call @main_generic
// CHECK:         func.call @main_fused_relu(
// CHECK:         func.call @main_transform_w2(%[[W2]],
// CHECK:         %[[P:.*]] = layout.data %[[OUT]]
// CHECK-NEXT:    %[[V:.*]] = layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<2x32x52x52xf32>
// CHECK-NEXT:    func.call @main_fused_conv2(%{{.*}}, %{{.*}}, %[[V]])
// CHECK-NEXT:    func.return
// CHECK-NOT:     func.call

// UNFUSED-LABEL: func.func @main(
// UNFUSED:         func.call @main_transform_x(
// UNFUSED:         func.call @main_transform_w1(
// UNFUSED:         func.call @main_generic_init1(
// UNFUSED:         func.call @main_generic_conv1(
// UNFUSED:         func.call @main_generic_relu(
// UNFUSED:         func.call @main_transform_w2(
// UNFUSED:         func.call @main_generic_init2(
// UNFUSED:         func.call @main_generic_conv2(
// UNFUSED-NEXT:    func.return

// OPENCL: __kernel void main_transform_x(__global const float* src, __write_only image2d_t dst)
// OPENCL: write_imagef(dst,
// OPENCL: __kernel void main_fused_relu(
// OPENCL-NEXT: __read_only image2d_t x,
// OPENCL-NEXT: __read_only image2d_t w1,
// OPENCL-NEXT: __write_only image2d_t relu)
// OPENCL: float4 {{.*}} = read_imagef(w1, px_sampler,
// OPENCL: float4 r = ({{.*}}) ? {{.*}};
// OPENCL: write_imagef(relu, (int2)({{.*}}), r);
// OPENCL-NOT: __kernel void main_generic_relu
// OPENCL: __kernel void main_fused_conv2(
// OPENCL-NEXT: __read_only image2d_t relu,
// OPENCL-NEXT: __read_only image2d_t w2,
// OPENCL-NEXT: __global float* conv2)
// OPENCL-NOT: __kernel void main_transform_conv2

// MIXED: func.func @main_fused_relu(%{{.*}}: !layout.buffer<2x16x56x56x4xf32, scope = "global.texture">, %{{.*}}: !layout.buffer<8x64x3x3x4xf32>,
