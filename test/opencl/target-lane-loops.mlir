// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels' -t opencl | filecheck %s

// Lane loops: a sequential loop over the lanes of texels read one lane at a time becomes a
// loop over texel blocks with its body written four times (and the constant loops inside
// it unrolled), so each texel is read once and its lanes are taken from a float4. The
// copies keep the original order of operations (run-lane-loops.mlir checks the results
// with --rtol 0).

// 12 channels (3 texels) summed per work-item over a 5 x 7 (primes) image.
// CHECK-LABEL: __kernel void channel_sum(__read_only image2d_t t, __global float* out) {
// CHECK:         for (int [[B:[a-z0-9_]+]] = 0; [[B]] < 3; [[B]] += 1) {
// CHECK-NEXT:      float4 [[T:texel[0-9]*]] = read_imagef(t, px_sampler, (int2)(w, [[B]] * 5 + h));
// CHECK-NEXT:      float [[V0:[a-z0-9_]+]] = [[T]].s0;
// CHECK-NOT:       read_imagef
// CHECK:           = [[T]].s1;
// CHECK-NOT:       read_imagef
// CHECK:           = [[T]].s2;
// CHECK-NOT:       read_imagef
// CHECK:           = [[T]].s3;
// CHECK-NOT:       read_imagef
// CHECK:         out[h * 7 + w] =
func.func @channel_sum(%t: !layout.buffer<1x5x7x12xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %out: !layout.buffer<1x5x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c5 step %c1 {
      scf.for %w = %c0 to %c7 step %c1 {
        %s = scf.for %c = %c0 to %c12 step %c1 iter_args(%acc = %zero) -> (f32) {
          %v = layout.load %t[%n, %h, %w, %c] : !layout.buffer<1x5x7x12xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
          %a = arith.addf %acc, %v : f32
          scf.yield %a : f32
        }
        layout.store %s, %out[%n, %h, %w] : !layout.buffer<1x5x7xf32>, f32
      }
    }
  }
  func.return
}

// A 1 x 3 window (kh has extent 1) over 8 channels: 3 texels per block, each read once and
// used by the 4 lane copies. The unrolled kh and kw loops carry the sum by renaming: each
// tap adds to the previous tap's sum, with no C variable copied per copy.
// CHECK-LABEL: __kernel void window_sum(__read_only image2d_t t, __global float* out) {
// CHECK:         for (int [[B:[a-z0-9_]+]] = 0; [[B]] < 2; [[B]] += 1) {
// CHECK-NEXT:      float4 [[T0:texel[0-9]*]] = read_imagef(t, px_sampler, (int2)(w, [[B]] * 5 + h));
// CHECK-NEXT:      float [[V0:[a-z0-9_]+]] = [[T0]].s0;
// CHECK-NEXT:      float [[S0:[a-z0-9_]+]] = s + [[V0]];
// CHECK-NEXT:      float4 [[T1:texel[0-9]*]] = read_imagef(t, px_sampler, (int2)(w + 1, [[B]] * 5 + h));
// CHECK-NEXT:      float [[V1:[a-z0-9_]+]] = [[T1]].s0;
// CHECK-NEXT:      float [[S1:[a-z0-9_]+]] = [[S0]] + [[V1]];
// CHECK-NEXT:      float4 [[T2:texel[0-9]*]] = read_imagef(t, px_sampler, (int2)(w + 2, [[B]] * 5 + h));
// CHECK-NEXT:      float [[V2:[a-z0-9_]+]] = [[T2]].s0;
// CHECK-NEXT:      float [[S2:[a-z0-9_]+]] = [[S1]] + [[V2]];
// CHECK-NEXT:      s = [[S2]];
// CHECK-NOT:       read_imagef
// CHECK:           = [[T0]].s1;
// CHECK-NOT:       read_imagef
// CHECK:           = [[T2]].s3;
// CHECK-NOT:       read_imagef
// CHECK:         out[h * 7 + w] =
func.func @window_sum(%t: !layout.buffer<1x5x9x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %out: !layout.buffer<1x5x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c5 step %c1 {
      scf.for %w = %c0 to %c7 step %c1 {
        %s = scf.for %c = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
          %s1 = scf.for %kh = %c0 to %c1 step %c1 iter_args(%acc1 = %acc) -> (f32) {
            %s2 = scf.for %kw = %c0 to %c3 step %c1 iter_args(%acc2 = %acc1) -> (f32) {
              %hh = arith.addi %h, %kh : index
              %ww = arith.addi %w, %kw : index
              %v = layout.load %t[%n, %hh, %ww, %c] : !layout.buffer<1x5x9x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
              %a = arith.addf %acc2, %v : f32
              scf.yield %a : f32
            }
            scf.yield %s2 : f32
          }
          scf.yield %s1 : f32
        }
        layout.store %s, %out[%n, %h, %w] : !layout.buffer<1x5x7xf32>, f32
      }
    }
  }
  func.return
}

