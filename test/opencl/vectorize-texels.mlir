// RUN: xdsl-opt %s -p vectorize-texels | filecheck %s
// RUN: xdsl-opt %s -p vectorize-texels | xdsl-opt -p vectorize-texels | filecheck %s

// A lane loop over a flat 2-D texture (column x * 4 + l) becomes one whole-texel load,
// vector arithmetic (the invariant 0.0 is broadcast) and one whole-texel store at lane 0.
// CHECK-LABEL: func.func @relu_texels
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[X:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[K:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[C:.*]] = arith.muli %[[X]], %[[K]] : index
// CHECK-NEXT:      %[[V:.*]] = layout.load %{{.*}}[%{{.*}}, %[[C]]] : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NEXT:      %[[Z:.*]] = vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[V]], %[[Z]] : vector<4xf32>
// CHECK:           layout.store %[[R]], %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NEXT:    }
func.func @relu_texels(%a: !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, %b: !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %y = %c0 to %c4 step %c1 {
    scf.for %x = %c0 to %c8 step %c1 {
      scf.for %l = %c0 to %c4 step %c1 {
        %x4 = arith.muli %x, %c4 : index
        %col = arith.addi %x4, %l : index
        %v = layout.load %a[%y, %col] : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, f32
        %r = arith.maximumf %v, %zero : f32
        layout.store %r, %b[%y, %col] : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, f32
      }
    }
  }
  func.return
}

// N-d buffers before flattening: the innermost index is the lane itself.
// CHECK-LABEL: func.func @scale_nd
// CHECK:         %[[Z:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[V:.*]] = layout.load %{{.*}}[%{{.*}}, %{{.*}}, %[[Z]]] : !layout.buffer<2x3x4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[S:.*]] = vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[V]], %[[S]] : vector<4xf32>
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[M]] : vector<4xf32>
// CHECK-NEXT:    %[[Z2:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    layout.store %[[E]], %{{.*}}[%{{.*}}, %{{.*}}, %[[Z2]]] : !layout.buffer<2x3x4xf32, scope = "global.texture">, vector<4xf32>
func.func @scale_nd(%a: !layout.buffer<2x3x4xf32>, %b: !layout.buffer<2x3x4xf32, scope = "global.texture">, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      scf.for %l = %c0 to %c4 step %c1 {
        %v = layout.load %a[%i, %j, %l] : !layout.buffer<2x3x4xf32>, f32
        %m = arith.mulf %v, %s : f32
        %e = math.exp %m : f32
        layout.store %e, %b[%i, %j, %l] : !layout.buffer<2x3x4xf32, scope = "global.texture">, f32
      }
    }
  }
  func.return
}

// A read-only buffer read across the lanes on an outer axis (NCHW -> NCHW4c) is gathered
// with four scalar loads; the store is still one texel.
// CHECK-LABEL: func.func @gather_channels
// CHECK:         %[[L0:.*]] = layout.load %[[IN:.*]][%{{.*}}] : !layout.buffer<128xf32>, f32
// CHECK-NEXT:    %[[G0:.*]] = vector.broadcast %[[L0]] : f32 to vector<4xf32>
// CHECK:         %[[L1:.*]] = layout.load %[[IN]][%{{.*}}] : !layout.buffer<128xf32>, f32
// CHECK-NEXT:    %[[G1:.*]] = vector.insert %[[L1]], %[[G0]] [1] : f32 into vector<4xf32>
// CHECK:         %[[G2:.*]] = vector.insert %{{.*}}, %[[G1]] [2] : f32 into vector<4xf32>
// CHECK:         %[[G3:.*]] = vector.insert %{{.*}}, %[[G2]] [3] : f32 into vector<4xf32>
// CHECK:         layout.store %[[G3]], %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<8x64xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
func.func @gather_channels(%in: !layout.buffer<128xf32>, %out: !layout.buffer<8x64xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  scf.for %c4i = %c0 to %c2 step %c1 {
    scf.for %hw = %c0 to %c16 step %c1 {
      scf.for %l = %c0 to %c4 step %c1 {
        %c4x = arith.muli %c4i, %c4 : index
        %c = arith.addi %c4x, %l : index
        %c16x = arith.muli %c, %c16 : index
        %src = arith.addi %c16x, %hw : index
        %v = layout.load %in[%src] : !layout.buffer<128xf32>, f32
        %hw4 = arith.muli %hw, %c4 : index
        %col = arith.addi %hw4, %l : index
        layout.store %v, %out[%c4i, %col] : !layout.buffer<8x64xf32, axis_separators = [1], scope = "global.texture">, f32
      }
    }
  }
  func.return
}

