// The invalid-input corpus, area separators: axis separators out of order or out of range
// (in `axis_separators` and as '|' in index maps), and separator layouts the passes refuse.
// RUN: physlayout-opt %s -p apply-layout,flatten-buffers --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @separator_equals_rank(%a: !layout.buffer<2x3x4xf32, axis_separators = [3]>) {
  func.return
}
// CHECK: separators.mlir:[[# @LINE - 3]]:52: error: axis separator 3 is out of range 1..2 for rank 3 (no leading or trailing separator)
// CHECK-NEXT: func.func @separator_equals_rank(%a: !layout.buffer<2x3x4xf32, axis_separators = [3]>) {

// -----
func.func @separator_zero(%a: !layout.buffer<2x3x4xf32, axis_separators = [0, 1]>) {
  func.return
}
// CHECK: separators.mlir:[[# @LINE - 3]]:45: error: axis separator 0 is out of range 1..2 for rank 3 (no leading or trailing separator)
// CHECK-NEXT: func.func @separator_zero(%a: !layout.buffer<2x3x4xf32, axis_separators = [0, 1]>) {

// -----
func.func @separators_descending(%a: !layout.buffer<2x3x4x5xf32, axis_separators = [1, 3, 2]>) {
  func.return
}
// CHECK: separators.mlir:[[# @LINE - 3]]:52: error: axis separators must be strictly increasing, got [1, 3, 2]
// CHECK-NEXT: func.func @separators_descending(%a: !layout.buffer<2x3x4x5xf32, axis_separators = [1, 3, 2]>) {

// -----
func.func @separators_non_integer(%a: !layout.buffer<2x3x4xf32, axis_separators = [1.5]>) {
  func.return
}
// CHECK: separators.mlir:[[# @LINE - 3]]:84: error: Expected integer literal
// CHECK-NEXT: func.func @separators_non_integer(%a: !layout.buffer<2x3x4xf32, axis_separators = [1.5]>) {

// -----
func.func @separator_with_pending_transform(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, axis_separators = [1]>) {
  func.return
}
// CHECK: separators.mlir:[[# @LINE - 3]]:63: error: a buffer with a pending transform takes its axis separators from the transform ('|'), not from axis_separators
// CHECK-NEXT: func.func @separator_with_pending_transform(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, axis_separators = [1]>) {

// -----
func.func @separator_first_of_two(%a: !layout.buffer<16xf32, transform = [#layout.index_map<(i) -> (i floordiv 4 | i mod 4)>, #layout.index_map<(a, b) -> (b, a)>]>) {
  func.return
}
// CHECK: separators.mlir:[[# @LINE - 3]]:53: error: only the last transform may carry axis separators ('|'), not #0
// CHECK-NEXT: func.func @separator_first_of_two(%a: !layout.buffer<16xf32, transform = [#layout.index_map<(i) -> (i floordiv 4 | i mod 4)>, #layout.index_map<(a, b) -> (b, a)>]>) {

// -----
func.func @separator_leading_in_map(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (| i floordiv 4, i mod 4)>>) {
  func.return
}
// CHECK: separators.mlir:[[# @LINE - 3]]:93: error: invalid index map: axis separator '|' must stand between two outputs at '|' (column 9) in '(i) -> (| i floordiv 4, i mod 4)'
// CHECK-NEXT: func.func @separator_leading_in_map(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (| i floordiv 4, i mod 4)>>) {

// -----
func.func @separators_on_tensor_transform(%x: tensor<2x8xf32>) {
  %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (i | j floordiv 4, j mod 4)>} : tensor<2x8xf32> -> tensor<2x2x4xf32>
  func.return
}
// CHECK: separators.mlir:[[# @LINE - 3]]:3: error: 'layout.transform' index map (i, j) -> (i | j floordiv 4, j mod 4) carries axis separators ('|'); tensors have no physical axes
// CHECK-NEXT: %r = layout.transform %x {index_map = #layout.index_map<(i, j) -> (i | j floordiv 4, j mod 4)>} : tensor<2x8xf32> -> tensor<2x2x4xf32>