// 3 channels (a padded texel): the trip count is not a multiple of 4, the loop stays a C
// loop reading one lane per iteration.
// CHECK-LABEL: __kernel void three_channels(__read_only image2d_t t, __global float* out) {
// CHECK:         for (int c = 0; c < 3; c += 1) {
// CHECK-NEXT:      float {{.*}} = px_lane(read_imagef(t, px_sampler, (int2)(w, h)), c);
func.func @three_channels(%t: !layout.buffer<1x5x7x3xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">, %out: !layout.buffer<1x5x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c5 step %c1 {
      scf.for %w = %c0 to %c7 step %c1 {
        %s = scf.for %c = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f32) {
          %v = layout.load %t[%n, %h, %w, %c] : !layout.buffer<1x5x7x3xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">, f32
          %a = arith.addf %acc, %v : f32
          scf.yield %a : f32
        }
        layout.store %s, %out[%n, %h, %w] : !layout.buffer<1x5x7xf32>, f32
      }
    }
  }
  func.return
}

// An inner loop of 37 (prime) iterations: 4 x 37 copies exceed the unroll limit (128), so
// the lane loop stays a C loop.
// CHECK-LABEL: __kernel void long_window(__read_only image2d_t t, __global float* out) {
// CHECK:         for (int c = 0; c < 4; c += 1) {
// CHECK:           for (int k = 0; k < 37; k += 1) {
// CHECK:             px_lane(read_imagef(t, px_sampler,
func.func @long_window(%t: !layout.buffer<1x1x41x4xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %out: !layout.buffer<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c37 = arith.constant 37 : index
  %zero = arith.constant 0.0 : f32
  scf.for %w = %c0 to %c5 step %c1 {
    %s = scf.for %c = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
      %s1 = scf.for %k = %c0 to %c37 step %c1 iter_args(%acc1 = %acc) -> (f32) {
        %ww = arith.addi %w, %k : index
        %v = layout.load %t[%c0, %c0, %ww, %c] : !layout.buffer<1x1x41x4xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
        %a = arith.addf %acc1, %v : f32
        scf.yield %a : f32
      }
      scf.yield %s1 : f32
    }
    layout.store %s, %out[%w] : !layout.buffer<5xf32>, f32
  }
  func.return
}