// A reduction inside the lane loop (a conv2d output texel): the accumulator becomes a
// vector iter_arg, the lane-invariant activation is broadcast, the weights are read as a
// vector.
// CHECK-LABEL: func.func @reduce_in_texel
// CHECK:         %[[INIT:.*]] = vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK-NEXT:    %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<4xf32>) {
// CHECK-NEXT:      %[[A:.*]] = layout.load %{{.*}}[%{{.*}}, %[[K]]] : !layout.buffer<2x8xf32>, f32
// CHECK:           %[[W:.*]] = layout.load %{{.*}}[%[[K]], %{{.*}}] : !layout.buffer<8x4xf32>, vector<4xf32>
// CHECK-NEXT:      %[[AB:.*]] = vector.broadcast %[[A]] : f32 to vector<4xf32>
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[AB]], %[[W]] : vector<4xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : vector<4xf32>
// CHECK-NEXT:      scf.yield %[[S]] : vector<4xf32>
// CHECK-NEXT:    }
// CHECK:         layout.store %[[SUM]], %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<2x4xf32, scope = "global.texture">, vector<4xf32>
func.func @reduce_in_texel(%a: !layout.buffer<2x8xf32>, %w: !layout.buffer<8x4xf32>, %y: !layout.buffer<2x4xf32, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c2 step %c1 {
    scf.for %l = %c0 to %c4 step %c1 {
      %acc = scf.for %k = %c0 to %c8 step %c1 iter_args(%s = %zero) -> (f32) {
        %av = layout.load %a[%n, %k] : !layout.buffer<2x8xf32>, f32
        %wv = layout.load %w[%k, %l] : !layout.buffer<8x4xf32>, f32
        %p = arith.mulf %av, %wv : f32
        %t = arith.addf %s, %p : f32
        scf.yield %t : f32
      }
      layout.store %acc, %y[%n, %l] : !layout.buffer<2x4xf32, scope = "global.texture">, f32
    }
  }
  func.return
}

// Refused: the lanes store to one element (the last lane wins sequentially).
// CHECK-LABEL: func.func @refuse_same_element
// CHECK:         scf.for
// CHECK:         layout.store %{{.*}}, %{{.*}}[%{{.*}}] : !layout.buffer<4xf32>, f32
func.func @refuse_same_element(%a: !layout.buffer<4xf32>, %b: !layout.buffer<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %l = %c0 to %c4 step %c1 {
    %v = layout.load %a[%l] : !layout.buffer<4xf32>, f32
    layout.store %v, %b[%c0] : !layout.buffer<4xf32>, f32
  }
  func.return
}

// Refused: a lane reads what another lane writes (b[l] = b[l + 1] shifts sequentially).
// CHECK-LABEL: func.func @refuse_cross_lane
// CHECK:         scf.for
// CHECK:         layout.store %{{.*}}, %{{.*}}[%{{.*}}] : !layout.buffer<5xf32>, f32
func.func @refuse_cross_lane(%b: !layout.buffer<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %l = %c0 to %c4 step %c1 {
    %next = arith.addi %l, %c1 : index
    %v = layout.load %b[%next] : !layout.buffer<5xf32>, f32
    layout.store %v, %b[%l] : !layout.buffer<5xf32>, f32
  }
  func.return
}

