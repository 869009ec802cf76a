// Gathers: a linalg.generic whose body reads another tensor with tensor.extract at computed
// indices legalizes to a kernel that loads that tensor's buffer at the computed position.
// Each index the value-bounds analysis does not prove inside the tensor is clamped into it
// (an index outside is undefined behaviour in the source, so the clamp changes no defined
// result and keeps the load inside its buffer); proven ones are used as they are. The bodies
// are torch-mlir's (torch 2.15, the shared models), at smaller shapes.
// test/python/test_gathers.py runs every function with the graph evaluator and the
// legalized host with the buffer evaluator and compares.
// RUN: xdsl-opt %s -p raise-layout-rewrites,legalize-layout | filecheck %s
// RUN: xdsl-opt %s -p raise-layout-rewrites,legalize-layout,legalize-layout | filecheck %s
// RUN: xdsl-opt %s -p raise-layout-rewrites,legalize-layout,physlayout-opencl -t opencl > /dev/null

#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map_1 = affine_map<(d0) -> (d0)>
#map_0d = affine_map<(d0) -> ()>
#map_col = affine_map<(d0, d1) -> (d0, 0)>
#map_row = affine_map<(d0, d1) -> (d1)>
#map_2 = affine_map<(d0, d1) -> (d0, d1)>
#map_n = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, 0)>
#map_c = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#map_h = affine_map<(d0, d1, d2, d3) -> (d2, 0)>
#map_w = affine_map<(d0, d1, d2, d3) -> (d3)>

// Nearest upsampling x2 (fpn_tiny): an output-only generic computes the source index from
// linalg.index (sitofp, divf 2, floor, clamp with maximumf/minimumf, fptosi). Proven inside
// [0, 1]: the kernel loads the source buffer at the computed indices, with no clamp; the
// i64 index is narrowed to i32 before its cast to index (kernels compute index in 32 bits).
// CHECK-LABEL: func.func @nearest_upsample_generic
// CHECK-SAME:    (%[[OUT:.*]]: !layout.buffer<1x3x4x4xf32>, %[[SRC:.*]]: !layout.buffer<1x3x2x2xf32>)
// CHECK:         scf.parallel
// CHECK-NOT:       arith.maxsi
// CHECK-NOT:       arith.minsi
// CHECK:           %[[H32:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK-NEXT:      %[[H:.*]] = arith.index_cast %[[H32]] : i32 to index
// CHECK:           %[[W32:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK-NEXT:      %[[W:.*]] = arith.index_cast %[[W32]] : i32 to index
// CHECK-NEXT:      %[[V:.*]] = layout.load %[[SRC]][%{{.*}}, %{{.*}}, %[[H]], %[[W]]] : !layout.buffer<1x3x2x2xf32>, f32
// CHECK-NEXT:      layout.store %[[V]], %[[OUT]]
// CHECK-LABEL: func.func @nearest_upsample(
// CHECK-NEXT:    func.call @nearest_upsample_generic
func.func @nearest_upsample(%61: tensor<1x3x2x2xf32>) -> tensor<1x3x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_3 = arith.constant 2.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_4 = arith.constant 1.000000e+00 : f32
  %36 = tensor.empty() : tensor<1x3x4x4xf32>
  %63 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%36 : tensor<1x3x4x4xf32>) {
  ^bb0(%out: f32):
    %78 = linalg.index 1 : index
    %79 = linalg.index 2 : index
    %80 = linalg.index 3 : index
    %81 = arith.index_cast %79 : index to i64
    %82 = arith.sitofp %81 : i64 to f32
    %83 = arith.divf %82, %cst_3 : f32
    %84 = math.floor %83 : f32
    %85 = arith.maximumf %84, %cst : f32
    %86 = arith.minimumf %85, %cst_4 : f32
    %87 = arith.fptosi %86 : f32 to i64
    %88 = arith.index_cast %87 : i64 to index
    %89 = arith.index_cast %80 : index to i64
    %90 = arith.sitofp %89 : i64 to f32
    %91 = arith.divf %90, %cst_3 : f32
    %92 = math.floor %91 : f32
    %93 = arith.maximumf %92, %cst : f32
    %94 = arith.minimumf %93, %cst_4 : f32
    %95 = arith.fptosi %94 : f32 to i64
    %96 = arith.index_cast %95 : i64 to index
    %extracted = tensor.extract %61[%c0, %78, %88, %96] : tensor<1x3x2x2xf32>
    linalg.yield %extracted : f32
  } -> tensor<1x3x4x4xf32>
  return %63 : tensor<1x3x4x4xf32>
}