// A carried index as a texel column: each unrolled copy of the inner loop reads it as the
// value the previous copy yielded (renamed, not assigned), so a texel read with it is read
// again in each copy at the next column (not taken from an earlier copy).
// CHECK-LABEL: __kernel void carried_column(__read_only image2d_t t, __global float* out) {
// CHECK:         for (int [[B:[a-z0-9_]+]] = 0; [[B]] < 1; [[B]] += 1) {
// CHECK:           float4 [[T0:texel[0-9]*]] = read_imagef(t, px_sampler, (int2)(w, 0));
// CHECK:           int [[X1:[a-z0-9_]+]] = w + 1;
// CHECK-NEXT:      float4 [[T1:texel[0-9]*]] = read_imagef(t, px_sampler, (int2)([[X1]], 0));
// CHECK:           int [[X2:[a-z0-9_]+]] = [[X1]] + 1;
// CHECK-NEXT:      float4 {{texel[0-9]*}} = read_imagef(t, px_sampler, (int2)([[X2]], 0));
func.func @carried_column(%t: !layout.buffer<1x1x9x4xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %out: !layout.buffer<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  scf.for %w = %c0 to %c5 step %c1 {
    %s = scf.for %c = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
      %s1, %x1 = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc1 = %acc, %x = %w) -> (f32, index) {
        %v = layout.load %t[%c0, %c0, %x, %c] : !layout.buffer<1x1x9x4xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
        %a = arith.addf %acc1, %v : f32
        %x2 = arith.addi %x, %c1 : index
        scf.yield %a, %x2 : f32, index
      }
      scf.yield %s1 : f32
    }
    layout.store %s, %out[%w] : !layout.buffer<5xf32>, f32
  }
  func.return
}

// A 1 x 3 window over 8 channels with a zero border, the taps' columns clamped and
// guarded by ops (as a padded convolution reads its input): those ops do not depend on the
// lane, so only the first lane copy writes them and the other three use its variables; the
// clamped column is then the same C text in all four copies and each tap's texel is read
// once per block of four channels (three reads per block, not twelve).
// CHECK-LABEL: __kernel void guarded_window(__read_only image2d_t t, __global float* out) {
// CHECK:         for (int [[B:[a-z0-9_]+]] = 0; [[B]] < 2; [[B]] += 1) {
// CHECK:           int [[C0:col[a-z0-9_]*]] = min(
// CHECK:           float4 [[T0:texel[0-9]*]] = read_imagef(t, px_sampler, (int2)([[C0]], [[B]] * 5 + h));
// CHECK:           int [[C1:col[a-z0-9_]*]] = min(
// CHECK:           float4 {{texel[0-9]*}} = read_imagef(t, px_sampler, (int2)([[C1]], [[B]] * 5 + h));
// CHECK:           int [[C2:col[a-z0-9_]*]] = min(
// CHECK:           float4 [[T2:texel[0-9]*]] = read_imagef(t, px_sampler, (int2)([[C2]], [[B]] * 5 + h));
// CHECK-NOT:       {{read_imagef|max\(|min\(}}
// CHECK:           = [[T0]].s1;
// CHECK-NOT:       {{read_imagef|max\(|min\(}}
// CHECK:           = [[T2]].s3;
// CHECK-NOT:       read_imagef
// CHECK:         out[h * 7 + w] =
func.func @guarded_window(%t: !layout.buffer<1x5x7x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %out: !layout.buffer<1x5x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c5 step %c1 {
      scf.for %w = %c0 to %c7 step %c1 {
        %s = scf.for %c = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
          %s1 = scf.for %kw = %c0 to %c3 step %c1 iter_args(%acc1 = %acc) -> (f32) {
            %wk = arith.addi %w, %kw : index
            %ww = arith.subi %wk, %c1 : index
            %lo = arith.maxsi %ww, %c0 : index
            %col = arith.minsi %lo, %c6 : index
            %above = arith.cmpi sge, %ww, %c0 : index
            %below = arith.cmpi slt, %ww, %c7 : index
            %inside = arith.andi %above, %below : i1
            %v = layout.load %t[%n, %h, %col, %c] : !layout.buffer<1x5x7x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
            %g = arith.select %inside, %v, %zero : f32
            %a = arith.addf %acc1, %g : f32
            scf.yield %a : f32
          }
          scf.yield %s1 : f32
        }
        layout.store %s, %out[%n, %h, %w] : !layout.buffer<1x5x7xf32>, f32
      }
    }
  }
  func.return
}