// Refused: a comparison of lane values used as data (not only to select floats), a
// select of integers on it, and the lane used as data.
// CHECK-LABEL: func.func @refuse_other_ops
// CHECK-COUNT-3: scf.for
// CHECK-NOT:     vector<4x
// CHECK:         func.return
func.func @refuse_other_ops(%a: !layout.buffer<4xf32>, %b: !layout.buffer<4xf32>, %n: !layout.buffer<4xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %i0 = arith.constant 0 : i32
  %i1 = arith.constant 1 : i32
  scf.for %l = %c0 to %c4 step %c1 {
    %v = layout.load %a[%l] : !layout.buffer<4xf32>, f32
    %p = arith.cmpf ogt, %v, %zero : f32
    %r = arith.select %p, %v, %zero : f32
    %f = arith.uitofp %p : i1 to f32
    %s = arith.addf %r, %f : f32
    layout.store %s, %b[%l] : !layout.buffer<4xf32>, f32
  }
  scf.for %l = %c0 to %c4 step %c1 {
    %v = layout.load %a[%l] : !layout.buffer<4xf32>, f32
    %p = arith.cmpf ogt, %v, %zero : f32
    %r = arith.select %p, %i1, %i0 : i32
    layout.store %r, %n[%l] : !layout.buffer<4xi32>, i32
  }
  scf.for %l = %c0 to %c4 step %c1 {
    %i = arith.index_cast %l : index to i32
    %f = arith.sitofp %i : i32 to f32
    layout.store %f, %b[%l] : !layout.buffer<4xf32>, f32
  }
  func.return
}

// Refused: not a 0..4 step 1 loop.
// CHECK-LABEL: func.func @refuse_bounds
// CHECK:         scf.for
// CHECK-NOT:     vector<4xf32>
// CHECK:         func.return
func.func @refuse_bounds(%a: !layout.buffer<8xf32>, %b: !layout.buffer<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %l = %c0 to %c8 step %c1 {
    %v = layout.load %a[%l] : !layout.buffer<8xf32>, f32
    layout.store %v, %b[%l] : !layout.buffer<8xf32>, f32
  }
  func.return
}

