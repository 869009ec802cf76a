// RUN: xdsl-opt %s -p apply-schedules | filecheck %s
// RUN: xdsl-opt %s -p apply-schedules,apply-schedules | filecheck %s
// RUN: xdsl-opt %s -p 'apply-schedules,physlayout-opencl' -t opencl | filecheck %s --check-prefix=CL

// A 3x3 NCHW4c convolution over textures (3 output channel blocks, 5 columns: primes), each
// work-item computing 2 channel blocks x 4 columns: one loop nest carrying 8 accumulators,
// each weight texel loaded once per channel block of the tile (not per column), each input
// lane once per column (not per channel block), the remainder (channel block 3 of 3,
// columns 5..7 of 5) clamped for loads and guarded for stores.

// CHECK-LABEL: func.func @conv
// CHECK-SAME:    attributes {layout.scheduled = #layout.schedule<tile = [1, 2, 1, 4], workgroup = [1, 1, 4, 2]>}
// CHECK:         scf.parallel (%[[N:[a-z0-9_]+]], %[[O:[a-z0-9_]+]], %[[H:[a-z0-9_]+]], %[[Q:[a-z0-9_]+]]) = ({{.*}}) to ({{.*}}) step ({{.*}}) {
// CHECK:           %[[O1:[a-z0-9_]+]] = arith.addi %[[O]], %{{.*}} : index
// CHECK-NEXT:      %[[THREE:[a-z0-9_]+]] = arith.constant 3 : index
// CHECK-NEXT:      %[[O1OK:[a-z0-9_]+]] = arith.cmpi slt, %[[O1]], %[[THREE]] : index
// CHECK-NEXT:      %{{.*}} = arith.constant 2 : index
// CHECK-NEXT:      %[[O1C:[a-z0-9_]+]] = arith.minsi %[[O1]], %{{.*}} : index
// CHECK:           %[[Q1:[a-z0-9_]+]] = arith.addi %[[Q]], %{{.*}} : index
// CHECK-NEXT:      %{{.*}} = arith.constant 5 : index
// CHECK-NEXT:      %[[Q1OK:[a-z0-9_]+]] = arith.cmpi slt, %[[Q1]], %{{.*}} : index
// CHECK:           %[[A0:[0-9]+]], %[[A1:[0-9]+]], %{{.*}}, %{{.*}}, %[[A4:[0-9]+]], %{{.*}}, %{{.*}}, %{{.*}} = scf.for %{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) {
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 layout.load %x
// CHECK-NEXT:            layout.load %x
// CHECK-NEXT:            layout.load %x
// CHECK-NEXT:            layout.load %x
// CHECK-NEXT:            layout.load %w[%[[O]],
// CHECK-NEXT:            layout.load %w[%[[O1C]],
// CHECK-NEXT:            vector.broadcast
// CHECK-COUNT-8:         arith.mulf
// CHECK-COUNT-8:         arith.addf
// CHECK-NEXT:            scf.yield
// CHECK:           layout.store %[[A0]], %y[%[[N]], %[[O]], %[[H]], %[[Q]], %{{.*}}]
// CHECK-NEXT:      scf.if %[[Q1OK]] {
// CHECK-NEXT:        layout.store %[[A1]], %y
// CHECK-NEXT:      }
// CHECK:           scf.if %[[O1OK]] {
// CHECK-NEXT:        layout.store %[[A4]], %y[%[[N]], %[[O1C]], %[[H]], %[[Q]], %{{.*}}]
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[BOTH:[a-z0-9_]+]] = arith.andi %[[O1OK]], %[[Q1OK]] : i1
// CHECK-NEXT:      scf.if %[[BOTH]] {
// CHECK:           scf.reduce

// CL-LABEL: __kernel void conv(
// CL:         int [[Q:[a-z0-9_]+]] = (int)get_global_id(0) * 4;
// CL:         int [[O:[a-z0-9_]+]] = (int)get_global_id(2) * 2;
// CL:         int [[O1:[a-z0-9_]+]] = [[O]] + 1;
// CL-NEXT:    bool [[O1OK:[a-z0-9_]+]] = [[O1]] < 3;
// CL-NEXT:    int [[O1C:[a-z0-9_]+]] = min([[O1]], 2);
// CL-NEXT:    int [[Q1:[a-z0-9_]+]] = [[Q]] + 1;
// CL-NEXT:    bool [[Q1OK:[a-z0-9_]+]] = [[Q1]] < 5;
// CL-NEXT:    int [[Q1C:[a-z0-9_]+]] = min([[Q1]], 4);
// CL-COUNT-8: = ((float4)(0.0f));
// CL:         for (int [[B:[a-z0-9_]+]] = 0; [[B]] < 2; [[B]] += 1) {
// CL:           = read_imagef(w, px_sampler, (int2)([[B]] * 36, [[O]]));
// CL-NEXT:      = read_imagef(w, px_sampler, (int2)([[B]] * 36, [[O1C]]));
// CL-COUNT-4:   float4 {{.*}} = (float4)(xv{{.*}});
// CL-COUNT-8:   float4 {{.*}} = {{.*}} * {{.*}};
// CL:           = read_imagef(w, px_sampler, (int2)([[B]] * 36 + 1, [[O]]));
// CL-NEXT:      = read_imagef(w, px_sampler, (int2)([[B]] * 36 + 1, [[O1C]]));
// CL:         write_imagef(y, (int2)([[Q]], [[O]] * 4 + [[H:[a-z0-9_]+]]),
// CL-NEXT:    if ([[Q1OK]]) {
// CL-NEXT:      write_imagef(y, (int2)([[Q1C]], [[O]] * 4 + [[H]]),
// CL-NEXT:    }
// CL:         if ([[O1OK]]) {
// CL-NEXT:      write_imagef(y, (int2)([[Q]], [[O1C]] * 4 + [[H]]),

