// RUN: xdsl-opt %s -p flatten-buffers | filecheck %s
// RUN: xdsl-opt %s -p flatten-buffers | xdsl-opt -p flatten-buffers | filecheck %s

// RFC 0039, default: no separators flatten to one row-major axis. The parameter keeps its
// logical type; the body accesses a flat alias declared over its data handle.
// CHECK-LABEL: func.func @default_1d
// CHECK-SAME:    (%[[A:.*]]: !layout.buffer<16x64xf32>, %[[I:.*]]: index, %[[J:.*]]: index)
// CHECK-NEXT:    %[[P:.*]] = layout.data %[[A]] : !layout.buffer<16x64xf32> -> !layout.ptr<f32>
// CHECK-NEXT:    %[[F:.*]] = layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<1024xf32>
// CHECK-NEXT:    %[[K:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[M:.*]] = arith.muli %[[I]], %[[K]] : index
// CHECK-NEXT:    %[[L:.*]] = arith.addi %[[M]], %[[J]] : index
// CHECK-NEXT:    layout.load %[[F]][%[[L]]] : !layout.buffer<1024xf32>, f32
func.func @default_1d(%a: !layout.buffer<16x64xf32>, %i: index, %j: index) -> f32 {
  %v = layout.load %a[%i, %j] : !layout.buffer<16x64xf32>, f32
  func.return %v : f32
}

// RFC 0039: NCHWc with the separator after h: physical shape [32768, 256], and
// [11, 25, 37, 23, 1] -> [24165, 93].
// CHECK-LABEL: func.func @nchwc_2d
// CHECK:         layout.decl_buffer %{{.*}} : !layout.ptr<f32> -> !layout.buffer<32768x256xf32, axis_separators = [1]>
// CHECK-DAG:     %[[R:.*]] = arith.constant 24165 : index
// CHECK-DAG:     %[[C:.*]] = arith.constant 93 : index
// CHECK:         layout.load %{{.*}}[%[[R]], %[[C]]] : !layout.buffer<32768x256xf32, axis_separators = [1]>, f32
func.func @nchwc_2d(%x: !layout.buffer<16x32x64x64x4xf32, axis_separators = [3]>) -> f32 {
  %n = arith.constant 11 : index
  %c4 = arith.constant 25 : index
  %h = arith.constant 37 : index
  %w = arith.constant 23 : index
  %l = arith.constant 1 : index
  %v = layout.load %x[%n, %c4, %h, %w, %l] : !layout.buffer<16x32x64x64x4xf32, axis_separators = [3]>, f32
  func.return %v : f32
}

// RFC 0039 multi-separator example: [m | n, p | q] -> three physical axes.
// CHECK-LABEL: func.func @two_separators
// CHECK:         layout.decl_buffer %{{.*}} : !layout.ptr<f32> -> !layout.buffer<2x12x5xf32, axis_separators = [1, 2]>
// CHECK:         %[[K4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[M:.*]] = arith.muli %{{.*}}, %[[K4]] : index
// CHECK-NEXT:    %[[A:.*]] = arith.addi %[[M]], %{{.*}} : index
// CHECK-NEXT:    layout.store %{{.*}}, %{{.*}}[%{{.*}}, %[[A]], %{{.*}}] : !layout.buffer<2x12x5xf32, axis_separators = [1, 2]>, f32
func.func @two_separators(%x: !layout.buffer<2x3x4x5xf32, axis_separators = [1, 3]>, %v: f32, %m: index, %n: index, %p: index, %q: index) {
  layout.store %v, %x[%m, %n, %p, %q] : !layout.buffer<2x3x4x5xf32, axis_separators = [1, 3]>, f32
  func.return
}

// A texture buffer without separators uses its scope's default (before the last two axes).
// CHECK-LABEL: func.func @texture_default
// CHECK:         layout.decl_buffer %{{.*}} : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<32x32xf32, axis_separators = [1], scope = "global.texture">
func.func @texture_default(%t: !layout.buffer<1x4x8x8x4xf32, scope = "global.texture">, %i: index) -> f32 {
  %c0 = arith.constant 0 : index
  %v = layout.load %t[%c0, %i, %c0, %c0, %c0] : !layout.buffer<1x4x8x8x4xf32, scope = "global.texture">, f32
  func.return %v : f32
}

