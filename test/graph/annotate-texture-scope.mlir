// One behaviour of annotate-texture-scope per function.
// RUN: xdsl-opt %s -p annotate-texture-scope 2>/dev/null | filecheck %s
// RUN: xdsl-opt %s -p annotate-texture-scope 2>/dev/null | xdsl-opt -p annotate-texture-scope 2>/dev/null | filecheck %s
// RUN: xdsl-opt %s -p 'annotate-texture-scope{weights-in-global=true}' 2>/dev/null | filecheck %s --check-prefix=MIXED
// RUN: xdsl-opt %s -p 'annotate-texture-scope{remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: xdsl-opt %s -p 'annotate-texture-scope{max-image-width=8 remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=LIMIT
// RUN: xdsl-opt %s -p 'annotate-texture-scope{remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=F16-REMARK
// RUN: xdsl-opt %s -p annotate-texture-scope 2>&1 >/dev/null | filecheck %s --allow-empty --check-prefix=QUIET
// RUN: xdsl-opt %S/convert-layout.mlir -p convert-layout,flow-layout-rewrites,fold-layout-rewrites,annotate-texture-scope 2>/dev/null | filecheck %s --check-prefix=CHANNELS

// Channel counts 8, 6, 3 and 64 (the convs of convert-layout.mlir, converted): the padded
// transforms of 6 and 3 channels cannot write whole texels and stay global; everything
// else between the boundary rewrites lives in textures.
// CHANNELS-LABEL: func.func @conv8
// CHANNELS:         layout.transform %x {layout.scope = "global.texture"
// CHANNELS-NEXT:    layout.transform %w {layout.scope = "global.texture-weight"
// CHANNELS:         linalg.fill {layout.scope = "global.texture"
// CHANNELS:         attrs = {layout.frozen, layout.scope = "global.texture", layout.operand_scopes = ["global.texture", "global.texture-weight", "global.texture"]}
// CHANNELS-LABEL: func.func @conv6
// CHANNELS:         layout.transform %x {layout.scope = "global"
// CHANNELS-NEXT:    layout.transform %w {layout.scope = "global"
// CHANNELS:         attrs = {layout.frozen, layout.scope = "global.texture", layout.operand_scopes = ["global", "global", "global.texture"]}
// CHANNELS-LABEL: func.func @rgb
// CHANNELS:         layout.transform %x {layout.scope = "global"
// CHANNELS-NEXT:    layout.transform %w {layout.scope = "global.texture-weight"
// CHANNELS:         attrs = {layout.frozen, layout.scope = "global.texture", layout.operand_scopes = ["global", "global.texture-weight", "global.texture"]}
// CHANNELS-LABEL: func.func @rfc
// CHANNELS:         layout.transform %x {layout.scope = "global.texture"{{.*}} -> tensor<2x16x6x6x4xf32>
// CHANNELS-NEXT:    layout.transform %w {layout.scope = "global.texture-weight"{{.*}} -> tensor<8x64x3x3x4xf32>

#id5 = affine_map<(n, c, h, w, b) -> (n, c, h, w, b)>
#par5 = ["parallel", "parallel", "parallel", "parallel", "parallel"]

