// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true}' | filecheck %s
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true}' | xdsl-opt -p 'apply-layout{rewrite-loops=true}' | filecheck %s

// RFC 0039 option 3: the nest that writes the whole NCHW4c output is re-iterated in the
// output's physical order; the store indexes by the new loop variables and the input is
// read through the inverse map (c = c4 * 4 + lane); the batch axis spans one value, 0.
// CHECK-LABEL: func.func @relu_nchw4c
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[C4:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:          scf.for %[[W:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:            scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:              %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:              %[[K4:.*]] = arith.constant 4 : index
// CHECK-NEXT:              %[[M:.*]] = arith.muli %[[C4]], %[[K4]] : index
// CHECK-NEXT:              %[[C:.*]] = arith.addi %[[M]], %[[L]] : index
// CHECK-NEXT:              %[[V:.*]] = layout.load %{{.*}}[%[[Z]], %[[H]], %[[W]], %[[C]]] : !layout.buffer<1x8x8x16xf32>, f32
// CHECK-NEXT:              %[[R:.*]] = arith.maximumf %[[V]], %{{.*}} : f32
// CHECK-NEXT:              %[[Z2:.*]] = arith.constant 0 : index
// CHECK-NEXT:              layout.store %[[R]], %{{.*}}[%[[Z2]], %[[C4]], %[[H]], %[[W]], %[[L]]] : !layout.buffer<1x4x8x8x4xf32, axis_separators = [3], scope = "global.texture">, f32
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

// With padding, the re-iterated nest writes the pad value on padding points itself (no
// separate fill nest) and the logical body elsewhere.
// CHECK-LABEL: func.func @pad_split
// CHECK:         scf.for %[[P0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[P1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[I:.*]] = arith.addi %{{.*}}, %[[P1]] : index
// CHECK:             %[[PAD:.*]] = arith.cmpi sge, %[[I]], %{{.*}} : index
// CHECK-NEXT:        scf.if %[[PAD]] {
// CHECK-NEXT:          %[[PV:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:          layout.store %[[PV]], %[[OUT:.*]][%[[P0]], %[[P1]]] : !layout.buffer<3x4xf32>, f32
// CHECK-NEXT:        } else {
// CHECK-NEXT:          %[[V:.*]] = layout.load %{{.*}}[%[[I]]] : !layout.buffer<10xf32>, f32
// CHECK-NEXT:          layout.store %[[V]], %[[OUT]][%[[P0]], %[[P1]]] : !layout.buffer<3x4xf32>, f32
// CHECK-NEXT:        }
// CHECK-NOT:     scf.for
// CHECK:         func.return
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

// A buffer smaller than one tile: the nest is re-iterated over the whole tile [1, 4] and the
// lane without a preimage (p1 == 3) gets the pad value.
// CHECK-LABEL: func.func @pad_tile_larger_than_buffer
// CHECK-SAME:    (%[[IN:.*]]: !layout.buffer<3xf32>, %[[OUT:.*]]: !layout.buffer<1x4xf32>)
// CHECK:         scf.for %[[P0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[P1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[K3:.*]] = arith.constant 3 : index
// CHECK-NEXT:        %[[PAD:.*]] = arith.cmpi sge, %[[P1]], %[[K3]] : index
// CHECK-NEXT:        scf.if %[[PAD]] {
// CHECK-NEXT:          %[[PV:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:          layout.store %[[PV]], %[[OUT]][%[[P0]], %[[P1]]] : !layout.buffer<1x4xf32>, f32
// CHECK-NEXT:        } else {
// CHECK-NEXT:          %[[V:.*]] = layout.load %[[IN]][%[[P1]]] : !layout.buffer<3xf32>, f32
// CHECK:               layout.store %[[V]], %[[OUT]][%{{.*}}, %[[P1]]] : !layout.buffer<1x4xf32>, f32
// CHECK-NEXT:        }
// CHECK-NOT:     scf.for
// CHECK:         func.return
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

// A nest that writes only part of the buffer is not re-iterated.
// CHECK-LABEL: func.func @partial_write
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           arith.divsi %[[I]]
func.func @partial_write(%out: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    layout.store %v, %out[%i] : !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>, f32
  }
  func.return
}
