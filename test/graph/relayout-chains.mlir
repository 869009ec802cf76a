// examples/relayout_chains.mlir: raise-layout-rewrites + fold-layout-rewrites fold each chain
// of upstream relayout ops into one layout rewrite, or into nothing exactly when the
// composition is proven the identity (the padded unpack -> pack is not: it stays); lowered
// back, the result is upstream IR that mlir-opt verifies, and mlir-runner runs it
// (test/python/test_layout_rewrites_interop.py compares every function with numpy).
// RUN: xdsl-opt %S/../../examples/relayout_chains.mlir -p raise-layout-rewrites,fold-layout-rewrites | filecheck %s
// RUN: %if mlir %{ xdsl-opt %S/../../examples/relayout_chains.mlir -p raise-layout-rewrites,fold-layout-rewrites,lower-layout-rewrites | %mlir-opt --verify-each | filecheck %s --check-prefix=MLIR %}

// CHECK-LABEL: func.func @pack_unpack_padded
// CHECK-SAME:    (%[[X:.*]]: tensor<1x6x3x3xf32>)
// CHECK-NEXT:    func.return %[[X]]

// CHECK-LABEL: func.func @pack_unpack_permuted
// CHECK-SAME:    (%[[X:.*]]: tensor<8x4x3x3xf32>)
// CHECK-NEXT:    func.return %[[X]]

// CHECK-LABEL: func.func @unpack_pack_padded
// CHECK-NEXT:    layout.transform
// CHECK-NEXT:    layout.crop
// CHECK-NEXT:    layout.transform
// CHECK-NEXT:    func.return

// CHECK-LABEL: func.func @transpose_expand_transpose_collapse
// CHECK-SAME:    (%[[X:.*]]: tensor<4x6xf32>)
// CHECK-NEXT:    func.return %[[X]]

// CHECK-LABEL: func.func @transpose_expand_transpose_collapse_swapped
// CHECK-NEXT:    %[[R:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(x0, x1) -> (x0, (x1 mod 3) * 2 + x1 floordiv 3)>} : tensor<4x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    func.return %[[R]]

// CHECK-LABEL: func.func @transpose_pair
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    func.return %[[X]]

// CHECK-LABEL: func.func @expand_collapse_refold
// CHECK-NEXT:    %[[R:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(x0, x1) -> (x0 floordiv 3, (x0 mod 3) * 4 + x1)>} : tensor<6x4xf32> -> tensor<2x12xf32>
// CHECK-NEXT:    func.return %[[R]]

// CHECK-LABEL: func.func @pad_slice
// CHECK-SAME:    (%[[X:.*]]: tensor<3x5xf32>)
// CHECK-NEXT:    func.return %[[X]]

// CHECK-LABEL: func.func @pack_transpose_unpack
// CHECK-SAME:    (%[[X:.*]]: tensor<5x6xf32>)
// CHECK-NEXT:    func.return %[[X]]

// CHECK-LABEL: func.func @pack_collapse
// CHECK-NEXT:    %[[R:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(x0, x1, x2, x3) -> (x0, x1 floordiv 4, x2 * 8 + x3 * 4 + x1 mod 4)>} : tensor<1x8x2x2xf32> -> tensor<1x2x16xf32>
// CHECK-NEXT:    func.return %[[R]]

// CHECK-LABEL: func.func @unpack_pack_full
// CHECK-SAME:    (%[[Y:.*]]: tensor<1x2x2x2x4xf32>)
// CHECK-NEXT:    func.return %[[Y]]

// CHECK-LABEL: func.func @pack_then_transpose
// CHECK-NEXT:    %[[R:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(x0, x1, x2, x3) -> (x0, x2, x3, x1 floordiv 4, x1 mod 4)>} : tensor<1x8x2x3xf32> -> tensor<1x2x3x2x4xf32>
// CHECK-NEXT:    func.return %[[R]]

// MLIR-LABEL: func.func @pack_unpack_padded
// MLIR-NEXT:    return %arg0
// MLIR-LABEL: func.func @unpack_pack_padded
// MLIR:         linalg.unpack
// MLIR:         linalg.pack
// MLIR-LABEL: func.func @expand_collapse_refold
// MLIR-NEXT:    tensor.collapse_shape
// MLIR-NEXT:    tensor.expand_shape
// MLIR-NEXT:    return
// MLIR-LABEL: func.func @pack_then_transpose
// MLIR:         linalg.pack %arg0 outer_dims_perm = [0, 2, 3, 1] inner_dims_pos = [1] inner_tiles = [4]
// MLIR-NEXT:    return