// A blocked conv -> relu chain: activations demand global.texture, the conv's filter (input
// #1 of a frozen generic) global.texture-weight; the result goes back to NCHW and is
// returned, so its rewrite writes global.
// CHECK-LABEL: func.func @chain
// CHECK:         %[[XT:.*]] = layout.transform %{{.*}} {layout.scope = "global.texture", layout.operand_scopes = ["global"]
// CHECK-NEXT:    %[[WT:.*]] = layout.transform %{{.*}} {layout.scope = "global.texture-weight", layout.operand_scopes = ["global"]
// CHECK:         %[[F:.*]] = linalg.fill {layout.scope = "global.texture", layout.operand_scopes = ["", ""]}
// CHECK-NEXT:    %[[C:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[XT]], %[[WT]] : {{.*}}) outs(%[[F]] : {{.*}}) attrs = {layout.frozen, layout.scope = "global.texture", layout.operand_scopes = ["global.texture", "global.texture-weight", "global.texture"]}
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[C]] : {{.*}}) attrs = {layout.scope = "global.texture", layout.operand_scopes = ["global.texture", ""]}
// CHECK:         %[[Y:.*]] = layout.transform %[[R]] {layout.scope = "global", layout.operand_scopes = ["global.texture"]
// CHECK-NEXT:    func.return {layout.operand_scopes = ["global"]} %[[Y]]
// MIXED-LABEL: func.func @chain
// MIXED:         layout.transform %{{.*}} {layout.scope = "global.texture",
// MIXED-NEXT:    layout.transform %{{.*}} {layout.scope = "global",
// MIXED:         attrs = {layout.frozen, layout.scope = "global.texture", layout.operand_scopes = ["global.texture", "global", "global.texture"]}
func.func @chain(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %xt = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>} : tensor<1x8x6x6xf32> -> tensor<1x2x6x6x4xf32>
  %wt = layout.transform %w {index_map = #layout.index_map<(o, i, h, w) -> (o floordiv 4, i, h, w, o mod 4)>} : tensor<8x8x3x3xf32> -> tensor<2x8x3x3x4xf32>
  %e = tensor.empty() : tensor<1x2x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  %c = linalg.generic {indexing_maps = [
      affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d5 floordiv 4, d6 + d2, d7 + d3, d5 mod 4)>,
      affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d5, d6, d7, d4)>,
      affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
    iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%xt, %wt : tensor<1x2x6x6x4xf32>, tensor<2x8x3x3x4xf32>) outs(%f : tensor<1x2x4x4x4xf32>) attrs = {layout.frozen} {
  ^bb0(%xv: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %xv, %wv : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4x4xf32>
  %e2 = tensor.empty() : tensor<1x2x4x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%c : tensor<1x2x4x4x4xf32>) outs(%e2 : tensor<1x2x4x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x4x4xf32>
  %y = layout.transform %r {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x4x4x4xf32> -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}

// Conflicting consumers: %a is read by a texture consumer and returned (global); the tie
// goes to the texture (the RFC's default); realize-scopes will copy it for the return.
// Rank-1 and f64 tensors are never textures; an f16 tensor with 4 lanes is one (a
// HALF_FLOAT image: core OpenCL, no extension needed), without a remark.
// CHECK-LABEL: func.func @conflict
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} attrs = {layout.scope = "global.texture", layout.operand_scopes = ["global", ""]}
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} attrs = {layout.scope = "global", layout.operand_scopes = ["global.texture", ""]}
// CHECK:         func.return {layout.operand_scopes = ["global", "global"]} %[[A]], %[[B]]
func.func @conflict(%x: tensor<1x1x2x2x4xf32>) -> (tensor<1x1x2x2x4xf32>, tensor<1x1x2x2x4xf32>) {
  %e = tensor.empty() : tensor<1x1x2x2x4xf32>
  %a = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%x : tensor<1x1x2x2x4xf32>) outs(%e : tensor<1x1x2x2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<1x1x2x2x4xf32>
  %b = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%a : tensor<1x1x2x2x4xf32>) outs(%e : tensor<1x1x2x2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<1x1x2x2x4xf32>
  func.return %a, %b : tensor<1x1x2x2x4xf32>, tensor<1x1x2x2x4xf32>
}

// CHECK-LABEL: func.func @eligibility
// CHECK:         %h2 = linalg.generic {{.*}} attrs = {layout.scope = "global.texture", layout.operand_scopes = ["global", ""]}
// CHECK:         %h3 = linalg.generic {{.*}} attrs = {layout.scope = "global", layout.operand_scopes = ["global.texture", ""]}
// CHECK:         linalg.generic {{.*}} attrs = {layout.scope = "global"
// CHECK:         linalg.generic {{.*}} attrs = {layout.scope = "global"
// F16-REMARK-NOT: f16
func.func @eligibility(%h: tensor<2x4xf16>, %v: tensor<4xf32>, %d: tensor<2x4xf64>) -> (tensor<2x4xf16>, tensor<4xf32>, tensor<2x4xf64>) {
  %eh = tensor.empty() : tensor<2x4xf16>
  %h2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<2x4xf16>) outs(%eh : tensor<2x4xf16>) {
  ^bb0(%a: f16, %o: f16):
    %n = arith.negf %a : f16
    linalg.yield %n : f16
  } -> tensor<2x4xf16>
  %h3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%h2 : tensor<2x4xf16>) outs(%eh : tensor<2x4xf16>) {
  ^bb0(%a: f16, %o: f16):
    %n = arith.negf %a : f16
    linalg.yield %n : f16
  } -> tensor<2x4xf16>
  %ev = tensor.empty() : tensor<4xf32>
  %v2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%v : tensor<4xf32>) outs(%ev : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %ed = tensor.empty() : tensor<2x4xf64>
  %d2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<2x4xf64>) outs(%ed : tensor<2x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %n = arith.negf %a : f64
    linalg.yield %n : f64
  } -> tensor<2x4xf64>
  func.return %h3, %v2, %d2 : tensor<2x4xf16>, tensor<4xf32>, tensor<2x4xf64>
}