// Default texture separators per scope (docs/semantics.md "Textures", TVM's
// DefaultTextureLayoutSeparator), flat shapes worked out by hand: for [2, 3, 5, 7, 4]
// `global.texture` separates at 3 ([2*3*5, 7*4]), `global.texture-nhwc` at 2 ([2*3, 5*7*4])
// and `global.texture-weight` at 1 ([2, 3*5*7*4]); rank 4 [3, 5, 7, 4]: at 2, 2, 1; rank 3
// [5, 7, 4]: at 1 for every scope (`global.texture-nhwc` too: [a | b, lane]).
// CHECK-LABEL: func.func @texture_default_texture
// CHECK-DAG:     layout.decl_buffer %{{.*}} : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<30x28xf32, axis_separators = [1], scope = "global.texture">
// CHECK-DAG:     layout.decl_buffer %{{.*}} : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<15x28xf32, axis_separators = [1], scope = "global.texture">
// CHECK-DAG:     layout.decl_buffer %{{.*}} : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<5x28xf32, axis_separators = [1], scope = "global.texture">
func.func @texture_default_texture(%t0: !layout.buffer<2x3x5x7x4xf32, scope = "global.texture">, %t1: !layout.buffer<3x5x7x4xf32, scope = "global.texture">, %t2: !layout.buffer<5x7x4xf32, scope = "global.texture">) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %v0 = layout.load %t0[%c0, %c0, %c0, %c0, %c0] : !layout.buffer<2x3x5x7x4xf32, scope = "global.texture">, f32
  %v1 = layout.load %t1[%c0, %c0, %c0, %c0] : !layout.buffer<3x5x7x4xf32, scope = "global.texture">, f32
  %v2 = layout.load %t2[%c0, %c0, %c0] : !layout.buffer<5x7x4xf32, scope = "global.texture">, f32
  func.return %v0, %v1, %v2 : f32, f32, f32
}

// CHECK-LABEL: func.func @texture_default_texture_nhwc
// CHECK-DAG:     layout.decl_buffer %{{.*}} : !layout.ptr<f32, scope = "global.texture-nhwc"> -> !layout.buffer<6x140xf32, axis_separators = [1], scope = "global.texture-nhwc">
// CHECK-DAG:     layout.decl_buffer %{{.*}} : !layout.ptr<f32, scope = "global.texture-nhwc"> -> !layout.buffer<15x28xf32, axis_separators = [1], scope = "global.texture-nhwc">
// CHECK-DAG:     layout.decl_buffer %{{.*}} : !layout.ptr<f32, scope = "global.texture-nhwc"> -> !layout.buffer<5x28xf32, axis_separators = [1], scope = "global.texture-nhwc">
func.func @texture_default_texture_nhwc(%t0: !layout.buffer<2x3x5x7x4xf32, scope = "global.texture-nhwc">, %t1: !layout.buffer<3x5x7x4xf32, scope = "global.texture-nhwc">, %t2: !layout.buffer<5x7x4xf32, scope = "global.texture-nhwc">) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %v0 = layout.load %t0[%c0, %c0, %c0, %c0, %c0] : !layout.buffer<2x3x5x7x4xf32, scope = "global.texture-nhwc">, f32
  %v1 = layout.load %t1[%c0, %c0, %c0, %c0] : !layout.buffer<3x5x7x4xf32, scope = "global.texture-nhwc">, f32
  %v2 = layout.load %t2[%c0, %c0, %c0] : !layout.buffer<5x7x4xf32, scope = "global.texture-nhwc">, f32
  func.return %v0, %v1, %v2 : f32, f32, f32
}

// CHECK-LABEL: func.func @texture_default_texture_weight
// CHECK-DAG:     layout.decl_buffer %{{.*}} : !layout.ptr<f32, scope = "global.texture-weight"> -> !layout.buffer<2x420xf32, axis_separators = [1], scope = "global.texture-weight">
// CHECK-DAG:     layout.decl_buffer %{{.*}} : !layout.ptr<f32, scope = "global.texture-weight"> -> !layout.buffer<3x140xf32, axis_separators = [1], scope = "global.texture-weight">
// CHECK-DAG:     layout.decl_buffer %{{.*}} : !layout.ptr<f32, scope = "global.texture-weight"> -> !layout.buffer<5x28xf32, axis_separators = [1], scope = "global.texture-weight">
func.func @texture_default_texture_weight(%t0: !layout.buffer<2x3x5x7x4xf32, scope = "global.texture-weight">, %t1: !layout.buffer<3x5x7x4xf32, scope = "global.texture-weight">, %t2: !layout.buffer<5x7x4xf32, scope = "global.texture-weight">) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %v0 = layout.load %t0[%c0, %c0, %c0, %c0, %c0] : !layout.buffer<2x3x5x7x4xf32, scope = "global.texture-weight">, f32
  %v1 = layout.load %t1[%c0, %c0, %c0, %c0] : !layout.buffer<3x5x7x4xf32, scope = "global.texture-weight">, f32
  %v2 = layout.load %t2[%c0, %c0, %c0] : !layout.buffer<5x7x4xf32, scope = "global.texture-weight">, f32
  func.return %v0, %v1, %v2 : f32, f32, f32
}

