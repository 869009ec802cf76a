// Upsampling fused into its readers (fuse-elementwise): torch-mlir's nearest upsampling (an
// output-only generic computing the source index from linalg.index, fpn_tiny's body) and the
// corner gathers of a bilinear one are recomputed by the kernel that reads them at its own
// iteration point, so the upsampled tensor is never stored; a reader at any other index, a
// reader that is not a generic, keeps it stored. PixelShuffle's transform folds into the copy
// that takes a conv's blocked result back to NCHW. test_fuse_upsample.py runs each function
// before and after with the graph evaluator.
// RUN: xdsl-opt %s -p fuse-elementwise | filecheck %s
// RUN: xdsl-opt %s -p fuse-elementwise,fuse-elementwise | filecheck %s
// RUN: xdsl-opt %s -p 'fuse-elementwise{remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: xdsl-opt %s -p fuse-elementwise,legalize-layout,physlayout-opencl -t opencl > /dev/null

#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#flip = affine_map<(d0, d1, d2, d3) -> (d0, d1, 3 - d2, d3)>
// The lateral conv + nearest upsample + add of an FPN: ONE group, the conv its root, the
// upsample a stage that gathers the source at the point the conv writes.
// The gathered source is read from above (like a scalar), so the group's inputs are the
// conv's.
// CHECK-LABEL: func.func @upsample_add
// CHECK-SAME:    %[[SRC:[^:]*]]: tensor<1x3x2x2xf32>)
// CHECK-NOT:     } -> tensor<1x3x4x4xf32>
// CHECK:         %[[G:.*]] = layout.fused ins(%x, %w : tensor<1x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x4x4xf32> {
// CHECK:           %[[U:.*]] = linalg.generic
// CHECK:             tensor.extract %[[SRC]]
// CHECK:           %[[C:.*]] = linalg.generic {{.*}}reduction
// CHECK:           linalg.generic {{.*}} ins(%[[C]], %[[U]] :
// CHECK:             arith.addf
// CHECK:           layout.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[G]]
func.func @upsample_add(%x: tensor<1x3x4x4xf32>, %w: tensor<3x3x1x1xf32>, %61: tensor<1x3x2x2xf32>) -> tensor<1x3x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_3 = arith.constant 2.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_4 = arith.constant 1.000000e+00 : f32
  %36 = tensor.empty() : tensor<1x3x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%36 : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %62 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<3x3x1x1xf32>) outs(%f : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
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
  %64 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%62, %63 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) outs(%36 : tensor<1x3x4x4xf32>) {
  ^bb0(%in: f32, %in_40: f32, %out: f32):
    %78 = arith.addf %in, %in_40 : f32
    linalg.yield %78 : f32
  } -> tensor<1x3x4x4xf32>
  return %64 : tensor<1x3x4x4xf32>
}
// Two elementwise readers: each one's group recomputes the gather (one load each, exact);
// the upsampled tensor is not stored.
// CHECK-LABEL: func.func @two_readers
// CHECK-NOT:     } -> tensor<1x3x4x4xf32>
// CHECK:         layout.fused
// CHECK:           tensor.extract
// CHECK:         layout.fused
// CHECK:           tensor.extract
// CHECK:         func.return
func.func @two_readers(%x: tensor<1x3x4x4xf32>, %w: tensor<3x3x1x1xf32>, %61: tensor<1x3x2x2xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_3 = arith.constant 2.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_4 = arith.constant 1.000000e+00 : f32
  %36 = tensor.empty() : tensor<1x3x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%36 : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %62 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<3x3x1x1xf32>) outs(%f : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
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
  %64 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%62, %63 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) outs(%36 : tensor<1x3x4x4xf32>) {
  ^bb0(%in: f32, %in_40: f32, %out: f32):
    %78 = arith.addf %in, %in_40 : f32
    linalg.yield %78 : f32
  } -> tensor<1x3x4x4xf32>
  %65 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %63 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) outs(%36 : tensor<1x3x4x4xf32>) {
  ^bb0(%in: f32, %in_40: f32, %out: f32):
    %78 = arith.addf %in, %in_40 : f32
    linalg.yield %78 : f32
  } -> tensor<1x3x4x4xf32>
  return %64, %65 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}
