// What legalize-layout refuses around gathers and strided inserts, each with its diagnostic.
// RUN: physlayout-opt %s -p legalize-layout --split-input-file --verify-diagnostics | filecheck %s

// A tensor.extract outside a linalg.generic (a scalar read in the graph body) has no
// kernel: the host computes nothing.
func.func @scalar_read(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = arith.constant 1 : index
  %s = tensor.extract %x[%c1] : tensor<4xf32>
  func.return %x : tensor<4xf32>
}
// CHECK: legalize-layout: 'tensor.extract' cannot be legalized

// -----
// A gather of a tensor made inside the body: a kernel reads only buffers of tensors defined
// outside it.
func.func @tensor_in_body(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %t = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %v = tensor.extract %t[%i] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK: legalize-layout: 'arith.constant' in the body of a linalg.generic uses a tensor made in the body

// -----
// A strided insert with a dynamic stride.
func.func @dynamic_stride(%x: tensor<2xf32>, %k: index) -> tensor<6xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<6xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %r = tensor.insert_slice %x into %z[0] [2] [%k] : tensor<2xf32> into tensor<6xf32>
  func.return %r : tensor<6xf32>
}
// CHECK: legalize-layout: 'tensor.insert_slice' with dynamic offsets, sizes or strides cannot be legalized
