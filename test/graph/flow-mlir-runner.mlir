// Upstream MLIR runs the flowed and folded graphs: the results (printed by the runner) are
// those of the original graphs (checked against the numpy evaluator in
// test/python/test_graph_numeric.py, which runs this file before and after the passes).
// REQUIRES: mlir-runner
// RUN: xdsl-opt %s -p flow-layout-rewrites,fold-layout-rewrites | filecheck %s --check-prefix=IR
// RUN: xdsl-opt %s -p flow-layout-rewrites,fold-layout-rewrites | %mlir-opt --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --expand-strided-metadata --lower-affine --convert-scf-to-cf --convert-cf-to-llvm --finalize-memref-to-llvm --convert-func-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --reconcile-unrealized-casts | %mlir-runner -e main -entry-point-result=void -shared-libs=%runner-libs | filecheck %s

// IR-NOT: layout.

// NCHW -> NCHW4c with 6 channels (padded with 0.0) after x + bias: the padded rewrite flows
// through the add and folds into both constants.
func.func @padded_bias() -> tensor<1x2x1x2x4xf32> {
  %x = arith.constant dense<[[[[0.0, 1.0]], [[2.0, 3.0]], [[4.0, 5.0]], [[6.0, 7.0]], [[8.0, 9.0]], [[10.0, 11.0]]]]> : tensor<1x6x1x2xf32>
  %bias = arith.constant dense<[[[100.0]], [[200.0]], [[300.0]], [[400.0]], [[500.0]], [[600.0]]]> : tensor<6x1x1xf32>
  %e = tensor.empty() : tensor<1x6x1x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c, 0, 0)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %bias : tensor<1x6x1x2xf32>, tensor<6x1x1xf32>) outs(%e : tensor<1x6x1x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x6x1x2xf32>
  %t = layout.transform %r {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x6x1x2xf32> -> tensor<1x2x1x2x4xf32>
  func.return %t : tensor<1x2x1x2x4xf32>
}

// Sum over H of NCHW into NCW, transformed to NWC: the input becomes NHWC.
func.func @sum_over_h() -> tensor<1x3x2xf32> {
  %x = arith.constant dense<[[[[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]], [[4.0, 5.0, 6.0], [40.0, 50.0, 60.0]]]]> : tensor<1x2x2x3xf32>
  %zero = arith.constant dense<0.0> : tensor<1x2x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, w)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x : tensor<1x2x2x3xf32>) outs(%zero : tensor<1x2x3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %acc, %a : f32
    linalg.yield %y : f32
  } -> tensor<1x2x3xf32>
  %t = layout.transform %s {index_map = #layout.index_map<(n, c, w) -> (n, w, c)>} : tensor<1x2x3xf32> -> tensor<1x3x2xf32>
  func.return %t : tensor<1x3x2xf32>
}

// A window access: out[i] = -x[i + 1], split into tiles of 4.
func.func @shifted(%x: tensor<9xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i + 1)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<9xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.negf %a : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %t = layout.transform %r {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>} : tensor<8xf32> -> tensor<2x4xf32>
  func.return %t : tensor<2x4xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

// CHECK:      sizes = [1, 2, 1, 2, 4]
// CHECK-NEXT: {{\[\[\[\[\[}}100, 202, 304, 406],
// CHECK-NEXT: [101, 203, 305, 407]]],
// CHECK-NEXT: {{\[\[\[}}508, 610, 0, 0],
// CHECK-NEXT: [509, 611, 0, 0]]]]]
// CHECK:      sizes = [1, 3, 2]
// CHECK-NEXT: {{\[\[\[}}11, 44],
// CHECK-NEXT: [22, 55],
// CHECK-NEXT: [33, 66]]]
// CHECK:      sizes = [2, 4]
// CHECK-NEXT: {{\[\[}}-1, -2, -3, -4],
// CHECK-NEXT: [-5, -6, -7, -8]]
func.func @main() attributes {llvm.emit_c_interface} {
  %a = func.call @padded_bias() : () -> tensor<1x2x1x2x4xf32>
  %am = bufferization.to_buffer %a : tensor<1x2x1x2x4xf32> to memref<1x2x1x2x4xf32>
  %au = "memref.cast"(%am) : (memref<1x2x1x2x4xf32>) -> memref<*xf32>
  func.call @printMemrefF32(%au) : (memref<*xf32>) -> ()
  %b = func.call @sum_over_h() : () -> tensor<1x3x2xf32>
  %bm = bufferization.to_buffer %b : tensor<1x3x2xf32> to memref<1x3x2xf32>
  %bu = "memref.cast"(%bm) : (memref<1x3x2xf32>) -> memref<*xf32>
  func.call @printMemrefF32(%bu) : (memref<*xf32>) -> ()
  %x = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<9xf32>
  %c = func.call @shifted(%x) : (tensor<9xf32>) -> tensor<2x4xf32>
  %cm = bufferization.to_buffer %c : tensor<2x4xf32> to memref<2x4xf32>
  %cu = "memref.cast"(%cm) : (memref<2x4xf32>) -> memref<*xf32>
  func.call @printMemrefF32(%cu) : (memref<*xf32>) -> ()
  func.return
}