// Refused: the reader takes the upsampled tensor flipped along H (another element than the
// one its iteration writes): the upsample stays a kernel of its own.
// CHECK-LABEL: func.func @shifted_reader
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x4x4xf32>)
// CHECK:           tensor.extract
// CHECK:         layout.fused ins(%{{.*}}, %[[U]]
// REMARK: remark: fuse-elementwise: {{.*}} is not fused into {{.*}} is read at (d0, d1, -d2 + 3, d3)
func.func @shifted_reader(%x: tensor<1x3x4x4xf32>, %w: tensor<3x3x1x1xf32>, %61: tensor<1x3x2x2xf32>) -> tensor<1x3x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_3 = arith.constant 2.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_4 = arith.constant 1.000000e+00 : f32
  %36 = tensor.empty() : tensor<1x3x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%36 : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %62 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<3x3x1x1xf32>) outs(%f : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
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
  %64 = linalg.generic {indexing_maps = [#map1, #flip, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%62, %63 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) outs(%36 : tensor<1x3x4x4xf32>) {
  ^bb0(%in: f32, %in_40: f32, %out: f32):
    %78 = arith.addf %in, %in_40 : f32
    linalg.yield %78 : f32
  } -> tensor<1x3x4x4xf32>
  return %64 : tensor<1x3x4x4xf32>
}
// Refused: two readers, one of them flipped: the tensor is stored for both.
// CHECK-LABEL: func.func @two_readers_one_shifted
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x4x4xf32>)
// CHECK:           tensor.extract
// CHECK:         layout.fused ins(%{{.*}}, %[[U]]
// CHECK:         linalg.generic {{.*}} ins(%x, %[[U]]
// REMARK: remark: fuse-elementwise: {{.*}} is not recomputed by its 2 readers: {{.*}} is read at (d0, d1, -d2 + 3, d3) {{.*}} so it is stored
func.func @two_readers_one_shifted(%x: tensor<1x3x4x4xf32>, %w: tensor<3x3x1x1xf32>, %61: tensor<1x3x2x2xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_3 = arith.constant 2.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_4 = arith.constant 1.000000e+00 : f32
  %36 = tensor.empty() : tensor<1x3x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%36 : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %62 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<3x3x1x1xf32>) outs(%f : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
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
  %64 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%62, %63 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) outs(%36 : tensor<1x3x4x4xf32>) {
  ^bb0(%in: f32, %in_40: f32, %out: f32):
    %78 = arith.addf %in, %in_40 : f32
    linalg.yield %78 : f32
  } -> tensor<1x3x4x4xf32>
  %65 = linalg.generic {indexing_maps = [#map1, #flip, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %63 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) outs(%36 : tensor<1x3x4x4xf32>) {
  ^bb0(%in: f32, %in_40: f32, %out: f32):
    %78 = arith.addf %in, %in_40 : f32
    linalg.yield %78 : f32
  } -> tensor<1x3x4x4xf32>
  return %64, %65 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}
// Refused: the upsampled tensor is also a result of the function (needed whole).
// CHECK-LABEL: func.func @returned_too
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x4x4xf32>)
// CHECK:         func.return %{{.*}}, %[[U]]
// REMARK: remark: fuse-elementwise: {{.*}} is not recomputed by its readers: it is used by 'func.return', so it is stored
func.func @returned_too(%x: tensor<1x3x4x4xf32>, %w: tensor<3x3x1x1xf32>, %61: tensor<1x3x2x2xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_3 = arith.constant 2.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_4 = arith.constant 1.000000e+00 : f32
  %36 = tensor.empty() : tensor<1x3x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%36 : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %62 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<3x3x1x1xf32>) outs(%f : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
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
  %64 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%62, %63 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) outs(%36 : tensor<1x3x4x4xf32>) {
  ^bb0(%in: f32, %in_40: f32, %out: f32):
    %78 = arith.addf %in, %in_40 : f32
    linalg.yield %78 : f32
  } -> tensor<1x3x4x4xf32>
  return %64, %63 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}
