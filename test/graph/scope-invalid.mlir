// Verifier errors of layout.copy (the passes' refusals of malformed scope attributes are in scope-invalid-passes.mlir).
// RUN: xdsl-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @bad_scope(%x: tensor<2x4xf32>) {
  %t = layout.copy %x {scope = "texture"} : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}
// CHECK: 'layout.copy' unknown memory scope 'texture', expected one of ['global', 'shared', 'local', 'global.texture', 'global.texture-nhwc', 'global.texture-weight']

// -----
func.func @type_change(%x: tensor<2x4xf32>) {
  %t = layout.copy %x {scope = "global"} : tensor<2x4xf32> -> tensor<4x2xf32>
  func.return
}
// CHECK: 'layout.copy' must keep the tensor type: tensor<2x4xf32> -> tensor<4x2xf32>
