// Invalid scope annotations: realize-scopes and legalize-layout refuse them with a
// diagnostic naming the op.
// RUN: xdsl-opt %s -p realize-scopes --split-input-file --verify-diagnostics | filecheck %s
// RUN: xdsl-opt %s -p legalize-layout --split-input-file --verify-diagnostics | filecheck %s --check-prefix=LEGALIZE

func.func @demands_per_operand(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  func.return {layout.operand_scopes = ["global", "global"]} %x : tensor<2x4xf32>
}
// CHECK: realize-scopes: 'func.return' has an invalid layout.operand_scopes ["global", "global"]: expected one scope (or "") per operand (1), each one of
// LEGALIZE: legalize-layout: 'func.return' has an invalid layout.operand_scopes

// -----
func.func @unknown_scope(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) attrs = {layout.scope = "texture"} {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  func.return {layout.operand_scopes = ["nowhere"]} %a : tensor<2x4xf32>
}
// CHECK: realize-scopes: 'func.return' has an invalid layout.operand_scopes ["nowhere"]
// LEGALIZE: legalize-layout: 'linalg.generic' has an invalid layout.scope "texture", expected one of