// A masked if (apply-layout's padding test around a re-iterated body): a row has 6 real
// channels in 2 texels, lanes with x * 4 + l >= 6 are padding. Both branches run for all
// lanes; the condition is evaluated per lane; the input load is not proven in bounds for
// padding lanes (a[y * 6 + c] reaches 19 > 17), so each lane loads only when it takes the
// else branch; the two stores become ONE whole-texel store selecting per lane. That
// masked form runs only for the remainder texel: the loop is versioned on "no lane is
// padding" (the per-lane test evaluated before it), whose version is plain vector code.
// CHECK-LABEL: func.func @masked_padding
// CHECK-COUNT-4: arith.cmpi sge
// CHECK-COUNT-4: arith.xori
// CHECK:         scf.if %whole_texel {
// CHECK-NOT:       scf.if
// CHECK-NOT:       arith.select
// CHECK:           %[[WV:.*]] = layout.load %{{.*}}[%{{.*}}] : !layout.buffer<18xf32>, vector<4xf32>
// CHECK:           %[[WR:.*]] = arith.maximumf %[[WV]], %{{.*}} : vector<4xf32>
// CHECK:           layout.store %[[WR]], %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NEXT:    } else {
// CHECK-COUNT-4: arith.cmpi sge
// CHECK:         %[[L0:.*]] = scf.if %[[C0:.*]] -> (f32) {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      scf.yield %[[Z]] : f32
// CHECK-NEXT:    } else {
// CHECK:           %[[V:.*]] = layout.load %{{.*}}[%{{.*}}] : !layout.buffer<18xf32>, f32
// CHECK-NEXT:      scf.yield %[[V]] : f32
// CHECK-NEXT:    }
// CHECK-COUNT-3: layout.load %{{.*}}[%{{.*}}] : !layout.buffer<18xf32>, f32
// CHECK:         %[[R:.*]] = arith.maximumf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK:         %[[E0:.*]] = vector.extract %[[R]][0] : f32 from vector<4xf32>
// CHECK-NEXT:    %[[S0:.*]] = arith.select %[[C0]], %[[PAD:.*]], %[[E0]] : f32
// CHECK-COUNT-3: arith.select
// CHECK:         %[[T:.*]] = vector.insert %{{.*}}, %{{.*}} [3] : f32 into vector<4xf32>
// CHECK:         layout.store %[[T]], %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NOT:     layout.store
// CHECK:         func.return
func.func @masked_padding(%a: !layout.buffer<18xf32>, %b: !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  scf.for %y = %c0 to %c3 step %c1 {
    scf.for %x = %c0 to %c2 step %c1 {
      scf.for %l = %c0 to %c4 step %c1 {
        %x4 = arith.muli %x, %c4 : index
        %c = arith.addi %x4, %l : index
        %pad = arith.cmpi sge, %c, %c6 : index
        scf.if %pad {
          %p = arith.constant -1.5 : f32
          layout.store %p, %b[%y, %c] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, f32
        } else {
          %y6 = arith.muli %y, %c6 : index
          %i = arith.addi %y6, %c : index
          %v = layout.load %a[%i] : !layout.buffer<18xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%y, %c] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

// The input is a padded texture too: its texel is in bounds for every lane, so it is one
// speculated whole-texel load (no guard); the results of the if select per lane.
// CHECK-LABEL: func.func @masked_results
// CHECK:         scf.if %whole_texel {
// CHECK-NOT:       arith.select
// CHECK:           layout.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NOT:     scf.if
// CHECK:         %[[V:.*]] = layout.load %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK:         %[[R:.*]] = math.exp %[[V]] : vector<4xf32>
// CHECK-COUNT-4: arith.select
// CHECK:         layout.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NOT:     layout.store
// CHECK:         func.return
func.func @masked_results(%a: !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, %b: !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  scf.for %y = %c0 to %c3 step %c1 {
    scf.for %x = %c0 to %c2 step %c1 {
      scf.for %l = %c0 to %c4 step %c1 {
        %x4 = arith.muli %x, %c4 : index
        %c = arith.addi %x4, %l : index
        %pad = arith.cmpi sgt, %c, %c5 : index
        %r = scf.if %pad -> (f32) {
          %p = arith.constant 2.0 : f32
          scf.yield %p : f32
        } else {
          %v = layout.load %a[%y, %c] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, f32
          %e = math.exp %v : f32
          scf.yield %e : f32
        }
        layout.store %r, %b[%y, %c] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, f32
      }
    }
  }
  func.return
}

// A reduction only for the lanes that are not padding (a conv2d output texel with 6 real
// output channels): the loop runs for all lanes with a vector accumulator; the weights
// w[k][c] with k = 4 * x + l are not in bounds for padding lanes (k up to 7 > 5), so they
// are loaded per lane under the lane's condition; the activation is lane-invariant and in
// bounds (one scalar load).
// CHECK-LABEL: func.func @masked_reduction
// CHECK:         scf.if %whole_texel {
// CHECK-NOT:       scf.if
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<4xf32>) {
// CHECK:           layout.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<1x8xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NEXT:    } else {
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<4xf32>) {
// CHECK-NEXT:      %[[A:.*]] = layout.load %{{.*}}[%{{.*}}] : !layout.buffer<3xf32>, f32
// CHECK-COUNT-4:   scf.if %{{.*}} -> (f32) {
// CHECK:           arith.mulf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK:         layout.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<1x8xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NOT:     layout.store
// CHECK:         func.return
func.func @masked_reduction(%act: !layout.buffer<3xf32>, %w: !layout.buffer<6x3xf32>, %y: !layout.buffer<1x8xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  scf.for %x = %c0 to %c2 step %c1 {
    scf.for %l = %c0 to %c4 step %c1 {
      %x4 = arith.muli %x, %c4 : index
      %k = arith.addi %x4, %l : index
      %pad = arith.cmpi sge, %k, %c6 : index
      scf.if %pad {
        layout.store %zero, %y[%c0, %k] : !layout.buffer<1x8xf32, axis_separators = [1], scope = "global.texture">, f32
      } else {
        %acc = scf.for %ci = %c0 to %c3 step %c1 iter_args(%s = %zero) -> (f32) {
          %av = layout.load %act[%ci] : !layout.buffer<3xf32>, f32
          %wv = layout.load %w[%k, %ci] : !layout.buffer<6x3xf32>, f32
          %p = arith.mulf %av, %wv : f32
          %t = arith.addf %s, %p : f32
          scf.yield %t : f32
        }
        layout.store %acc, %y[%c0, %k] : !layout.buffer<1x8xf32, axis_separators = [1], scope = "global.texture">, f32
      }
    }
  }
  func.return
}

// A guard the same for every lane inside the reduction (a transposed conv's tap guard,
// `2 * t + x mod 2 < 3`): it stays one scf.if, its branches on whole texels (the
// accumulator a vector), no per-lane select.
// CHECK-LABEL: func.func @uniform_guard
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[S:.*]] = %{{.*}}) -> (vector<4xf32>) {
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK:           %[[R:.*]] = scf.if %[[IN]] -> (vector<4xf32>) {
// CHECK:             %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NEXT:        %[[T:.*]] = arith.addf %[[S]], %[[P]] : vector<4xf32>
// CHECK-NEXT:        scf.yield %[[T]] : vector<4xf32>
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[S]] : vector<4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[R]] : vector<4xf32>
// CHECK:         layout.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<2x4xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NOT:     arith.select
// CHECK:         func.return
func.func @uniform_guard(%act: !layout.buffer<4xf32>, %w: !layout.buffer<2x4xf32>, %y: !layout.buffer<2x4xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.for %x = %c0 to %c2 step %c1 {
    scf.for %l = %c0 to %c4 step %c1 {
      %acc = scf.for %t = %c0 to %c2 step %c1 iter_args(%s = %zero) -> (f32) {
        %t2 = arith.muli %t, %c2 : index
        %r = arith.remsi %x, %c2 : index
        %k = arith.addi %t2, %r : index
        %in = arith.cmpi ult, %k, %c3 : index
        %av = layout.load %act[%k] : !layout.buffer<4xf32>, f32
        %wv = layout.load %w[%t, %l] : !layout.buffer<2x4xf32>, f32
        %n = scf.if %in -> (f32) {
          %p = arith.mulf %av, %wv : f32
          %u = arith.addf %s, %p : f32
          scf.yield %u : f32
        } else {
          scf.yield %s : f32
        }
        scf.yield %n : f32
      }
      layout.store %acc, %y[%x, %l] : !layout.buffer<2x4xf32, axis_separators = [1], scope = "global.texture">, f32
    }
  }
  func.return
}

// A condition the same for every lane (padding rows): one guarded whole-texel load and
// one vector select.
// CHECK-LABEL: func.func @masked_uniform
// CHECK:         %[[P:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK:         %[[V:.*]] = scf.if %[[P]] -> (vector<4xf32>) {
// CHECK:           vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK:         } else {
// CHECK:           layout.load %{{.*}}[%{{.*}}] : !layout.buffer<24xf32>, vector<4xf32>
// CHECK:         }
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[V]] : vector<4xf32>
// CHECK-NEXT:    %[[PAD:.*]] = vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK-NEXT:    %[[S:.*]] = arith.select %[[P]], %[[PAD]], %[[E]] : vector<4xf32>
// CHECK:         layout.store %[[S]], %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<4x8xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NOT:     layout.store
// CHECK:         func.return
func.func @masked_uniform(%a: !layout.buffer<24xf32>, %b: !layout.buffer<4x8xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %y = %c0 to %c4 step %c1 {
    scf.for %x = %c0 to %c2 step %c1 {
      scf.for %l = %c0 to %c4 step %c1 {
        %pad = arith.cmpi sge, %y, %c3 : index
        %x4 = arith.muli %x, %c4 : index
        %c = arith.addi %x4, %l : index
        scf.if %pad {
          %p = arith.constant 7.0 : f32
          layout.store %p, %b[%y, %c] : !layout.buffer<4x8xf32, axis_separators = [1], scope = "global.texture">, f32
        } else {
          %y8 = arith.muli %y, %c8 : index
          %i = arith.addi %y8, %c : index
          %v = layout.load %a[%i] : !layout.buffer<24xf32>, f32
          %e = math.exp %v : f32
          layout.store %e, %b[%y, %c] : !layout.buffer<4x8xf32, axis_separators = [1], scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

// One real channel per texel (apply-layout simplified the channel index to 0 in the
// branch only lane 0 takes, so that store's column x * 4 does not depend on the lane):
// for the lanes that take it, it is x * 4 + lane, so it joins the other branch's store
// in ONE whole-texel store at column x * 4.
// CHECK-LABEL: func.func @masked_one_lane
// CHECK-COUNT-4: arith.cmpi ne
// CHECK:         %[[V:.*]] = layout.load %{{.*}}[%{{.*}}] : !layout.buffer<6xf32>, f32
// CHECK-COUNT-4: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK:         %[[X4:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    layout.store %{{.*}}, %{{.*}}[%{{.*}}, %[[X4]]] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NOT:     layout.store
// CHECK:         func.return
func.func @masked_one_lane(%a: !layout.buffer<6xf32>, %b: !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.for %y = %c0 to %c3 step %c1 {
    scf.for %x = %c0 to %c2 step %c1 {
      scf.for %l = %c0 to %c4 step %c1 {
        %x4 = arith.muli %x, %c4 : index
        %c = arith.addi %x4, %l : index
        %pad = arith.cmpi ne, %c0, %l : index
        scf.if %pad {
          %p = arith.constant -1.5 : f32
          layout.store %p, %b[%y, %c] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, f32
        } else {
          %y2 = arith.muli %y, %c2 : index
          %i = arith.addi %y2, %x : index
          %v = layout.load %a[%i] : !layout.buffer<6xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%y, %x4] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

// Refused: a store at a lane-invariant column in a branch whose lanes are not known (they
// depend on %d) or are taken by two lanes (the same column for both).
// CHECK-LABEL: func.func @refuse_pinned_unknown
// CHECK-COUNT-2: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:     vector<4xf32>
// CHECK:         func.return
func.func @refuse_pinned_unknown(%b: !layout.buffer<8xf32>, %d: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  scf.for %l = %c0 to %c4 step %c1 {
    %pad = arith.cmpi sge, %l, %d : index
    scf.if %pad {
      layout.store %zero, %b[%l] : !layout.buffer<8xf32>, f32
    } else {
      layout.store %one, %b[%c0] : !layout.buffer<8xf32>, f32
    }
  }
  scf.for %l = %c0 to %c4 step %c1 {
    %pad = arith.cmpi sge, %l, %c2 : index
    scf.if %pad {
      layout.store %zero, %b[%l] : !layout.buffer<8xf32>, f32
    } else {
      layout.store %one, %b[%c0] : !layout.buffer<8xf32>, f32
    }
  }
  func.return
}

// Refused: an if without an else (the separate padding fill of apply-layout): the other
// lanes' values are not known, so no whole-texel store can be formed.
// CHECK-LABEL: func.func @refuse_fill_only
// CHECK:         scf.for
// CHECK-NOT:     vector<4xf32>
// CHECK:         func.return
func.func @refuse_fill_only(%b: !layout.buffer<1x8xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %pad_value = arith.constant 0.0 : f32
  scf.for %x = %c0 to %c2 step %c1 {
    scf.for %l = %c0 to %c4 step %c1 {
      %x4 = arith.muli %x, %c4 : index
      %c = arith.addi %x4, %l : index
      %pad = arith.cmpi sge, %c, %c6 : index
      scf.if %pad {
        layout.store %pad_value, %b[%c0, %c] : !layout.buffer<1x8xf32, axis_separators = [1], scope = "global.texture">, f32
      } else {
      }
    }
  }
  func.return
}

// Refused: a storage stored in one branch only, a storage accessed after its store in the
// branch, a division by a value that may be 0 for lanes that would not divide, a
// condition on data, and an if inside a loop of the lane loop.
// CHECK-LABEL: func.func @refuse_masked_ifs
// CHECK-COUNT-5: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:     vector<4xf32>
// CHECK:         func.return
func.func @refuse_masked_ifs(%a: !layout.buffer<8xf32>, %b: !layout.buffer<8xf32>, %o: !layout.buffer<8xf32>, %d: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  scf.for %l = %c0 to %c4 step %c1 {
    %pad = arith.cmpi sge, %l, %c2 : index
    scf.if %pad {
      layout.store %zero, %b[%l] : !layout.buffer<8xf32>, f32
    } else {
      layout.store %zero, %o[%l] : !layout.buffer<8xf32>, f32
    }
  }
  scf.for %l = %c0 to %c4 step %c1 {
    %pad = arith.cmpi sge, %l, %c2 : index
    scf.if %pad {
      layout.store %zero, %b[%l] : !layout.buffer<8xf32>, f32
      %again = layout.load %b[%l] : !layout.buffer<8xf32>, f32
      layout.store %again, %o[%l] : !layout.buffer<8xf32>, f32
    } else {
      layout.store %zero, %b[%l] : !layout.buffer<8xf32>, f32
      layout.store %zero, %o[%l] : !layout.buffer<8xf32>, f32
    }
  }
  scf.for %l = %c0 to %c4 step %c1 {
    %pad = arith.cmpi sge, %l, %c2 : index
    scf.if %pad {
      layout.store %zero, %b[%l] : !layout.buffer<8xf32>, f32
    } else {
      %q = arith.divsi %c6, %d : index
      %v = layout.load %a[%q] : !layout.buffer<8xf32>, f32
      layout.store %v, %b[%l] : !layout.buffer<8xf32>, f32
    }
  }
  scf.for %l = %c0 to %c4 step %c1 {
    %v = layout.load %a[%l] : !layout.buffer<8xf32>, f32
    %neg = arith.cmpf olt, %v, %zero : f32
    scf.if %neg {
      layout.store %zero, %b[%l] : !layout.buffer<8xf32>, f32
    } else {
      layout.store %v, %b[%l] : !layout.buffer<8xf32>, f32
    }
  }
  scf.for %l = %c0 to %c4 step %c1 {
    %s = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (f32) {
      %pad = arith.cmpi sge, %l, %c2 : index
      %t = scf.if %pad -> (f32) {
        scf.yield %acc : f32
      } else {
        %v = layout.load %a[%l] : !layout.buffer<8xf32>, f32
        %u = arith.addf %acc, %v : f32
        scf.yield %u : f32
      }
      scf.yield %t : f32
    }
    layout.store %s, %b[%l] : !layout.buffer<8xf32>, f32
  }
  func.return
}

// A multi-dimensional scf.parallel whose innermost dimension is 0 to 4 over the lanes of a
// texture's texels (legalize-layout's nest for an elementwise op from a texture to a global
// buffer): that dimension becomes a lane loop, vectorized, so each iteration of the other
// dimensions reads one whole texel and writes four contiguous elements.
// CHECK-LABEL: func.func @relu_parallel_texels
// CHECK:         scf.parallel (%[[H:.*]], %[[W:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) {
// CHECK:           %[[V:.*]] = layout.load %{{.*}}[%[[H]], %{{.*}}] : !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NEXT:      %[[Z:.*]] = vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[V]], %[[Z]] : vector<4xf32>
// CHECK:           layout.store %[[R]], %{{.*}}[%{{.*}}] : !layout.buffer<64xf32>, vector<4xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }{{$}}
func.func @relu_parallel_texels(%a: !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, %b: !layout.buffer<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  "scf.parallel"(%c0, %c0, %c0, %c4, %c4, %c4, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 3, 3, 3, 0>}> ({
  ^bb0(%h: index, %w: index, %l: index):
    %w4 = arith.muli %w, %c4 : index
    %col = arith.addi %w4, %l : index
    %v = layout.load %a[%h, %col] : !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, f32
    %r = arith.maximumf %v, %zero : f32
    %h16 = arith.muli %h, %c16 : index
    %flat = arith.addi %h16, %col : index
    layout.store %r, %b[%flat] : !layout.buffer<64xf32>, f32
    "scf.reduce"() : () -> ()
  }) : (index, index, index, index, index, index, index, index, index) -> ()
  func.return
}

// Without a texture, such a nest is left as it is (its innermost dimension stays a
// work-item dimension of the OpenCL kernel).
// CHECK-LABEL: func.func @relu_parallel_global
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) {
// CHECK:           layout.load %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<4x4xf32>, f32
// CHECK-NOT:     vector
// CHECK:         func.return
func.func @relu_parallel_global(%a: !layout.buffer<4x4xf32>, %b: !layout.buffer<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  "scf.parallel"(%c0, %c0, %c4, %c4, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %l: index):
    %v = layout.load %a[%i, %l] : !layout.buffer<4x4xf32>, f32
    %r = arith.maximumf %v, %zero : f32
    layout.store %r, %b[%i, %l] : !layout.buffer<4x4xf32>, f32
    "scf.reduce"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// A select whose condition does not depend on the lane (a pad read through its padding at
// row %y - 1: the lanes of a texel share the row) is one select of whole texels: the
// scalar condition picks the loaded texel or the broadcast pad value.
// CHECK-LABEL: func.func @uniform_select
// CHECK:         %[[IN:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK:         %[[V:.*]] = layout.load %{{.*}} : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK:         %[[P:.*]] = vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK-NEXT:    %[[S:.*]] = arith.select %[[IN]], %[[V]], %[[P]] : vector<4xf32>
// CHECK:         layout.store %[[S]], %{{.*}} : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
func.func @uniform_select(%a: !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, %b: !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %pad = arith.constant -1.0 : f32
  scf.for %y = %c0 to %c4 step %c1 {
    scf.for %x = %c0 to %c8 step %c1 {
      scf.for %l = %c0 to %c4 step %c1 {
        %up = arith.subi %y, %c1 : index
        %in = arith.cmpi sge, %up, %c0 : index
        %row = arith.maxsi %up, %c0 : index
        %x4 = arith.muli %x, %c4 : index
        %col = arith.addi %x4, %l : index
        %v = layout.load %a[%row, %col] : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, f32
        %r = arith.select %in, %v, %pad : f32
        layout.store %r, %b[%y, %col] : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, f32
      }
    }
  }
  func.return
}

// A clamp of lane values (torch-mlir's hardswish: `x < 0 ? 0 : x`, then `x > 6 ? 6 : x`,
// each true for NaN) compares and selects lane by lane: one whole-texel load, four scalar
// compares and selects per clamp, packed, and one whole-texel store.
// CHECK-LABEL: func.func @clamp_texels
// CHECK:         %[[V:.*]] = layout.load %{{.*}} : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NEXT:    %[[V0:.*]] = vector.extract %[[V]][0] : f32 from vector<4xf32>
// CHECK-NEXT:    %[[P0:.*]] = arith.cmpf ult, %[[V0]], %{{.*}} : f32
// CHECK-COUNT-2: arith.cmpf ult, %{{.*}}, %{{.*}} : f32
// CHECK:         %[[P3:.*]] = arith.cmpf ult, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[W0:.*]] = vector.extract %[[V]][0] : f32 from vector<4xf32>
// CHECK-NEXT:    %[[S0:.*]] = arith.select %[[P0]], %{{.*}}, %[[W0]] : f32
// CHECK-COUNT-2: arith.select
// CHECK:         %[[S3:.*]] = arith.select %[[P3]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[LO:.*]] = vector.insert %[[S3]], %{{.*}} [3] : f32 into vector<4xf32>
// CHECK-NEXT:    %[[L0:.*]] = vector.extract %[[LO]][0] : f32 from vector<4xf32>
// CHECK-NEXT:    arith.cmpf ugt, %[[L0]], %{{.*}} : f32
// CHECK-COUNT-3: arith.cmpf ugt
// CHECK-COUNT-4: arith.select
// CHECK:         %[[R:.*]] = arith.mulf %{{.*}}, %[[V]] : vector<4xf32>
// CHECK:         layout.store %[[R]], %{{.*}} : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NOT:     arith.cmpf
// CHECK:         func.return
func.func @clamp_texels(%a: !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, %b: !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  scf.for %y = %c0 to %c4 step %c1 {
    scf.for %x = %c0 to %c8 step %c1 {
      scf.for %l = %c0 to %c4 step %c1 {
        %x4 = arith.muli %x, %c4 : index
        %col = arith.addi %x4, %l : index
        %v = layout.load %a[%y, %col] : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, f32
        %lt = arith.cmpf ult, %v, %zero : f32
        %lo = arith.select %lt, %zero, %v : f32
        %gt = arith.cmpf ugt, %lo, %six : f32
        %hi = arith.select %gt, %six, %lo : f32
        %r = arith.mulf %hi, %v : f32
        layout.store %r, %b[%y, %col] : !layout.buffer<4x32xf32, axis_separators = [1], scope = "global.texture">, f32
      }
    }
  }
  func.return
}
