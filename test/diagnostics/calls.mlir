// The invalid-input corpus, area calls: calls whose argument layouts, scopes or counts
// disagree with the callee, refused by the verifiers or by apply-layout.
// RUN: physlayout-opt %s -p apply-layout --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @callee(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  func.return
}
func.func @layout_disagrees(%a: !layout.buffer<16xf32>) {
  func.call @callee(%a) : (!layout.buffer<16xf32>) -> ()
  func.return
}
// CHECK: calls.mlir:[[# @LINE - 3]]:3: error: 'func.call' op operand type mismatch: expected operand type !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>, but provided !layout.buffer<16xf32> for operand number 0
// CHECK-NEXT: func.call @callee(%a) : (!layout.buffer<16xf32>) -> ()

// -----
func.func @callee(%a: !layout.buffer<16xf32>) {
  func.return
}
func.func @transform_disagrees(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  func.call @callee(%a) : (!layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) -> ()
  func.return
}
// CHECK: calls.mlir:[[# @LINE - 3]]:3: error: 'func.call' op operand type mismatch: expected operand type !layout.buffer<16xf32>, but provided !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>> for operand number 0
// CHECK-NEXT: func.call @callee(%a) : (!layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) -> ()

// -----
func.func @callee(%a: !layout.buffer<16xf32>) {
  func.return
}
func.func @scope_disagrees(%a: !layout.buffer<16xf32, scope = "shared">) {
  func.call @callee(%a) : (!layout.buffer<16xf32, scope = "shared">) -> ()
  func.return
}
// CHECK: calls.mlir:[[# @LINE - 3]]:3: error: 'func.call' op operand type mismatch: expected operand type !layout.buffer<16xf32>, but provided !layout.buffer<16xf32, scope = "shared"> for operand number 0
// CHECK-NEXT: func.call @callee(%a) : (!layout.buffer<16xf32, scope = "shared">) -> ()

// -----
func.func @callee(%a: !layout.buffer<16xf32>) {
  func.return
}
func.func @too_many_arguments(%a: !layout.buffer<16xf32>) {
  func.call @callee(%a, %a) : (!layout.buffer<16xf32>, !layout.buffer<16xf32>) -> ()
  func.return
}
// CHECK: calls.mlir:[[# @LINE - 3]]:3: error: 'func.call' op incorrect number of operands for callee
// CHECK-NEXT: func.call @callee(%a, %a) : (!layout.buffer<16xf32>, !layout.buffer<16xf32>) -> ()

// -----
func.func @unknown_callee(%a: !layout.buffer<16xf32>) {
  func.call @nowhere(%a) : (!layout.buffer<16xf32>) -> ()
  func.return
}
// CHECK: calls.mlir:[[# @LINE - 3]]:3: error: 'func.call' op '@nowhere' could not be found in symbol table
// CHECK-NEXT: func.call @nowhere(%a) : (!layout.buffer<16xf32>) -> ()

// -----
func.func @callee(%a: !layout.buffer<4x4xf32>) {
  func.return
}
func.func @shape_disagrees(%a: !layout.buffer<16xf32>) {
  func.call @callee(%a) : (!layout.buffer<16xf32>) -> ()
  func.return
}
// CHECK: calls.mlir:[[# @LINE - 3]]:3: error: 'func.call' op operand type mismatch: expected operand type !layout.buffer<4x4xf32>, but provided !layout.buffer<16xf32> for operand number 0
// CHECK-NEXT: func.call @callee(%a) : (!layout.buffer<16xf32>) -> ()

// -----
func.func private @external(%a: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>)
func.func @padding_through_declaration(%a: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  func.call @external(%a) : (!layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) -> ()
  func.return
}
// CHECK: calls.mlir:[[# @LINE - 4]]:1: error: apply-layout: %a of type !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>: transform (i) -> (i floordiv 4, i mod 4) introduces padding on shape [10] (padding where i floordiv 4 == 2 and i mod 4 >= 2); give the buffer a pad_value{{$}}

// -----
func.func @callee(%a: !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>) {
  func.return
}
func.func @callee_not_injective(%a: !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>) {
  func.call @callee(%a) : (!layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>) -> ()
  func.return
}
// CHECK: calls.mlir:[[# @LINE - 7]]:1: error: apply-layout: %a of type !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>: index map (i) -> (i floordiv 2) is not injective on shape [8]: indices [0] and [1] both map to [0]{{$}}

// -----
func.func @callee(%a: !layout.buffer<16xf32>) -> !layout.buffer<16xf32> {
  func.return %a : !layout.buffer<16xf32>
}
func.func @result_count_disagrees(%a: !layout.buffer<16xf32>) {
  func.call @callee(%a) : (!layout.buffer<16xf32>) -> ()
  func.return
}
// CHECK: calls.mlir:[[# @LINE - 3]]:3: error: 'func.call' op incorrect number of results for callee
// CHECK-NEXT: func.call @callee(%a) : (!layout.buffer<16xf32>) -> ()

// -----
func.func @callee(%a: !layout.buffer<16xf32>) {
  func.return
}
func.func @element_type_disagrees(%a: !layout.buffer<16xf16>) {
  func.call @callee(%a) : (!layout.buffer<16xf16>) -> ()
  func.return
}
// CHECK: calls.mlir:[[# @LINE - 3]]:3: error: 'func.call' op operand type mismatch: expected operand type !layout.buffer<16xf32>, but provided !layout.buffer<16xf16> for operand number 0
// CHECK-NEXT: func.call @callee(%a) : (!layout.buffer<16xf16>) -> ()
