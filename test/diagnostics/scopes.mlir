// The invalid-input corpus, area scopes: malformed memory-scope annotations on graph-level
// ops (`layout.scope`, `layout.operand_scopes`), refused by realize-scopes.
// RUN: physlayout-opt %s -p realize-scopes --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @operand_scopes_not_an_array(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  func.return {layout.operand_scopes = "global"} %x : tensor<2x4xf32>
}
// CHECK: scopes.mlir:[[# @LINE - 2]]:3: error: realize-scopes: 'func.return' has an invalid layout.operand_scopes "global": expected one scope (or "") per operand (1), each one of ['global', 'shared', 'local', 'global.texture', 'global.texture-nhwc', 'global.texture-weight']
// CHECK-NEXT: func.return {layout.operand_scopes = "global"} %x : tensor<2x4xf32>

// -----
func.func @operand_scope_not_a_string(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  func.return {layout.operand_scopes = [1]} %x : tensor<2x4xf32>
}
// CHECK: scopes.mlir:[[# @LINE - 2]]:3: error: realize-scopes: 'func.return' has an invalid layout.operand_scopes [1 : i64]: expected one scope (or "") per operand (1), each one of ['global', 'shared', 'local', 'global.texture', 'global.texture-nhwc', 'global.texture-weight']
// CHECK-NEXT: func.return {layout.operand_scopes = [1]} %x : tensor<2x4xf32>

// -----
func.func @too_few_operand_scopes(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  func.return {layout.operand_scopes = ["global"]} %x, %y : tensor<2x4xf32>, tensor<2x4xf32>
}
// CHECK: scopes.mlir:[[# @LINE - 2]]:3: error: realize-scopes: 'func.return' has an invalid layout.operand_scopes ["global"]: expected one scope (or "") per operand (2), each one of ['global', 'shared', 'local', 'global.texture', 'global.texture-nhwc', 'global.texture-weight']
// CHECK-NEXT: func.return {layout.operand_scopes = ["global"]} %x, %y : tensor<2x4xf32>, tensor<2x4xf32>

// -----
func.func @scope_case(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  func.return {layout.operand_scopes = ["GLOBAL"]} %x : tensor<2x4xf32>
}
// CHECK: scopes.mlir:[[# @LINE - 2]]:3: error: realize-scopes: 'func.return' has an invalid layout.operand_scopes ["GLOBAL"]: expected one scope (or "") per operand (1), each one of ['global', 'shared', 'local', 'global.texture', 'global.texture-nhwc', 'global.texture-weight']
// CHECK-NEXT: func.return {layout.operand_scopes = ["GLOBAL"]} %x : tensor<2x4xf32>

// -----
func.func @texture_scope_typo(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  func.return {layout.operand_scopes = ["global.texture.nhwc"]} %x : tensor<2x4xf32>
}
// CHECK: scopes.mlir:[[# @LINE - 2]]:3: error: realize-scopes: 'func.return' has an invalid layout.operand_scopes ["global.texture.nhwc"]: expected one scope (or "") per operand (1), each one of ['global', 'shared', 'local', 'global.texture', 'global.texture-nhwc', 'global.texture-weight']
// CHECK-NEXT: func.return {layout.operand_scopes = ["global.texture.nhwc"]} %x : tensor<2x4xf32>

// -----
func.func @copy_to_memref(%x: tensor<2x4xf32>) -> memref<2x4xf32> {
  %y = "layout.copy"(%x) <{scope = #layout<memory_scope global>}> : (tensor<2x4xf32>) -> memref<2x4xf32>
  func.return %y : memref<2x4xf32>
}
// CHECK: scopes.mlir:[[# @LINE - 3]]:3: error: 'layout.copy' op result 'result' at position 0 does not verify: memref<2x4xf32> should be of base attribute tensor
// CHECK-NEXT: %y = "layout.copy"(%x) <{scope = #layout<memory_scope global>}> : (tensor<2x4xf32>) -> memref<2x4xf32>
