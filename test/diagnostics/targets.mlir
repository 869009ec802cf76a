// The invalid-input corpus, area targets: buffer-level IR the OpenCL target (-t opencl)
// cannot emit, each refused with a diagnostic naming the function, op or parameter.
// RUN: physlayout-opt %s -t opencl --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @misaligned_vector_view(%A: !layout.buffer<16xf32>, %i: index) {
  %p = layout.data %A : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %v = layout.decl_buffer %p offset 2 : !layout.ptr<f32> -> !layout.buffer<2xvector<4xf32>>
  %x = layout.load %v[%i] : !layout.buffer<2xvector<4xf32>>, vector<4xf32>
  layout.store %x, %v[%i] : !layout.buffer<2xvector<4xf32>>, vector<4xf32>
  func.return
}
// CHECK: {{^}}opencl: @misaligned_vector_view: 'layout.load': buffer !layout.buffer<2xvector<4xf32>> views parameter %A with a different element type (f32){{$}}

// -----
func.func @memref_parameter(%m: memref<16xf32>) {
  func.return
}
// CHECK: {{^}}opencl: @memref_parameter: parameter %m: memref<16xf32>: the OpenCL target takes buffer-level IR (!layout.buffer), so use it instead of lower-layout, not after it{{$}}

// -----
func.func @tensor_parameter(%x: tensor<16xf32>) {
  func.return
}
// CHECK: {{^}}opencl: @tensor_parameter: parameter %x: tensor<16xf32>: graph-level IR (tensors) must first become buffer-level kernels (e.g. -p physlayout-adreno){{$}}

// -----
func.func @while_loop(%a: !layout.buffer<16xf32>) {
  %c0 = arith.constant 0 : index
  %r = scf.while (%i = %c0) : (index) -> index {
    %c = arith.constant true
    scf.condition(%c) %i : index
  } do {
  ^bb0(%j: index):
    scf.yield %j : index
  }
  func.return
}
// CHECK: {{^}}opencl: @while_loop: 'scf.while': operation is not supported by the OpenCL target{{$}}

// -----
func.func @scalar_into_texture(%t: !layout.buffer<2x4x4xf32, scope = "global.texture">, %x: f32, %i: index) {
  layout.store %x, %t[%i, %i, %i] : !layout.buffer<2x4x4xf32, scope = "global.texture">, f32
  func.return
}
// CHECK: {{^}}opencl: @scalar_into_texture: 'layout.store': texture store of f32 into %t would write part of a texel; a texture store writes all four channels (store a vector<4xf32> texel, e.g. after vectorize-texels){{$}}

// -----
func.func @ptr_parameter(%p: !layout.ptr<f32>) {
  func.return
}
// CHECK: {{^}}opencl: @ptr_parameter: parameter %p: unsupported kernel parameter type !layout.ptr<f32>{{$}}
