// The declared pipeline on the RFC example: the graph's layout rewrites are cancelled down
// to the boundary (x and the weights in, the result out), every activation lives in a
// texture, the weights in global.texture-weight, and no copy is needed.
// RUN: xdsl-opt %S/../../examples/rfc_conv_relu_conv.mlir -p physlayout-adreno | filecheck %s
// RUN: xdsl-opt %S/../../examples/rfc_conv_relu_conv.mlir -p physlayout-adreno -t opencl | filecheck %s --check-prefix=OPENCL
// RUN: xdsl-opt %S/../../examples/rfc_conv_relu_conv.mlir -p 'physlayout-adreno{weights-in-global=true}' | filecheck %s --check-prefix=MIXED

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: !layout.buffer<2x64x56x56xf32>, %[[W1:.*]]: !layout.buffer<32x64x3x3xf32>, %[[W2:.*]]: !layout.buffer<32x32x3x3xf32>, %[[OUT:.*]]: !layout.buffer<2x32x52x52xf32>)
// CHECK-NEXT:    layout.allocate [2, 16, 56, 56, 4] : !layout.ptr<f32, scope = "global.texture">
// CHECK:         func.call @main_transform_x(%[[X]],
// CHECK:         layout.allocate [8, 64, 3, 3, 4] : !layout.ptr<f32, scope = "global.texture-weight">
// CHECK:         func.call @main_transform_w1(%[[W1]],
// CHECK:         func.call @main_generic_init1(
// CHECK:         func.call @main_generic_conv1(
// CHECK:         func.call @main_generic_relu(
// CHECK:         func.call @main_transform_w2(%[[W2]],
// CHECK:         func.call @main_generic_init2(
// CHECK:         func.call @main_generic_conv2(
// CHECK:         %[[P:.*]] = layout.data %[[OUT]]
// CHECK:         func.call @main_transform_conv2(%{{.*}}, %{{.*}})
// CHECK-NEXT:    func.return
// CHECK-NOT:     func.call

// OPENCL: __kernel void main_transform_x(__global const float* src, __write_only image2d_t dst)
// OPENCL: write_imagef(dst,
// OPENCL: __kernel void main_generic_conv1(
// OPENCL-NEXT: __read_only image2d_t x,
// OPENCL-NEXT: __read_only image2d_t w1,
// OPENCL-NEXT: __read_only image2d_t init1,
// OPENCL-NEXT: __write_only image2d_t conv1)
// OPENCL: float4 {{.*}} = read_imagef(w1, px_sampler,
// OPENCL: write_imagef(conv1,
// OPENCL: __kernel void main_generic_relu(__read_only image2d_t conv1, __write_only image2d_t relu)
// OPENCL: __kernel void main_transform_conv2(__read_only image2d_t src, __global float* dst)

// MIXED: func.func @main_generic_conv1(%{{.*}}: !layout.buffer<2x16x56x56x4xf32, scope = "global.texture">, %{{.*}}: !layout.buffer<8x64x3x3x4xf32>,