// The transposed convolution's weight flip (autoencoder_transpose): `2 - kh`, `2 - kw` of
// loops of extent 3 are proven inside [0, 2]; the gather reads a parameter.
// CHECK-LABEL: func.func @weight_flip_generic_1
// CHECK-SAME:    (%[[OUT:.*]]: !layout.buffer<3x5x3x3xf32>, %[[W:.*]]: !layout.buffer<5x3x3x3xf32>)
// CHECK:         scf.parallel (%[[O:.*]], %[[I:.*]], %[[KH:.*]], %[[KW:.*]]) =
// CHECK-NEXT:      %[[FH:.*]] = arith.subi %{{.*}}, %[[KH]] : index
// CHECK-NEXT:      %[[FW:.*]] = arith.subi %{{.*}}, %[[KW]] : index
// CHECK-NEXT:      %[[V:.*]] = layout.load %[[W]][%[[I]], %[[O]], %[[FH]], %[[FW]]] : !layout.buffer<5x3x3x3xf32>, f32
// CHECK-NEXT:      layout.store %[[V]], %[[OUT]][%[[O]], %[[I]], %[[KH]], %[[KW]]]
func.func @weight_flip(%dec1_weight: tensor<5x3x3x3xf32>) -> tensor<3x5x3x3xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c2 = arith.constant 2 : index
  %6 = tensor.empty() : tensor<3x5x3x3xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<3x5x3x3xf32>) -> tensor<3x5x3x3xf32>
  %8 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%7 : tensor<3x5x3x3xf32>) {
  ^bb0(%out: f32):
    %52 = linalg.index 0 : index
    %53 = linalg.index 1 : index
    %54 = linalg.index 2 : index
    %55 = linalg.index 3 : index
    %56 = arith.subi %c2, %54 : index
    %57 = arith.subi %c2, %55 : index
    %extracted = tensor.extract %dec1_weight[%53, %52, %56, %57] : tensor<5x3x3x3xf32>
    linalg.yield %extracted : f32
  } -> tensor<3x5x3x3xf32>
  return %8 : tensor<3x5x3x3xf32>
}