// A rank-3 `global.texture-nhwc` buffer [a, b, lane] separates at 1: the image row is a,
// the column b * 4 + lane (not [a * b, lane], the separator at 2).
// CHECK-LABEL: func.func @texture_nhwc_rank3
// CHECK-SAME:    (%{{.*}}: !layout.buffer<5x7x4xf32, scope = "global.texture-nhwc">, %[[A:[^:]*]]: index, %[[B:[^:]*]]: index, %[[L:[^:]*]]: index)
// CHECK:         %[[F:.*]] = layout.decl_buffer %{{.*}} : !layout.ptr<f32, scope = "global.texture-nhwc"> -> !layout.buffer<5x28xf32, axis_separators = [1], scope = "global.texture-nhwc">
// CHECK:         %[[K4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[M:.*]] = arith.muli %[[B]], %[[K4]] : index
// CHECK-NEXT:    %[[COL:.*]] = arith.addi %[[M]], %[[L]] : index
// CHECK-NEXT:    layout.load %[[F]][%[[A]], %[[COL]]] : !layout.buffer<5x28xf32, axis_separators = [1], scope = "global.texture-nhwc">, f32
func.func @texture_nhwc_rank3(%t: !layout.buffer<5x7x4xf32, scope = "global.texture-nhwc">, %a: index, %b: index, %l: index) -> f32 {
  %v = layout.load %t[%a, %b, %l] : !layout.buffer<5x7x4xf32, scope = "global.texture-nhwc">, f32
  func.return %v : f32
}

// Allocations become physical; a declared buffer gets a flat alias with the same offset
// (the logical declaration, now unused, is dead and goes away).
// CHECK-LABEL: func.func @allocation
// CHECK:         %[[P:.*]] = layout.allocate [96] : !layout.ptr<f32>
// CHECK-NEXT:    %[[F:.*]] = layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<96xf32>
// CHECK-NEXT:    %[[F2:.*]] = layout.decl_buffer %[[P]] offset 32 : !layout.ptr<f32> -> !layout.buffer<64xf32>
// CHECK:         layout.store %{{.*}}, %[[F]][%{{.*}}] : !layout.buffer<96xf32>, f32
// CHECK:         layout.load %[[F2]][%{{.*}}] : !layout.buffer<64xf32>, f32
func.func @allocation(%v: f32, %i: index) -> f32 {
  %p = layout.allocate [8, 12] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<8x12xf32>
  %s = layout.decl_buffer %p offset 32 : !layout.ptr<f32> -> !layout.buffer<8x8xf32>
  layout.store %v, %b[%i, %i] : !layout.buffer<8x12xf32>, f32
  %w = layout.load %s[%i, %i] : !layout.buffer<8x8xf32>, f32
  func.return %w : f32
}

// Already flat buffers and buffers without accesses are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT:     layout.decl_buffer
// CHECK:         func.return
func.func @untouched(%a: !layout.buffer<64xf32>, %b: !layout.buffer<4x4xf32>, %t: !layout.buffer<8x16xf32, axis_separators = [1]>, %i: index) {
  %v = layout.load %a[%i] : !layout.buffer<64xf32>, f32
  layout.store %v, %t[%i, %i] : !layout.buffer<8x16xf32, axis_separators = [1]>, f32
  func.return
}

// RFC 0039: NHWC -> NCHWc flattened to one axis (no separators): [16, 32, 64, 64, 4]
// becomes [8388608] and [11, 25, 37, 23, 1] becomes 6186333.
// CHECK-LABEL: func.func @nchwc_1d
// CHECK:         layout.decl_buffer %{{.*}} : !layout.ptr<f32> -> !layout.buffer<8388608xf32>
// CHECK:         %[[I:.*]] = arith.constant 6186333 : index
// CHECK-NEXT:    layout.load %{{.*}}[%[[I]]] : !layout.buffer<8388608xf32>, f32
func.func @nchwc_1d(%x: !layout.buffer<16x32x64x64x4xf32>) -> f32 {
  %n = arith.constant 11 : index
  %c4 = arith.constant 25 : index
  %h = arith.constant 37 : index
  %w = arith.constant 23 : index
  %l = arith.constant 1 : index
  %v = layout.load %x[%n, %c4, %h, %w, %l] : !layout.buffer<16x32x64x64x4xf32>, f32
  func.return %v : f32
}