// A producer that cannot write whole texels (lanes reversed: the innermost output index is
// not a loop of its own) stays global, and its consumer then reads it from global (no copy).
// A tensor over the image limit (option max-image-width=8: this image is 10 texels wide)
// stays global too.
// CHECK-LABEL: func.func @fallbacks
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} attrs = {layout.scope = "global", layout.operand_scopes = ["global", ""]}
// CHECK:         linalg.generic {{.*}} ins(%[[T]] : {{.*}}) {{.*}} attrs = {layout.scope = "global", layout.operand_scopes = ["global", ""]}
// CHECK:         %[[W:.*]] = linalg.generic {{.*}} attrs = {layout.scope = "global.texture", layout.operand_scopes = ["global", ""]}
// CHECK:         linalg.generic {{.*}} ins(%[[W]] : {{.*}}) {{.*}} attrs = {layout.scope = "global", layout.operand_scopes = ["global.texture", ""]}
// Remarks only when asked for (remarks=true):
// QUIET-NOT: remark
// REMARK: remark: annotate-texture-scope: %t (tensor<4x4xf32>) stays in global: linalg.generic cannot write whole texels: its outputs' innermost axes are not one parallel loop of extent 4
// LIMIT: remark: annotate-texture-scope: %wide (tensor<1x1x2x10x4xf32>) stays in global: its global.texture image is 10 x 2 texels, over the limit 8 x 16384
func.func @fallbacks(%x: tensor<4x4xf32>, %y: tensor<1x1x2x10x4xf32>) -> (tensor<4x4xf32>, tensor<1x1x2x10x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, 3 - j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %ew = tensor.empty() : tensor<1x1x2x10x4xf32>
  %wide = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%y : tensor<1x1x2x10x4xf32>) outs(%ew : tensor<1x1x2x10x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x1x2x10x4xf32>
  %wide2 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%wide : tensor<1x1x2x10x4xf32>) outs(%ew : tensor<1x1x2x10x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x1x2x10x4xf32>
  func.return %u, %wide2 : tensor<4x4xf32>, tensor<1x1x2x10x4xf32>
}

// A clamp (torch-mlir's hardswish: `cmpf ult` / `cmpf ugt` picking floats with `select`)
// runs on whole texels lane by lane, so %lo and %hi live in textures; a compare used as
// data (`uitofp` of the `i1`) and a select of integers do not, so %flag stays global.
// CHECK-LABEL: func.func @clamps
// CHECK:         %lo = linalg.generic {{.*}} attrs = {layout.scope = "global.texture", layout.operand_scopes = ["global", ""]}
// CHECK:         %hi = linalg.generic {{.*}} attrs = {layout.scope = "global.texture", layout.operand_scopes = ["global.texture", ""]}
// CHECK:         %flag = linalg.generic {{.*}} attrs = {layout.scope = "global", layout.operand_scopes = ["global.texture", ""]}
// REMARK: remark: annotate-texture-scope: %flag (tensor<1x1x2x2x4xf32>) stays in global: linalg.generic cannot write whole texels: its body computes 'arith.cmpf', which vectorize-texels cannot run on texels
func.func @clamps(%x: tensor<1x1x2x2x4xf32>) -> tensor<1x1x2x2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<1x1x2x2x4xf32>
  %lo = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%x : tensor<1x1x2x2x4xf32>) outs(%e : tensor<1x1x2x2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %lt = arith.cmpf ult, %a, %zero : f32
    %s = arith.select %lt, %zero, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x1x2x2x4xf32>
  %hi = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%lo : tensor<1x1x2x2x4xf32>) outs(%e : tensor<1x1x2x2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %gt = arith.cmpf ugt, %a, %six : f32
    %s = arith.select %gt, %six, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x1x2x2x4xf32>
  %flag = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%hi : tensor<1x1x2x2x4xf32>) outs(%e : tensor<1x1x2x2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %gt = arith.cmpf ogt, %a, %zero : f32
    %f = arith.uitofp %gt : i1 to f32
    %s = arith.select %gt, %a, %f : f32
    linalg.yield %s : f32
  } -> tensor<1x1x2x2x4xf32>
  %neg = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = #par5} ins(%flag : tensor<1x1x2x2x4xf32>) outs(%e : tensor<1x1x2x2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x1x2x2x4xf32>
  func.return %neg : tensor<1x1x2x2x4xf32>
}
