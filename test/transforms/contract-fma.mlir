// RUN: xdsl-opt %s -p 'contract-fma{scalars=true}' | filecheck %s
// RUN: xdsl-opt %s -p 'contract-fma{scalars=true},contract-fma{scalars=true}' | filecheck %s
// RUN: xdsl-opt %s -p contract-fma | filecheck %s --check-prefix=VECTORS

// contract-fma: an f32 vector multiply whose only use is an add becomes one math.fma with
// it (either operand order), and with scalars=true an f32 scalar one too; a product used
// twice, f16 values, fast-math flags and subtractions are left alone.

// VECTORS-LABEL: func.func @scalar
// VECTORS-NOT:     math.fma
// VECTORS-LABEL: func.func @two_products
// VECTORS:         math.fma
// VECTORS-LABEL: func.func @left_alone
// VECTORS-NOT:     math.fma

// CHECK-LABEL: func.func @scalar
// CHECK-SAME:    (%[[A:[a-z0-9_]+]]: f32, %[[B:[a-z0-9_]+]]: f32, %[[C:[a-z0-9_]+]]: f32)
// CHECK-NEXT:    %[[L:[a-z0-9_]+]] = math.fma %[[A]], %[[B]], %[[C]] : f32
// CHECK-NEXT:    %[[R:[a-z0-9_]+]] = math.fma %[[B]], %[[C]], %[[L]] : f32
// CHECK-NEXT:    func.return %[[R]] : f32
func.func @scalar(%a: f32, %b: f32, %c: f32) -> f32 {
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %p, %c : f32
  %q = arith.mulf %b, %c : f32
  %t = arith.addf %s, %q : f32
  func.return %t : f32
}

// Both operands products: the first is contracted, the second stays a rounded product.
// CHECK-LABEL: func.func @two_products
// CHECK-NEXT:    %[[Q:[a-z0-9_]+]] = arith.mulf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NEXT:    %[[S:[a-z0-9_]+]] = math.fma %{{.*}}, %{{.*}}, %[[Q]] : vector<4xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @two_products(%a: vector<4xf32>, %b: vector<4xf32>) -> vector<4xf32> {
  %p = arith.mulf %a, %b : vector<4xf32>
  %q = arith.mulf %b, %b : vector<4xf32>
  %s = arith.addf %p, %q : vector<4xf32>
  func.return %s : vector<4xf32>
}

// CHECK-LABEL: func.func @left_alone
// CHECK-NEXT:    %[[P:[a-z0-9_]+]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    arith.addf %[[P]], %{{.*}} : f32
// CHECK-NEXT:    arith.addf %[[P]], %{{.*}} : f32
// CHECK-NEXT:    arith.mulf %{{.*}}, %{{.*}} : f16
// CHECK-NEXT:    arith.addf %{{.*}}, %{{.*}} : f16
// CHECK-NEXT:    arith.mulf %{{.*}}, %{{.*}} fastmath<fast> : f32
// CHECK-NEXT:    arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    arith.subf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     math.fma
func.func @left_alone(%a: f32, %b: f32, %h: f16) -> (f32, f32, f16, f32, f32) {
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %p, %a : f32
  %t = arith.addf %p, %b : f32
  %hp = arith.mulf %h, %h : f16
  %hs = arith.addf %hp, %h : f16
  %fp = arith.mulf %a, %b fastmath<fast> : f32
  %fs = arith.addf %fp, %a : f32
  %sp = arith.mulf %a, %b : f32
  %ss = arith.subf %sp, %a : f32
  func.return %s, %t, %hs, %fs, %ss : f32, f32, f16, f32, f32
}
