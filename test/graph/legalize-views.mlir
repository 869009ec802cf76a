// legalize-layout: a layout.transform that keeps the row-major order (a reshape) between
// global tensors is a second layout.decl_buffer over the same storage, no kernel; a view is
// never updated in place by an insert (the other view would see the update).
// RUN: xdsl-opt %s -p legalize-layout | filecheck %s

// CHECK-LABEL: func.func @collapse(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<2x3x5xf32>, %[[R:[^:]*]]: !layout.buffer<6x5xf32>)
// CHECK-NEXT:    %[[P:.*]] = layout.allocate [2, 3, 5] : !layout.ptr<f32>
// CHECK-NEXT:    %[[N:.*]] = layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<2x3x5xf32>
// CHECK-NEXT:    func.call @collapse_generic_n(%[[X]], %[[N]])
// CHECK-NEXT:    %[[V:.*]] = layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<6x5xf32>
// CHECK-NEXT:    func.call @collapse_generic_y(%[[V]], %[[R]])
// CHECK-NEXT:    func.return
func.func @collapse(%x: tensor<2x3x5xf32>) -> tensor<6x5xf32> {
  %e = tensor.empty() : tensor<2x3x5xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x5xf32>) outs(%e : tensor<2x3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<2x3x5xf32>
  %v = layout.transform %n {index_map = #layout.index_map<(a, b, c) -> (a * 3 + b, c)>} : tensor<2x3x5xf32> -> tensor<6x5xf32>
  %e2 = tensor.empty() : tensor<6x5xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%v : tensor<6x5xf32>) outs(%e2 : tensor<6x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<6x5xf32>
  func.return %y : tensor<6x5xf32>
}

// A returned reshape: a view would need a copy into the out-parameter, so the producer
// stores the result through the reshape instead (relayout_stores), no kernel of its own.
// CHECK-LABEL: func.func @collapse_returned(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<2x3x5xf32>, %[[R:[^:]*]]: !layout.buffer<6x5xf32>)
// CHECK-NEXT:    %[[P:.*]] = layout.data %[[R]]
// CHECK-NEXT:    %[[V:.*]] = layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<2x3x5xf32, transform = #layout.index_map<(a, b, c) -> (a * 3 + b, c)>>
// CHECK-NEXT:    func.call @collapse_returned_generic_n(%[[X]], %[[V]])
// CHECK-NEXT:    func.return
func.func @collapse_returned(%x: tensor<2x3x5xf32>) -> tensor<6x5xf32> {
  %e = tensor.empty() : tensor<2x3x5xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x5xf32>) outs(%e : tensor<2x3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<2x3x5xf32>
  %v = layout.transform %n {index_map = #layout.index_map<(a, b, c) -> (a * 3 + b, c)>} : tensor<2x3x5xf32> -> tensor<6x5xf32>
  func.return %v : tensor<6x5xf32>
}

// A transpose moves data: a kernel.
// CHECK-LABEL: func.func @transpose(
// CHECK:         func.call @transpose_transform_v(
func.func @transpose(%x: tensor<3x5xf32>) -> tensor<5x3xf32> {
  %v = layout.transform %x {index_map = #layout.index_map<(a, b) -> (b, a)>} : tensor<3x5xf32> -> tensor<5x3xf32>
  func.return %v : tensor<5x3xf32>
}

// A view of the input: the insert into it copies it first (the input, and %x's other
// view, keep their values).
// CHECK-LABEL: func.func @insert_into_view(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<2x3xf32>, %[[Y:[^:]*]]: !layout.buffer<1x2xf32>, %[[R0:[^:]*]]: !layout.buffer<6xf32>, %[[R1:[^:]*]]: !layout.buffer<3x2xf32>)
// CHECK:         %[[V:.*]] = layout.decl_buffer %{{.*}} : !layout.ptr<f32> -> !layout.buffer<3x2xf32>
// CHECK:         func.call @insert_into_view_copy_i(%[[V]], %[[R1]])
// CHECK-NEXT:    func.call @insert_into_view_insert_i(%[[Y]], %[[R1]])
func.func @insert_into_view(%x: tensor<2x3xf32>, %y: tensor<1x2xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {
  %f = layout.transform %x {index_map = #layout.index_map<(a, b) -> (a * 3 + b)>} : tensor<2x3xf32> -> tensor<6xf32>
  %v = layout.transform %x {index_map = #layout.index_map<(a, b) -> ((a * 3 + b) floordiv 2, (a * 3 + b) mod 2)>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %i = tensor.insert_slice %y into %v[1, 0] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<3x2xf32>
  func.return %f, %i : tensor<6xf32>, tensor<3x2xf32>
}