// NCHW4c (the layout passes' form, fpn_tiny): a texture group whose texel lane loop d4 is
// the upsample's channel lane: the lane's index only feeds the gather's indices, so
// vectorize-texels gathers four lanes; the group stores whole texels.
// CHECK-LABEL: func.func @blocked_texture
// CHECK:         layout.fused ins(%x, %w, %b : {{.*}}) -> tensor<1x1x4x4x4xf32> attributes {layout.scope = "global.texture"}
// CHECK:           linalg.index 4
// CHECK:           tensor.extract %src
// CHECK:           layout.yield
func.func @blocked_texture(%x: tensor<1x1x4x4x4xf32>, %w: tensor<1x4x1x1x4xf32>, %b: tensor<1x1x4x4x4xf32>, %src: tensor<1x4x2x2xf32>) -> tensor<1x1x4x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_3 = arith.constant 2.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_4 = arith.constant 1.000000e+00 : f32
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, (d5 floordiv 4), (d6 + d2), (d7 + d3), (d5 mod 4))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d5, d6, d7, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x1x4x4x4xf32>, tensor<1x4x1x1x4xf32>) outs(%b : tensor<1x1x4x4x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%0: f32, %1: f32, %2: f32):
    %3 = arith.mulf %0, %1 : f32
    %4 = arith.addf %3, %2 : f32
    linalg.yield %4 : f32
  } -> tensor<1x1x4x4x4xf32>
  %e = tensor.empty() : tensor<1x1x4x4x4xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x1x4x4x4xf32>) attrs = {layout.scope = "global"} {
  ^bb0(%out_12: f32):
    %132 = linalg.index 1 : index
    %133 = linalg.index 2 : index
    %134 = linalg.index 3 : index
    %135 = linalg.index 4 : index
    %136 = arith.constant 4 : index
    %137 = arith.muli %132, %136 : index
    %138 = arith.addi %137, %135 : index
    %139 = arith.index_cast %133 : index to i64
    %140 = arith.sitofp %139 : i64 to f32
    %141 = arith.divf %140, %cst_3 : f32
    %142 = math.floor %141 : f32
    %143 = arith.maximumf %142, %cst : f32
    %144 = arith.minimumf %143, %cst_4 : f32
    %145 = arith.fptosi %144 : f32 to i64
    %146 = arith.index_cast %145 : i64 to index
    %147 = arith.index_cast %134 : index to i64
    %148 = arith.sitofp %147 : i64 to f32
    %149 = arith.divf %148, %cst_3 : f32
    %150 = math.floor %149 : f32
    %151 = arith.maximumf %150, %cst : f32
    %152 = arith.minimumf %151, %cst_4 : f32
    %153 = arith.fptosi %152 : f32 to i64
    %154 = arith.index_cast %153 : i64 to index
    %extracted_1 = tensor.extract %src[%c0, %138, %146, %154] : tensor<1x4x2x2xf32>
    linalg.yield %extracted_1 : f32
  } -> tensor<1x1x4x4x4xf32>
  %e2 = tensor.empty() : tensor<1x1x4x4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%c, %u : tensor<1x1x4x4x4xf32>, tensor<1x1x4x4x4xf32>) outs(%e2 : tensor<1x1x4x4x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%in_22: f32, %in_23: f32, %out_13: f32):
    %155 = arith.addf %in_22, %in_23 : f32
    linalg.yield %155 : f32
  } -> tensor<1x1x4x4x4xf32>
  return %s : tensor<1x1x4x4x4xf32>
}

// Refused: an NCHW texture whose texel lanes run along W (extent 4): the upsample would
// compute its source column (sitofp, divf, floor) from the lane's index, which
// vectorize-texels runs only in access indices.
// CHECK-LABEL: func.func @lane_along_w
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x4x4xf32>)
// CHECK:         ins(%{{.*}}, %[[U]]
// REMARK: remark: fuse-elementwise: {{.*}} would store whole texels of its global.texture result, but its body computes 'arith.index_cast' on the texel lane's index, which vectorize-texels runs only in access indices
func.func @lane_along_w(%x: tensor<1x3x4x4xf32>, %w: tensor<3x3x1x1xf32>, %61: tensor<1x3x2x2xf32>) -> tensor<1x3x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_3 = arith.constant 2.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_4 = arith.constant 1.000000e+00 : f32
  %36 = tensor.empty() : tensor<1x3x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%36 : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %62 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<3x3x1x1xf32>) outs(%f : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
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
  %64 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%62, %63 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) outs(%36 : tensor<1x3x4x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%in: f32, %in_40: f32, %out: f32):
    %78 = arith.addf %in, %in_40 : f32
    linalg.yield %78 : f32
  } -> tensor<1x3x4x4xf32>
  return %64 : tensor<1x3x4x4xf32>
}

// PixelShuffle (espcn): a conv's blocked result back to NCHW, cropped to its 9 channels,
// then the shuffle (expand/transpose/collapse, one transform after fold-layout-rewrites):
// ONE copy kernel reading the blocked tensor at the composed index, no kernel for the
// shuffle.
// CHECK-LABEL: func.func @pixel_shuffle
// CHECK-NEXT:    %[[R:.*]] = layout.fused ins(%c : tensor<1x3x2x2x4xf32>) -> tensor<1x1x6x6xf32>
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, ((((d2 mod 3) * 3) + (d3 mod 3)) floordiv 4), (d2 floordiv 3), (d3 floordiv 3), (((d3 mod 3) + ((d2 mod 3) * -1)) mod 4))>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK:         func.return %[[R]]
func.func @pixel_shuffle(%c: tensor<1x3x2x2x4xf32>) -> tensor<1x1x6x6xf32> {
  %18 = layout.transform %c {layout.scope = "global", index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x3x2x2x4xf32> -> tensor<1x12x2x2xf32>
  %19 = layout.crop %18 {layout.scope = "global", start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 9, 2, 2>} : tensor<1x12x2x2xf32> -> tensor<1x9x2x2xf32>
  %collapsed = layout.transform %19 {layout.scope = "global", index_map = #layout.index_map<(x0, x1, x2, x3) -> (x0, 0, x2 * 3 + x1 floordiv 3, x3 * 3 + x1 mod 3)>} : tensor<1x9x2x2xf32> -> tensor<1x1x6x6xf32>
  return %collapsed : tensor<1x1x6x6xf32>
}
