// RUN: xdsl-opt %s -p apply-layout | filecheck %s
// RUN: xdsl-opt %s -p apply-layout | xdsl-opt -p apply-layout | filecheck %s

// RFC 0039: NHWC -> NCHWc, the logical index [11, 37, 23, 101] lands at [11, 25, 37, 23, 1];
// the separator written in the map (`|`) becomes the buffer's axis_separators.
// CHECK-LABEL: func.func @nhwc_to_nchwc
// CHECK-SAME:    (%[[X:.*]]: !layout.buffer<16x32x64x64x4xf32, axis_separators = [3]>) -> f32
// CHECK-DAG:     %[[C11:.*]] = arith.constant 11 : index
// CHECK-DAG:     %[[C25:.*]] = arith.constant 25 : index
// CHECK-DAG:     %[[C37:.*]] = arith.constant 37 : index
// CHECK-DAG:     %[[C23:.*]] = arith.constant 23 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         layout.load %[[X]][%[[C11]], %[[C25]], %[[C37]], %[[C23]], %[[C1]]] : !layout.buffer<16x32x64x64x4xf32, axis_separators = [3]>, f32
func.func @nhwc_to_nchwc(%x: !layout.buffer<16x64x64x128xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>) -> f32 {
  %n = arith.constant 11 : index
  %h = arith.constant 37 : index
  %w = arith.constant 23 : index
  %c = arith.constant 101 : index
  %v = layout.load %x[%n, %h, %w, %c] : !layout.buffer<16x64x64x128xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>, f32
  func.return %v : f32
}

// RFC 0039: a 2-D transpose; the loop variables index the transformed buffer swapped.
// CHECK-LABEL: func.func @transpose
// CHECK-SAME:    (%{{.*}}: !layout.buffer<16x64xf32>, %[[B:.*]]: !layout.buffer<64x16xf32>)
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[V:.*]] = layout.load %{{.*}}[%[[I]], %[[J]]] : !layout.buffer<16x64xf32>, f32
// CHECK-NEXT:        layout.store %[[V]], %[[B]][%[[J]], %[[I]]] : !layout.buffer<64x16xf32>, f32
func.func @transpose(%a: !layout.buffer<16x64xf32>, %b: !layout.buffer<16x64xf32, transform = #layout.index_map<(i, j) -> (j, i)>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c64 step %c1 {
      %v = layout.load %a[%i, %j] : !layout.buffer<16x64xf32>, f32
      layout.store %v, %b[%i, %j] : !layout.buffer<16x64xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, f32
    }
  }
  func.return
}

