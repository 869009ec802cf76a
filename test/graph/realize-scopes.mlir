// One behaviour of realize-scopes per function (scopes written by hand, as
// annotate-texture-scope would).
// RUN: xdsl-opt %s -p realize-scopes | filecheck %s
// RUN: xdsl-opt %s -p realize-scopes,realize-scopes | filecheck %s
// RUN: xdsl-opt %s -p annotate-texture-scope,realize-scopes 2>/dev/null | filecheck %s --check-prefix=ANNOTATED

#id5 = affine_map<(n, c, h, w, b) -> (n, c, h, w, b)>
#par5 = ["parallel", "parallel", "parallel", "parallel", "parallel"]

// Conflicting consumers: %a is written in texture; the return demands global, so one copy
// is made right after %a (shared by both global uses); the texture consumer reads %a.
// CHECK-LABEL: func.func @conflict
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} attrs = {layout.scope = "global.texture"}
// CHECK:         %[[G:.*]] = layout.copy %[[A]] {scope = "global"} : tensor<1x1x2x2x4xf32> -> tensor<1x1x2x2x4xf32>
// CHECK-NEXT:    %[[B:.*]] = linalg.generic {{.*}} ins(%[[A]] : {{.*}}) {{.*}} attrs = {layout.scope = "global"}
// CHECK-NOT:     layout.copy
// CHECK:         func.return %[[G]], %[[B]], %[[G]]
func.func @conflict(%x: tensor<1x1x2x2x4xf32>) -> (tensor<1x1x2x2x4xf32>, tensor<1x1x2x2x4xf32>, tensor<1x1x2x2x4xf32>) {
  %e = tensor.empty() : tensor<1x1x2x2x4xf32>
  %a = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%x : tensor<1x1x2x2x4xf32>) outs(%e : tensor<1x1x2x2x4xf32>) attrs = {layout.scope = "global.texture", layout.operand_scopes = ["global", ""]} {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<1x1x2x2x4xf32>
  %b = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%a : tensor<1x1x2x2x4xf32>) outs(%e : tensor<1x1x2x2x4xf32>) attrs = {layout.scope = "global", layout.operand_scopes = ["global.texture", ""]} {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<1x1x2x2x4xf32>
  func.return {layout.operand_scopes = ["global", "global", "global"]} %a, %b, %a : tensor<1x1x2x2x4xf32>, tensor<1x1x2x2x4xf32>, tensor<1x1x2x2x4xf32>
}

// A copy into the scope its input already lives in is removed; so is a second copy of
// one value into one scope.
// CHECK-LABEL: func.func @redundant
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4xf32>)
// CHECK-NEXT:    %[[T:.*]] = layout.copy %[[X]] {scope = "global.texture"}
// CHECK-NEXT:    func.return %[[X]], %[[T]], %[[T]]
func.func @redundant(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %g = layout.copy %x {scope = "global"} : tensor<2x4xf32> -> tensor<2x4xf32>
  %t1 = layout.copy %x {scope = "global.texture"} : tensor<2x4xf32> -> tensor<2x4xf32>
  %t2 = layout.copy %x {scope = "global.texture"} : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %g, %t1, %t2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// A producer whose only uses are copies into one scope writes that scope itself (the RFC's
// OptimizeToVDeviceForScopeChange); a copy of a copy composes.
// CHECK-LABEL: func.func @write_directly
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} attrs = {layout.scope = "global.texture"}
// CHECK:         linalg.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C:.*]] = layout.copy %{{.*}} {scope = "global.texture"}
// CHECK-NEXT:    func.return %[[A]], %[[C]]
// Re-annotated, the returns demand global: every copy into a texture goes, and the copy's
// own operand demands nothing (a copy reads any scope).
// ANNOTATED-LABEL: func.func @write_directly
// ANNOTATED-NOT:     layout.copy
// ANNOTATED:         func.return %{{.*}}, %{{.*}} :
func.func @write_directly(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %e = tensor.empty() : tensor<2x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) attrs = {layout.scope = "global"} {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<2x4xf32>
  %at = layout.copy %a {scope = "global.texture"} : tensor<2x4xf32> -> tensor<2x4xf32>
  %c1 = layout.copy %x {scope = "global.texture-nhwc"} : tensor<2x4xf32> -> tensor<2x4xf32>
  %c2 = layout.copy %c1 {scope = "global.texture"} : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %at, %c2 : tensor<2x4xf32>, tensor<2x4xf32>
}

// A producer that cannot write whole texels (a padded transform) keeps its copy.
// CHECK-LABEL: func.func @keeps_copy
// CHECK:         %[[T:.*]] = layout.transform %{{.*}} {layout.scope = "global"
// CHECK-NEXT:    %[[C:.*]] = layout.copy %[[T]] {scope = "global.texture"}
// CHECK-NEXT:    func.return %[[C]]
func.func @keeps_copy(%x: tensor<1x6x2x2xf32>) -> tensor<1x2x2x2x4xf32> {
  %t = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32, layout.scope = "global"} : tensor<1x6x2x2xf32> -> tensor<1x2x2x2x4xf32>
  %c = layout.copy %t {scope = "global.texture"} : tensor<1x2x2x2x4xf32> -> tensor<1x2x2x2x4xf32>
  func.return %c : tensor<1x2x2x2x4xf32>
}
