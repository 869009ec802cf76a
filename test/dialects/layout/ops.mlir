// Round trip of every attribute, type and op of the `layout` dialect, in custom and generic form.
// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @types
// CHECK-SAME: %{{.*}}: !layout.buffer<1x56x56x64xf32>
// CHECK-SAME: %{{.*}}: !layout.buffer<16x64x64x128xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>>
// CHECK-SAME: %{{.*}}: !layout.buffer<1x56x56x64xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">
// CHECK-SAME: %{{.*}}: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.000000e+00 : f32>
// CHECK-SAME: %{{.*}}: !layout.buffer<8x8xf32, transform = [#layout.index_map<(i, j) -> (j, i)>, #layout.index_map<(a, b) -> (a floordiv 2, b, a mod 2)>]>
// CHECK-SAME: %{{.*}}: !layout.buffer<32768x256xf32, axis_separators = [1], scope = "global.texture">
// CHECK-SAME: %{{.*}}: !layout.buffer<16xvector<4xf32>, scope = "shared">
// CHECK-SAME: %{{.*}}: !layout.ptr<f32>
// CHECK-SAME: %{{.*}}: !layout.ptr<f16, scope = "global.texture-weight">
// GENERIC-LABEL: "func.func"() <{sym_name = "types"
// GENERIC-SAME: !layout.buffer<16x64x64x128xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>>
func.func @types(
    %a: !layout.buffer<1x56x56x64xf32>,
    %b: !layout.buffer<16x64x64x128xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>>,
    %c: !layout.buffer<1x56x56x64xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">,
    %d: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32>,
    %e: !layout.buffer<8x8xf32, transform = [#layout.index_map<(i, j) -> (j, i)>, #layout.index_map<(a, b) -> (a floordiv 2, b, a mod 2)>]>,
    %f: !layout.buffer<32768x256xf32, axis_separators = [1], scope = "global.texture">,
    %g: !layout.buffer<16xvector<4xf32>, scope = "shared">,
    %h: !layout.ptr<f32>,
    %k: !layout.ptr<f16, scope = "global.texture-weight">) {
  func.return
}

// CHECK-LABEL: func.func @index_map_syntax
// CHECK-SAME: map0 = #layout.index_map<(i, j) -> (i, i + j)>
// CHECK-SAME: map1 = #layout.index_map<(i, j) -> (i * 64 + j, j ceildiv 4, 3)>
// CHECK-SAME: map2 = #layout.index_map<(m, n, p, q) -> (m | n, p | q)>
// CHECK-SAME: map3 = #layout.index_map<(i, j) -> (i - j + 7)>
func.func @index_map_syntax() attributes {
    map0 = #layout.index_map<(i, j) -> (i, i + j)>,
    map1 = #layout.index_map<(i, j) -> (i * 64 + j, j ceildiv 4, 3)>,
    map2 = #layout.index_map<(m, n, p, q) -> (m | n, p | q)>,
    map3 = #layout.index_map<(i, j) -> (i - j + 7)>} {
  func.return
}

// CHECK-LABEL: func.func @ops
// CHECK:      %[[P:.*]] = layout.allocate [16, 64] : !layout.ptr<f32>
// CHECK-NEXT: %[[B:.*]] = layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<16x64xf32>
// CHECK-NEXT: %[[V:.*]] = layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<256xvector<4xf32>>
// CHECK-NEXT: %[[S:.*]] = layout.decl_buffer %[[P]] offset 512 : !layout.ptr<f32> -> !layout.buffer<8x64xf32>
// CHECK-NEXT: %[[D:.*]] = layout.data %[[B]] : !layout.buffer<16x64xf32> -> !layout.ptr<f32>
// CHECK:      %[[X:.*]] = layout.load %[[B]][%{{.*}}, %{{.*}}] : !layout.buffer<16x64xf32>, f32
// CHECK-NEXT: %[[Y:.*]] = layout.load %[[B]][%{{.*}}, %{{.*}}] : !layout.buffer<16x64xf32>, vector<4xf32>
// CHECK-NEXT: layout.store %[[X]], %[[S]][%{{.*}}, %{{.*}}] : !layout.buffer<8x64xf32>, f32
// CHECK-NEXT: layout.store %[[Y]], %[[B]][%{{.*}}, %{{.*}}] : !layout.buffer<16x64xf32>, vector<4xf32>
// CHECK-NEXT: %[[Z:.*]] = layout.load %[[V]][%{{.*}}] : !layout.buffer<256xvector<4xf32>>, vector<4xf32>
// GENERIC: "layout.allocate"() <{extents = [#builtin.int<16>, #builtin.int<64>]}> : () -> !layout.ptr<f32>
// GENERIC: "layout.decl_buffer"(%{{.*}}) <{elem_offset = #builtin.int<512>}> : (!layout.ptr<f32>) -> !layout.buffer<8x64xf32>
// GENERIC: "layout.data"(%{{.*}}) : (!layout.buffer<16x64xf32>) -> !layout.ptr<f32>
// GENERIC: "layout.load"(%{{.*}}, %{{.*}}, %{{.*}}) : (!layout.buffer<16x64xf32>, index, index) -> f32
// GENERIC: "layout.store"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (f32, !layout.buffer<8x64xf32>, index, index) -> ()
func.func @ops(%i: index, %j: index) {
  %p = layout.allocate [16, 64] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16x64xf32>
  %v = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<256xvector<4xf32>>
  %s = layout.decl_buffer %p offset 512 : !layout.ptr<f32> -> !layout.buffer<8x64xf32>
  %d = layout.data %b : !layout.buffer<16x64xf32> -> !layout.ptr<f32>
  %c0 = arith.constant 0 : index
  %c60 = arith.constant 60 : index
  %x = layout.load %b[%i, %j] : !layout.buffer<16x64xf32>, f32
  %y = layout.load %b[%i, %c60] : !layout.buffer<16x64xf32>, vector<4xf32>
  layout.store %x, %s[%i, %j] : !layout.buffer<8x64xf32>, f32
  layout.store %y, %b[%c0, %c60] : !layout.buffer<16x64xf32>, vector<4xf32>
  %z = layout.load %v[%i] : !layout.buffer<256xvector<4xf32>>, vector<4xf32>
  func.return
}

// The memory scope as an attribute of its own (types spell it `scope = "..."`).
// CHECK-LABEL: func.func @memory_scope_attrs
// CHECK-SAME: a = #layout<memory_scope global.texture>, b = #layout<memory_scope "global.texture-nhwc">, c = #layout<memory_scope local>
// GENERIC-LABEL: "func.func"() <{sym_name = "memory_scope_attrs"
// GENERIC: {a = #layout<memory_scope global.texture>, b = #layout<memory_scope "global.texture-nhwc">, c = #layout<memory_scope local>}
func.func @memory_scope_attrs() attributes {a = #layout<memory_scope global.texture>, b = #layout<memory_scope "global.texture-nhwc">, c = #layout<memory_scope local>} {
  func.return
}