func.func @conv(%x: !layout.buffer<1x2x6x7x4xf32, scope = "global.texture">, %w: !layout.buffer<3x8x3x3x4xf32, scope = "global.texture-weight">, %y: !layout.buffer<1x3x4x5x4xf32, scope = "global.texture">) attributes {layout.schedule = #layout.schedule<tile = [1, 2, 1, 4], workgroup = [1, 1, 4, 2]>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant dense<0.0> : vector<4xf32>
  scf.parallel (%n, %o, %h, %q) = (%c0, %c0, %c0, %c0) to (%c1, %c3, %c4, %c5) step (%c1, %c1, %c1, %c1) {
    %acc = scf.for %c = %c0 to %c8 step %c1 iter_args(%a = %zero) -> (vector<4xf32>) {
      %r = scf.for %kh = %c0 to %c3 step %c1 iter_args(%b = %a) -> (vector<4xf32>) {
        %s = scf.for %kw = %c0 to %c3 step %c1 iter_args(%d = %b) -> (vector<4xf32>) {
          %ih = arith.addi %h, %kh : index
          %iw = arith.addi %q, %kw : index
          %cb = arith.divui %c, %c4 : index
          %cl = arith.remui %c, %c4 : index
          %xv = layout.load %x[%n, %cb, %ih, %iw, %cl] : !layout.buffer<1x2x6x7x4xf32, scope = "global.texture">, f32
          %wv = layout.load %w[%o, %c, %kh, %kw, %c0] : !layout.buffer<3x8x3x3x4xf32, scope = "global.texture-weight">, vector<4xf32>
          %xb = vector.broadcast %xv : f32 to vector<4xf32>
          %m = arith.mulf %xb, %wv : vector<4xf32>
          %e = arith.addf %m, %d : vector<4xf32>
          scf.yield %e : vector<4xf32>
        }
        scf.yield %s : vector<4xf32>
      }
      scf.yield %r : vector<4xf32>
    }
    layout.store %acc, %y[%n, %o, %h, %q, %c0] : !layout.buffer<1x3x4x5x4xf32, scope = "global.texture">, vector<4xf32>
    scf.reduce
  }
  func.return
}

// unroll = 3: the 3-iteration window loop is written out, iteration by iteration, for each
// of the 2 elements of the tile (each element's sum in the original order); 5 outputs, so
// the second element of the last tile is guarded.

// CHECK-LABEL: func.func @window
// CHECK-SAME:    attributes {layout.scheduled = #layout.schedule<tile = [2], unroll = 3>}
// CHECK:         scf.parallel (%[[I:[a-z0-9_]+]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NOT:       scf.for
// CHECK:           %[[V0:[a-z0-9_]+]] = layout.load %a
// CHECK:           %[[V1:[a-z0-9_]+]] = layout.load %a
// CHECK:           %[[S0:[a-z0-9_]+]] = arith.addf %{{.*}}, %[[V0]] : f32
// CHECK-NEXT:      %[[S1:[a-z0-9_]+]] = arith.addf %{{.*}}, %[[V1]] : f32
// CHECK:           arith.addf %[[S0]], %{{.*}} : f32
// CHECK-NEXT:      arith.addf %[[S1]], %{{.*}} : f32
// CHECK-NOT:       scf.for
// CHECK:           layout.store %{{.*}}, %b[%[[I]]]
// CHECK:           scf.if
// CHECK-NEXT:        layout.store
func.func @window(%a: !layout.buffer<8xf32>, %b: !layout.buffer<5xf32>) attributes {layout.schedule = #layout.schedule<tile = [2], unroll = 3>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c5) step (%c1) {
    %s = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f32) {
      %j = arith.addi %i, %k : index
      %v = layout.load %a[%j] : !layout.buffer<8xf32>, f32
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    layout.store %s, %b[%i] : !layout.buffer<5xf32>, f32
    scf.reduce
  }
  func.return
}

// A tile longer than its axis (8 on 3 iterations) is cut to the trip count: one work-item
// computes the 3 iterations (step 3), every store unguarded, no clamped fourth element.

// CHECK-LABEL: func.func @longer_than_axis
// CHECK:         %[[STEP:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT:    scf.parallel (%[[I:[a-z0-9_]+]]) = (%{{.*}}) to (%{{.*}}) step (%[[STEP]]) {
// CHECK-NOT:       arith.minsi
// CHECK-NOT:       scf.if
// CHECK:           layout.store %{{.*}}, %b[%[[I]]]
// CHECK:           layout.store
// CHECK:           layout.store
// CHECK-NOT:       layout.store
// CHECK:           scf.reduce
func.func @longer_than_axis(%b: !layout.buffer<3xf32>) attributes {layout.schedule = #layout.schedule<tile = [8]>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c3) step (%c1) {
    layout.store %f, %b[%i] : !layout.buffer<3xf32>, f32
    scf.reduce
  }
  func.return
}