// NHWC -> NCHW4c inside a loop nest: the channel loop variable is split with cheap
// truncating ops (it is provably non-negative); the batch variable spans one value, 0.
// CHECK-LABEL: func.func @relu_nchw4c
// CHECK-SAME:    %[[OUT:[^:]*]]: !layout.buffer<1x4x8x8x4xf32, axis_separators = [3], scope = "global.texture">
// CHECK:         scf.for %[[C:[a-z0-9_]+]] = %{{.*}} to %c16 step %{{.*}} {
// CHECK:           %[[R:.*]] = arith.maximumf
// CHECK-NEXT:      %[[N:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[K4:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[C4:.*]] = arith.divsi %[[C]], %[[K4]] : index
// CHECK-NEXT:      %[[LANE:.*]] = arith.remsi %[[C]], %[[K4]] : index
// CHECK-NEXT:      layout.store %[[R]], %[[OUT]][%[[N]], %[[C4]], %{{.*}}, %{{.*}}, %[[LANE]]] : !layout.buffer<1x4x8x8x4xf32, axis_separators = [3], scope = "global.texture">, f32
func.func @relu_nchw4c(%in: !layout.buffer<1x8x8x16xf32>, %out: !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c8 step %c1 {
      scf.for %w = %c0 to %c8 step %c1 {
        scf.for %c = %c0 to %c16 step %c1 {
          %v = layout.load %in[%n, %h, %w, %c] : !layout.buffer<1x8x8x16xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %out[%n, %h, %w, %c] : !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

// A list of transforms is applied in order and composed: (i, j) -> (j, i), then a split.
// CHECK-LABEL: func.func @transform_list
// CHECK-SAME:    (%[[B:.*]]: !layout.buffer<4x8x2xf32>, %[[I:.*]]: index, %[[J:.*]]: index)
// CHECK:         %[[K2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[HI:.*]] = arith.divsi %[[J]], %[[K2]] : index
// CHECK-NEXT:    %[[LO:.*]] = arith.remsi %[[J]], %[[K2]] : index
// CHECK-NEXT:    layout.load %[[B]][%[[HI]], %[[I]], %[[LO]]] : !layout.buffer<4x8x2xf32>, f32
func.func @transform_list(%b: !layout.buffer<8x8xf32, transform = [#layout.index_map<(i, j) -> (j, i)>, #layout.index_map<(a, b) -> (a floordiv 2, b, a mod 2)>]>, %i: index, %j: index) -> f32 {
  %v = layout.load %b[%i, %j] : !layout.buffer<8x8xf32, transform = [#layout.index_map<(i, j) -> (j, i)>, #layout.index_map<(a, b) -> (a floordiv 2, b, a mod 2)>]>, f32
  func.return %v : f32
}

// Calls follow the callee's signature; allocations get the transformed extents.
// CHECK-LABEL: func.func @callee
// CHECK-SAME:    (%{{.*}}: !layout.buffer<4x4xf32>)
// CHECK-LABEL: func.func @caller
// CHECK:         %[[P:.*]] = layout.allocate [4, 4] : !layout.ptr<f32>
// CHECK-NEXT:    %[[D:.*]] = layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<4x4xf32>
// CHECK:         func.call @callee(%[[D]]) : (!layout.buffer<4x4xf32>) -> ()
func.func @callee(%b: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  func.return
}
func.func @caller() {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>
  func.call @callee(%b) : (!layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) -> ()
  func.return
}

// A one-element buffer squeezed to 0-d (`(i) -> ()`, what the graph passes make of a
// one-channel statistic): its allocation keeps one element (extents [] would not verify).
// CHECK-LABEL: func.func @squeezed_to_scalar
// CHECK:         %[[P:.*]] = layout.allocate [1] : !layout.ptr<f32>
// CHECK-NEXT:    %{{.*}} = layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<f32>
func.func @squeezed_to_scalar(%v: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %p = layout.allocate [1] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<1xf32, transform = #layout.index_map<(i) -> ()>>
  layout.store %v, %b[%c0] : !layout.buffer<1xf32, transform = #layout.index_map<(i) -> ()>>, f32
  %r = layout.load %b[%c0] : !layout.buffer<1xf32, transform = #layout.index_map<(i) -> ()>>, f32
  func.return %r : f32
}

// Padding: 10 elements split by 4 pad to [3, 4]; the written buffer's padding
// (i0 == 2 and i1 >= 2) is filled with the pad value before the kernel writes.
// CHECK-LABEL: func.func @pad_split
// CHECK-SAME:    (%{{.*}}: !layout.buffer<10xf32>, %[[OUT:.*]]: !layout.buffer<3x4xf32>)
// CHECK:         scf.for %[[P0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[P1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[PAD:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:        scf.if %[[PAD]] {
// CHECK-NEXT:          %[[V:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:          layout.store %[[V]], %[[OUT]][%[[P0]], %[[P1]]] : !layout.buffer<3x4xf32>, f32
// CHECK-NOT:     layout.physical
// CHECK:         return
func.func @pad_split(%in: !layout.buffer<10xf32>, %out: !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = -1.0 : f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  scf.for %i = %c0 to %c10 step %c1 {
    %v = layout.load %in[%i] : !layout.buffer<10xf32>, f32
    layout.store %v, %out[%i] : !layout.buffer<10xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = -1.0 : f32>, f32
  }
  func.return
}

// A buffer smaller than one tile (docs/semantics.md "Shapes and padding"): a tile is always whole,
// so 3 elements split by 4 give [1, 4], not the [1, 3] of the map simplified on the box
// (`(i) -> (0, i)`); the last lane is padding.
// CHECK-LABEL: func.func @pad_tile_larger_than_buffer
// CHECK-SAME:    (%[[IN:.*]]: !layout.buffer<3xf32>, %[[OUT:.*]]: !layout.buffer<1x4xf32>)
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:         scf.for %[[P0:.*]] = %{{.*}} to %[[ONE]] step %{{.*}} {
// CHECK-NEXT:      scf.for %[[P1:.*]] = %{{.*}} to %[[FOUR]] step %{{.*}} {
// CHECK-NEXT:        %[[K3:.*]] = arith.constant 3 : index
// CHECK-NEXT:        %[[PAD:.*]] = arith.cmpi sge, %[[P1]], %[[K3]] : index
// CHECK-NEXT:        scf.if %[[PAD]] {
// CHECK-NEXT:          %[[V:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:          layout.store %[[V]], %[[OUT]][%[[P0]], %[[P1]]] : !layout.buffer<1x4xf32>, f32
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[X:.*]] = layout.load %[[IN]][%[[I]]] : !layout.buffer<3xf32>, f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      layout.store %[[X]], %[[OUT]][%[[ZERO]], %[[I]]] : !layout.buffer<1x4xf32>, f32
func.func @pad_tile_larger_than_buffer(%in: !layout.buffer<3xf32>, %out: !layout.buffer<3xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = -1.0 : f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %v = layout.load %in[%i] : !layout.buffer<3xf32>, f32
    layout.store %v, %out[%i] : !layout.buffer<3xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = -1.0 : f32>, f32
  }
  func.return
}

// 14 elements split by 16: [1, 16], padding i1 >= 14.
// CHECK-LABEL: func.func @pad_split16_of_14
// CHECK-SAME:    (%{{.*}}: !layout.buffer<14xf32>, %[[OUT:.*]]: !layout.buffer<1x16xf32>)
// CHECK:         %[[K14:.*]] = arith.constant 14 : index
// CHECK-NEXT:    %[[PAD:.*]] = arith.cmpi sge, %{{.*}}, %[[K14]] : index
// CHECK-NEXT:    scf.if %[[PAD]] {
// CHECK-NEXT:      %[[V:.*]] = arith.constant 7.000000e+00 : f32
// CHECK:         layout.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}] : !layout.buffer<1x16xf32>, f32
func.func @pad_split16_of_14(%in: !layout.buffer<14xf32>, %out: !layout.buffer<14xf32, transform = #layout.index_map<(i) -> (i floordiv 16, i mod 16)>, pad_value = 7.0 : f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  scf.for %i = %c0 to %c14 step %c1 {
    %v = layout.load %in[%i] : !layout.buffer<14xf32>, f32
    layout.store %v, %out[%i] : !layout.buffer<14xf32, transform = #layout.index_map<(i) -> (i floordiv 16, i mod 16)>, pad_value = 7.0 : f32>, f32
  }
  func.return
}

// `i mod 16` spans 16 on 14 elements: [16], padding i0 >= 14; accesses stay `i`.
// CHECK-LABEL: func.func @pad_mod16_of_14
// CHECK-SAME:    (%[[IN:.*]]: !layout.buffer<14xf32>, %[[OUT:.*]]: !layout.buffer<16xf32>)
// CHECK:         scf.for %[[P0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[K14:.*]] = arith.constant 14 : index
// CHECK-NEXT:      %[[PAD:.*]] = arith.cmpi sge, %[[P0]], %[[K14]] : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[X:.*]] = layout.load %[[IN]][%[[I]]] : !layout.buffer<14xf32>, f32
// CHECK-NEXT:      layout.store %[[X]], %[[OUT]][%[[I]]] : !layout.buffer<16xf32>, f32
func.func @pad_mod16_of_14(%in: !layout.buffer<14xf32>, %out: !layout.buffer<14xf32, transform = #layout.index_map<(i) -> (i mod 16)>, pad_value = 0.0 : f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  scf.for %i = %c0 to %c14 step %c1 {
    %v = layout.load %in[%i] : !layout.buffer<14xf32>, f32
    layout.store %v, %out[%i] : !layout.buffer<14xf32, transform = #layout.index_map<(i) -> (i mod 16)>, pad_value = 0.0 : f32>, f32
  }
  func.return
}

// NHWC with 3 channels into an NCHW4c texture: one channel block [1, 1, 4, 4, 4], the
// fourth lane of every texel is padding.
// CHECK-LABEL: func.func @relu_nhwc3_to_nchw4c_texture
// CHECK-SAME:    %[[OUT:[^:]*]]: !layout.buffer<1x1x4x4x4xf32, axis_separators = [3], scope = "global.texture">)
// CHECK:         %[[K3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[PAD:.*]] = arith.cmpi sge, %[[LANE:.*]], %[[K3]] : index
// CHECK-NEXT:    scf.if %[[PAD]] {
// CHECK-NEXT:      %[[V:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      layout.store %[[V]], %[[OUT]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LANE]]]
// CHECK:         %[[R:.*]] = arith.maximumf
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    layout.store %[[R]], %[[OUT]][%[[ZERO]], %[[ZERO]], %{{.*}}, %{{.*}}, %{{.*}}] : !layout.buffer<1x1x4x4x4xf32, axis_separators = [3], scope = "global.texture">, f32
func.func @relu_nhwc3_to_nchw4c_texture(%in: !layout.buffer<1x4x4x3xf32>, %out: !layout.buffer<1x4x4x3xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.for %h = %c0 to %c4 step %c1 {
    scf.for %w = %c0 to %c4 step %c1 {
      scf.for %c = %c0 to %c3 step %c1 {
        %v = layout.load %in[%c0, %h, %w, %c] : !layout.buffer<1x4x4x3xf32>, f32
        %r = arith.maximumf %v, %zero : f32
        layout.store %r, %out[%c0, %h, %w, %c] : !layout.buffer<1x4x4x3xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">, f32
      }
    }
  }
  func.return
}

// A transform list takes its step-by-step extents: split [3] -> [1, 4], then transpose ->
// [4, 1] (the composed map `(i) -> (i, 0)` alone would give [3, 1]); padding i0 >= 3.
// CHECK-LABEL: func.func @pad_list_split_then_transpose
// CHECK-SAME:    (%[[IN:.*]]: !layout.buffer<3xf32>, %[[OUT:.*]]: !layout.buffer<4x1xf32>)
// CHECK:         %[[PAD:.*]] = arith.cmpi sge, %[[P0:.*]], %{{.*}} : index
// CHECK-NEXT:    scf.if %[[PAD]] {
// CHECK-NEXT:      %[[V:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:      layout.store %[[V]], %[[OUT]][%[[P0]], %{{.*}}] : !layout.buffer<4x1xf32>, f32
// CHECK:         %[[X:.*]] = layout.load %[[IN]][%[[I:.*]]] : !layout.buffer<3xf32>, f32
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    layout.store %[[X]], %[[OUT]][%[[I]], %[[ZERO]]] : !layout.buffer<4x1xf32>, f32
func.func @pad_list_split_then_transpose(%in: !layout.buffer<3xf32>, %out: !layout.buffer<3xf32, transform = [#layout.index_map<(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a, b) -> (b, a)>], pad_value = -1.0 : f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %v = layout.load %in[%i] : !layout.buffer<3xf32>, f32
    layout.store %v, %out[%i] : !layout.buffer<3xf32, transform = [#layout.index_map<(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a, b) -> (b, a)>], pad_value = -1.0 : f32>, f32
  }
  func.return
}

// A list that pads at its first step and fuses back at its second: [3] -> [1, 4] -> [4]
// (the composed map is the identity `(i) -> (i)`, structurally [3]); padding i0 == 3.
// CHECK-LABEL: func.func @pad_list_split_then_fuse
// CHECK-SAME:    (%[[IN:.*]]: !layout.buffer<3xf32>, %[[OUT:.*]]: !layout.buffer<4xf32>)
// CHECK:         %[[K3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[PAD:.*]] = arith.cmpi sge, %{{.*}}, %[[K3]] : index
// CHECK:         %[[X:.*]] = layout.load %[[IN]][%[[I:.*]]] : !layout.buffer<3xf32>, f32
// CHECK-NEXT:    layout.store %[[X]], %[[OUT]][%[[I]]] : !layout.buffer<4xf32>, f32
func.func @pad_list_split_then_fuse(%in: !layout.buffer<3xf32>, %out: !layout.buffer<3xf32, transform = [#layout.index_map<(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a, b) -> (a * 4 + b)>], pad_value = 5.0 : f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %v = layout.load %in[%i] : !layout.buffer<3xf32>, f32
    layout.store %v, %out[%i] : !layout.buffer<3xf32, transform = [#layout.index_map<(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a, b) -> (a * 4 + b)>], pad_value = 5.0 : f32>, f32
  }
  func.return
}

// The separators of a transform list are those of its last map (the only one that may
// carry `|`): [8, 12] transposed to [12, 8], then split as [a | b floordiv 4, b mod 4].
// CHECK-LABEL: func.func @transform_list_separators
// CHECK-SAME:    (%{{.*}}: !layout.buffer<12x2x4xf32, axis_separators = [1]>, %{{.*}}: !layout.buffer<2x3x5x7x4xf32, axis_separators = [3], scope = "global.texture-nhwc">)
func.func @transform_list_separators(%b: !layout.buffer<8x12xf32, transform = [#layout.index_map<(i, j) -> (j, i)>, #layout.index_map<(a, b) -> (a | b floordiv 4, b mod 4)>]>, %t: !layout.buffer<2x5x7x12xf32, transform = [#layout.index_map<(n, h, w, c) -> (n, c, h, w)>, #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h | w, c mod 4)>], scope = "global.texture-nhwc">) {
  func.return
}
