// Round trip of layout.copy and the scope attributes, in custom and generic form.
// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @copies
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4xf32>)
// CHECK-NEXT:    %[[T:.*]] = layout.copy %[[X]] {scope = "global.texture"} : tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[G:.*]] = layout.copy %[[T]] {layout.operand_scopes = ["global.texture"], scope = "global"} : tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %[[G]]
// GENERIC: "layout.copy"(%{{.*}}) <{scope = "global.texture"}> : (tensor<2x4xf32>) -> tensor<2x4xf32>
func.func @copies(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %t = layout.copy %x {scope = "global.texture"} : tensor<2x4xf32> -> tensor<2x4xf32>
  %g = layout.copy %t {scope = "global", layout.operand_scopes = ["global.texture"]} : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %g : tensor<2x4xf32>
}