// A bilinear corner gather (autoencoder_transpose) whose i64 index tensors are parameters:
// nothing is known of them, so each index is clamped into the tensor in i64 (after torch's
// negative-index wraparound `select(i < 0, i + n, i)`), then narrowed and cast.
// CHECK-LABEL: func.func @corner_unknown_generic
// CHECK:           %[[WRAP:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i64
// CHECK:           %[[LO:.*]] = arith.maxsi %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:      %[[HI:.*]] = arith.minsi %[[LO]], %{{.*}} : i64
// CHECK-NEXT:      %[[N32:.*]] = arith.trunci %[[HI]] : i64 to i32
// CHECK-NEXT:      arith.index_cast %[[N32]] : i32 to index
// CHECK:           layout.load %{{.*}} : !layout.buffer<1x3x4x5xf32>, f32
func.func @corner_unknown(%12: tensor<1x3x4x5xf32>, %expanded_6: tensor<1x1x1x1xi64>, %expanded_5: tensor<3x1x1xi64>, %20: tensor<7x1xi64>, %23: tensor<9xi64>) -> tensor<1x3x7x9xf32> {
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c3_i64 = arith.constant 3 : i64
  %c4_i64 = arith.constant 4 : i64
  %c5_i64 = arith.constant 5 : i64
  %30 = tensor.empty() : tensor<1x3x7x9xf32>
  %31 = linalg.generic {indexing_maps = [#map_n, #map_c, #map_h, #map_w, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_6, %expanded_5, %20, %23 : tensor<1x1x1x1xi64>, tensor<3x1x1xi64>, tensor<7x1xi64>, tensor<9xi64>) outs(%30 : tensor<1x3x7x9xf32>) {
  ^bb0(%in: i64, %in_9: i64, %in_10: i64, %in_11: i64, %out: f32):
    %52 = arith.cmpi slt, %in, %c0_i64 : i64
    %53 = arith.addi %in, %c1_i64 : i64
    %54 = arith.select %52, %53, %in : i64
    %55 = arith.index_cast %54 : i64 to index
    %56 = arith.cmpi slt, %in_9, %c0_i64 : i64
    %57 = arith.addi %in_9, %c3_i64 : i64
    %58 = arith.select %56, %57, %in_9 : i64
    %59 = arith.index_cast %58 : i64 to index
    %60 = arith.cmpi slt, %in_10, %c0_i64 : i64
    %61 = arith.addi %in_10, %c4_i64 : i64
    %62 = arith.select %60, %61, %in_10 : i64
    %63 = arith.index_cast %62 : i64 to index
    %64 = arith.cmpi slt, %in_11, %c0_i64 : i64
    %65 = arith.addi %in_11, %c5_i64 : i64
    %66 = arith.select %64, %65, %in_11 : i64
    %67 = arith.index_cast %66 : i64 to index
    %extracted = tensor.extract %12[%55, %59, %63, %67] : tensor<1x3x4x5xf32>
    linalg.yield %extracted : f32
  } -> tensor<1x3x7x9xf32>
  return %31 : tensor<1x3x7x9xf32>
}

// The same corner gather with index tensors computed as torch-mlir does (iota, `+ 1`,
// `minsi` with the last index): every index is proven inside the tensor, the wraparound's
// `i < 0` is decided false, and no clamp is emitted.
// CHECK-LABEL: func.func @corner_proven_generic(
// CHECK-NOT:       arith.maxsi
// CHECK:           layout.load %{{.*}} : !layout.buffer<1x3x4x5xf32>, f32
// CHECK-NEXT:      layout.store
func.func @corner_proven(%12: tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32> {
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c3_i64 = arith.constant 3 : i64
  %c4_i64 = arith.constant 4 : i64
  %c5_i64 = arith.constant 5 : i64
  %h0 = tensor.empty() : tensor<4xi64>
  %hi = linalg.generic {indexing_maps = [#map_1], iterator_types = ["parallel"]} outs(%h0 : tensor<4xi64>) {
  ^bb0(%out: i64):
    %52 = linalg.index 0 : index
    %53 = arith.index_cast %52 : index to i64
    linalg.yield %53 : i64
  } -> tensor<4xi64>
  %hn = linalg.generic {indexing_maps = [#map_1, #map_1], iterator_types = ["parallel"]} ins(%hi : tensor<4xi64>) outs(%h0 : tensor<4xi64>) {
  ^bb0(%in: i64, %out: i64):
    %52 = arith.addi %in, %c1_i64 : i64
    linalg.yield %52 : i64
  } -> tensor<4xi64>
  %hc = linalg.generic {indexing_maps = [#map_1, #map_1], iterator_types = ["parallel"]} ins(%hn : tensor<4xi64>) outs(%h0 : tensor<4xi64>) {
  ^bb0(%in: i64, %out: i64):
    %52 = arith.minsi %in, %c3_i64 : i64
    linalg.yield %52 : i64
  } -> tensor<4xi64>
  %expanded = tensor.expand_shape %hc [[0, 1]] output_shape [4, 1] : tensor<4xi64> into tensor<4x1xi64>
  %w0 = tensor.empty() : tensor<5xi64>
  %wi = linalg.generic {indexing_maps = [#map_1], iterator_types = ["parallel"]} outs(%w0 : tensor<5xi64>) {
  ^bb0(%out: i64):
    %52 = linalg.index 0 : index
    %53 = arith.index_cast %52 : index to i64
    linalg.yield %53 : i64
  } -> tensor<5xi64>
  %c0 = tensor.empty() : tensor<3xi64>
  %ci = linalg.generic {indexing_maps = [#map_1], iterator_types = ["parallel"]} outs(%c0 : tensor<3xi64>) {
  ^bb0(%out: i64):
    %52 = linalg.index 0 : index
    %53 = arith.index_cast %52 : index to i64
    linalg.yield %53 : i64
  } -> tensor<3xi64>
  %expanded_5 = tensor.expand_shape %ci [[0, 1, 2]] output_shape [3, 1, 1] : tensor<3xi64> into tensor<3x1x1xi64>
  %n0 = tensor.empty() : tensor<1xi64>
  %ni = linalg.generic {indexing_maps = [#map_1], iterator_types = ["parallel"]} outs(%n0 : tensor<1xi64>) {
  ^bb0(%out: i64):
    %52 = linalg.index 0 : index
    %53 = arith.index_cast %52 : index to i64
    linalg.yield %53 : i64
  } -> tensor<1xi64>
  %expanded_6 = tensor.expand_shape %ni [[0, 1, 2, 3]] output_shape [1, 1, 1, 1] : tensor<1xi64> into tensor<1x1x1x1xi64>
  %30 = tensor.empty() : tensor<1x3x4x5xf32>
  %31 = linalg.generic {indexing_maps = [#map_n, #map_c, #map_h, #map_w, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_6, %expanded_5, %expanded, %wi : tensor<1x1x1x1xi64>, tensor<3x1x1xi64>, tensor<4x1xi64>, tensor<5xi64>) outs(%30 : tensor<1x3x4x5xf32>) {
  ^bb0(%in: i64, %in_9: i64, %in_10: i64, %in_11: i64, %out: f32):
    %52 = arith.cmpi slt, %in, %c0_i64 : i64
    %53 = arith.addi %in, %c1_i64 : i64
    %54 = arith.select %52, %53, %in : i64
    %55 = arith.index_cast %54 : i64 to index
    %56 = arith.cmpi slt, %in_9, %c0_i64 : i64
    %57 = arith.addi %in_9, %c3_i64 : i64
    %58 = arith.select %56, %57, %in_9 : i64
    %59 = arith.index_cast %58 : i64 to index
    %60 = arith.cmpi slt, %in_10, %c0_i64 : i64
    %61 = arith.addi %in_10, %c4_i64 : i64
    %62 = arith.select %60, %61, %in_10 : i64
    %63 = arith.index_cast %62 : i64 to index
    %64 = arith.cmpi slt, %in_11, %c0_i64 : i64
    %65 = arith.addi %in_11, %c5_i64 : i64
    %66 = arith.select %64, %65, %in_11 : i64
    %67 = arith.index_cast %66 : i64 to index
    %extracted = tensor.extract %12[%55, %59, %63, %67] : tensor<1x3x4x5xf32>
    linalg.yield %extracted : f32
  } -> tensor<1x3x4x5xf32>
  return %31 : tensor<1x3x4x5xf32>
}

// The corner gather with index tensors prepared by lift-transform-params: each argument
// states the bounds proven where it was computed (`layout.bounds`). The batch, channel
// (wrapped from [-3, 2]) and row indices are proven inside the tensor and not clamped; the
// column's stated [0, 5] reaches past the last column (4), so only it is clamped, from above.
// CHECK-LABEL: func.func @corner_stated_generic(
// CHECK-NOT:       arith.maxsi
// CHECK:           %[[HI:.*]] = arith.minsi %{{.*}}, %{{.*}} : i64
// CHECK-NOT:       arith.minsi
// CHECK-NOT:       arith.maxsi
// CHECK:           layout.load %{{.*}} : !layout.buffer<1x3x4x5xf32>, f32
// CHECK-NEXT:      layout.store
func.func @corner_stated(%12: tensor<1x3x4x5xf32>, %expanded_6: tensor<1x1x1x1xi64> {layout.bounds = [0 : i64, 0 : i64]}, %expanded_5: tensor<3x1x1xi64> {layout.bounds = [-3 : i64, 2 : i64]}, %20: tensor<7x1xi64> {layout.bounds = [0 : i64, 3 : i64]}, %23: tensor<9xi64> {layout.bounds = [0 : i64, 5 : i64]}) -> tensor<1x3x7x9xf32> {
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c3_i64 = arith.constant 3 : i64
  %c4_i64 = arith.constant 4 : i64
  %c5_i64 = arith.constant 5 : i64
  %30 = tensor.empty() : tensor<1x3x7x9xf32>
  %31 = linalg.generic {indexing_maps = [#map_n, #map_c, #map_h, #map_w, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_6, %expanded_5, %20, %23 : tensor<1x1x1x1xi64>, tensor<3x1x1xi64>, tensor<7x1xi64>, tensor<9xi64>) outs(%30 : tensor<1x3x7x9xf32>) {
  ^bb0(%in: i64, %in_9: i64, %in_10: i64, %in_11: i64, %out: f32):
    %52 = arith.cmpi slt, %in, %c0_i64 : i64
    %53 = arith.addi %in, %c1_i64 : i64
    %54 = arith.select %52, %53, %in : i64
    %55 = arith.index_cast %54 : i64 to index
    %56 = arith.cmpi slt, %in_9, %c0_i64 : i64
    %57 = arith.addi %in_9, %c3_i64 : i64
    %58 = arith.select %56, %57, %in_9 : i64
    %59 = arith.index_cast %58 : i64 to index
    %60 = arith.cmpi slt, %in_10, %c0_i64 : i64
    %61 = arith.addi %in_10, %c4_i64 : i64
    %62 = arith.select %60, %61, %in_10 : i64
    %63 = arith.index_cast %62 : i64 to index
    %64 = arith.cmpi slt, %in_11, %c0_i64 : i64
    %65 = arith.addi %in_11, %c5_i64 : i64
    %66 = arith.select %64, %65, %in_11 : i64
    %67 = arith.index_cast %66 : i64 to index
    %extracted = tensor.extract %12[%55, %59, %63, %67] : tensor<1x3x4x5xf32>
    linalg.yield %extracted : f32
  } -> tensor<1x3x7x9xf32>
  return %31 : tensor<1x3x7x9xf32>
}

// Adaptive-pool window starts (adaptive_pools_net): `(i * 7) divsi 3` with the 0-d constant
// dense<3> : tensor<i64> read through the map (d0) -> (): a constant kernel stores it into a
// buffer of shape [1], which the generic loads at [0].
// CHECK-LABEL: func.func @window_starts_generic
// CHECK-SAME:    (%[[S:.*]]: !layout.buffer<3xi64>, %[[K:.*]]: !layout.buffer<1xi64>, %[[OUT:.*]]: !layout.buffer<3xi64>)
// CHECK:           %[[D:.*]] = layout.load %[[K]][%{{.*}}] : !layout.buffer<1xi64>, i64
// CHECK:           arith.divsi %{{.*}}, %[[D]] : i64
func.func @window_starts(%5: tensor<3xi64>) -> tensor<3xi64> {
  %cst_5 = arith.constant dense<3> : tensor<i64>
  %3 = tensor.empty() : tensor<3xi64>
  %6 = linalg.generic {indexing_maps = [#map_1, #map_0d, #map_1], iterator_types = ["parallel"]} ins(%5, %cst_5 : tensor<3xi64>, tensor<i64>) outs(%3 : tensor<3xi64>) {
  ^bb0(%in: i64, %in_13: i64, %out: i64):
    %60 = arith.divsi %in, %in_13 : i64
    linalg.yield %60 : i64
  } -> tensor<3xi64>
  return %6 : tensor<3xi64>
}

// The transposed convolution's input spread into zeros (autoencoder_transpose): a strided
// tensor.insert_slice stores element i at 1 + 2 * i (the zero fill is updated in place).
// CHECK-LABEL: func.func @spread_insert
// CHECK-SAME:    (%[[SRC:.*]]: !layout.buffer<1x3x4x4xf32>, %[[DST:.*]]: !layout.buffer<1x3x10x10xf32>)
// CHECK:         scf.parallel (%[[N:.*]], %[[C:.*]], %[[H:.*]], %[[W:.*]]) =
// CHECK-NEXT:      %[[V:.*]] = layout.load %[[SRC]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK:           %[[H2:.*]] = arith.muli %[[H]], %{{.*}} : index
// CHECK:           %[[H3:.*]] = arith.addi %[[H2]], %{{.*}} : index
// CHECK-NEXT:      %[[W2:.*]] = arith.muli %[[W]], %{{.*}} : index
// CHECK-NEXT:      %[[W3:.*]] = arith.addi %[[W2]], %{{.*}} : index
// CHECK-NEXT:      layout.store %[[V]], %[[DST]][%[[N]], %[[C]], %[[H3]], %[[W3]]]
func.func @spread(%5: tensor<1x3x4x4xf32>) -> tensor<1x3x10x10xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %9 = tensor.empty() : tensor<1x3x10x10xf32>
  %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %inserted_slice = tensor.insert_slice %5 into %10[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x4x4xf32> into tensor<1x3x10x10xf32>
  return %inserted_slice : tensor<1x3x10x10xf32>
}
