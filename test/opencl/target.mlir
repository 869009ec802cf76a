// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels' -t opencl | filecheck %s
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels' -t opencl > %t.first.cl
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true},flatten-buffers,vectorize-texels' -t opencl > %t.second.cl
// RUN: diff %t.first.cl %t.second.cl

// The preamble: no FMA contraction (results match the numpy evaluator), one sampler with
// unnormalized coordinates, clamping and nearest filtering.
// CHECK:      #pragma OPENCL FP_CONTRACT OFF
// CHECK-NEXT: __constant sampler_t px_sampler = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;

// relu on NCHW4c textures ([n, c4, h | w, lane]: row = c4 * 8 + h, texel x = w): one
// whole-texel read and write per work-item; the innermost loop (w) is get_global_id(0).
// CHECK-LABEL: __kernel void relu_texture(__read_only image2d_t a, __write_only image2d_t b) {
// CHECK-NEXT:    int [[W:p[0-9]+]] = (int)get_global_id(0);
// CHECK-NEXT:    int [[H:p[0-9]+]] = (int)get_global_id(1);
// CHECK-NEXT:    int [[C4:p[0-9]+]] = (int)get_global_id(2);
// CHECK-NEXT:    int {{p[0-9]+}} = 0;
// CHECK-NEXT:    float4 [[V:[a-z0-9_]+]] = read_imagef(a, px_sampler, (int2)([[W]], [[C4]] * 8 + [[H]]));
// CHECK-NEXT:    float4 [[Z:[a-z0-9_]+]] = (float4)(0.0f);
// CHECK-NEXT:    float4 [[R:[a-z0-9_]+]] = ([[V]] >= [[Z]] || [[V]] != [[V]]) ? [[V]] : [[Z]];
// CHECK-NEXT:    write_imagef(b, (int2)([[W]], [[C4]] * 8 + [[H]]), [[R]]);
// CHECK-NEXT:  }
func.func @relu_texture(%a: !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %b: !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c8 step %c1 {
      scf.for %w = %c0 to %c8 step %c1 {
        scf.for %c = %c0 to %c16 step %c1 {
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

// Reading a texture back into a global NHWC buffer, one channel per iteration: a single
// lane of a texel ([n, h, w, c] -> texel (w, (c / 4) * 8 + h), lane c % 4, computed at run
// time). The global buffer is written with its flattened index. The global-scope
// 2-D texture-weight layout puts o4 on the rows.
// CHECK-LABEL: __kernel void texture_to_nhwc(__read_only image2d_t t, __global float* x) {
// CHECK-NEXT:    int [[C:c]] = (int)get_global_id(0);
// CHECK-NEXT:    int [[W:w]] = (int)get_global_id(1);
// CHECK-NEXT:    int [[H:h]] = (int)get_global_id(2);
// CHECK-NEXT:    int n = 0;
// CHECK-NEXT:    float [[V:[a-z0-9_]+]] = px_lane(read_imagef(t, px_sampler, (int2)([[W]], [[C]] / 4 * 8 + [[H]])), [[C]] % 4);
// CHECK-NEXT:    x[[[H]] * 128 + [[W]] * 16 + [[C]]] = [[V]];
func.func @texture_to_nhwc(%t: !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, %x: !layout.buffer<1x8x8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c8 step %c1 {
      scf.for %w = %c0 to %c8 step %c1 {
        scf.for %c = %c0 to %c16 step %c1 {
          %v = layout.load %t[%n, %h, %w, %c] : !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, f32
          layout.store %v, %x[%n, %h, %w, %c] : !layout.buffer<1x8x8x16xf32>, f32
        }
      }
    }
  }
  func.return
}

// A constant lane is a component selector; global-texture-weight puts o4 on the rows
// ([o4 | i, kh, kw, lane]).
// CHECK-LABEL: __kernel void weight_lane(__read_only image2d_t wt, __global float* out) {
// CHECK-NEXT:    int [[I:i]] = (int)get_global_id(0);
// CHECK-NEXT:    float [[V:[a-z0-9_]+]] = read_imagef(wt, px_sampler, (int2)([[I]] * 9 + 4, 1)).s2;
// CHECK-NEXT:    out[[[I]]] = [[V]];
func.func @weight_lane(%wt: !layout.buffer<2x8x3x3x4xf32, scope = "global.texture-weight">, %out: !layout.buffer<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = layout.load %wt[%c1, %i, %c1, %c1, %c2] : !layout.buffer<2x8x3x3x4xf32, scope = "global.texture-weight">, f32
    layout.store %v, %out[%i] : !layout.buffer<8xf32>, f32
  }
  func.return
}

// Global buffers: read-only parameters are const; a vectorized texel loop over global
// buffers reads and writes float4s (aligned: the index is a provable multiple of 4);
// scalar parameters are passed by value.
// CHECK-LABEL: __kernel void axpy4(__global const float* x, __global float* y, float alpha) {
// CHECK-NEXT:    int [[J:j]] = (int)get_global_id(0);
// CHECK-NEXT:    int [[I:i]] = (int)get_global_id(1);
// CHECK-NEXT:    float4 [[X:[a-z0-9_]+]] = *(__global const float4*)(x + [[I]] * 32 + [[J]] * 4);
// CHECK-NEXT:    float4 [[A:[a-z0-9_]+]] = (float4)(alpha);
// CHECK-NEXT:    float4 [[P:[a-z0-9_]+]] = [[X]] * [[A]];
// CHECK-NEXT:    float4 [[Y:[a-z0-9_]+]] = *(__global const float4*)(y + [[I]] * 32 + [[J]] * 4);
// CHECK-NEXT:    float4 [[S:[a-z0-9_]+]] = [[P]] + [[Y]];
// CHECK-NEXT:    *(__global float4*)(y + [[I]] * 32 + [[J]] * 4) = [[S]];
func.func @axpy4(%x: !layout.buffer<4x8x4xf32>, %y: !layout.buffer<4x8x4xf32>, %alpha: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      scf.for %l = %c0 to %c4 step %c1 {
        %xv = layout.load %x[%i, %j, %l] : !layout.buffer<4x8x4xf32>, f32
        %p = arith.mulf %xv, %alpha : f32
        %yv = layout.load %y[%i, %j, %l] : !layout.buffer<4x8x4xf32>, f32
        %s = arith.addf %p, %yv : f32
        layout.store %s, %y[%i, %j, %l] : !layout.buffer<4x8x4xf32>, f32
      }
    }
  }
  func.return
}

// A vector access that is not provably aligned uses vload4/vstore4.
// CHECK-LABEL: __kernel void unaligned(__global const float* x, __global float* y) {
// CHECK-NEXT:    int i = (int)get_global_id(0);
// CHECK-NEXT:    float4 [[V:[a-z0-9_]+]] = vload4(0, x + i * 5);
// CHECK-NEXT:    vstore4([[V]], 0, y + i * 5 + 1);
func.func @unaligned(%x: !layout.buffer<8x5xf32>, %y: !layout.buffer<8x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %l = %c0 to %c4 step %c1 {
      %v = layout.load %x[%i, %l] : !layout.buffer<8x5xf32>, f32
      %k = arith.addi %l, %c1 : index
      layout.store %v, %y[%i, %k] : !layout.buffer<8x5xf32>, f32
    }
  }
  func.return
}

// Work-items: a band of four proven-parallel loops maps its innermost three to
// get_global_id(0..2); the outermost becomes a loop inside each work-item.
// CHECK-LABEL: __kernel void copy4d(__global const float* a, __global float* b) {
// CHECK-NEXT:    int l = (int)get_global_id(0);
// CHECK-NEXT:    int k = (int)get_global_id(1);
// CHECK-NEXT:    int j = (int)get_global_id(2);
// CHECK-NEXT:    for (int i = 0; i < 2; i += 1) {
// CHECK-NEXT:      float [[V:[a-z0-9_]+]] = a[i * 60 + j * 20 + k * 5 + l];
// CHECK-NEXT:      b[i * 60 + j * 20 + k * 5 + l] = [[V]];
// CHECK-NEXT:    }
func.func @copy4d(%a: !layout.buffer<2x3x4x5xf32>, %b: !layout.buffer<2x3x4x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      scf.for %k = %c0 to %c4 step %c1 {
        scf.for %l = %c0 to %c5 step %c1 {
          %v = layout.load %a[%i, %j, %k, %l] : !layout.buffer<2x3x4x5xf32>, f32
          layout.store %v, %b[%i, %j, %k, %l] : !layout.buffer<2x3x4x5xf32>, f32
        }
      }
    }
  }
  func.return
}

// Work-items: a row sum accumulated in memory. The rows are parallel (the store index i is
// injective in i, and the load of out uses the same index); the reduction loop over j is
// not (every j stores out[i]), so it stays a sequential loop inside the work-item.
// CHECK-LABEL: __kernel void row_sum(__global const float* m, __global float* out) {
// CHECK-NEXT:    int i = (int)get_global_id(0);
// CHECK-NEXT:    for (int j = 0; j < 16; j += 1) {
// CHECK-NEXT:      float [[ACC:acc]] = out[i];
// CHECK-NEXT:      float [[V:[a-z0-9_]+]] = m[i * 16 + j];
// CHECK-NEXT:      float [[S:s]] = [[ACC]] + [[V]];
// CHECK-NEXT:      out[i] = [[S]];
// CHECK-NEXT:    }
func.func @row_sum(%m: !layout.buffer<8x16xf32>, %out: !layout.buffer<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %acc = layout.load %out[%i] : !layout.buffer<8xf32>, f32
      %v = layout.load %m[%i, %j] : !layout.buffer<8x16xf32>, f32
      %s = arith.addf %acc, %v : f32
      layout.store %s, %out[%i] : !layout.buffer<8xf32>, f32
    }
  }
  func.return
}

// Not parallel: a prefix sum reads the element the previous iteration wrote; the whole
// loop runs in one work-item.
// CHECK-LABEL: __kernel void prefix_sum(__global float* x) {
// CHECK-NOT:     get_global_id
// CHECK-NEXT:    for (int i = 1; i < 16; i += 1) {
// CHECK-NEXT:      float [[A:a]] = x[i - 1];
// CHECK-NEXT:      float [[B:b]] = x[i];
// CHECK-NEXT:      float [[S:s]] = [[A]] + [[B]];
// CHECK-NEXT:      x[i] = [[S]];
// CHECK-NEXT:    }
func.func @prefix_sum(%x: !layout.buffer<16xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c1 to %c16 step %c1 {
    %prev = arith.subi %i, %c1 : index
    %a = layout.load %x[%prev] : !layout.buffer<16xf32>, f32
    %b = layout.load %x[%i] : !layout.buffer<16xf32>, f32
    %s = arith.addf %a, %b : f32
    layout.store %s, %x[%i] : !layout.buffer<16xf32>, f32
  }
  func.return
}

// Not parallel: every iteration stores out[0] (the last one wins).
// CHECK-LABEL: __kernel void last_wins(__global const float* x, __global float* out) {
// CHECK-NOT:     get_global_id
// CHECK-NEXT:    for (int i = 0; i < 16; i += 1) {
// CHECK-NEXT:      float [[V:v]] = x[i];
// CHECK-NEXT:      out[0] = [[V]];
func.func @last_wins(%x: !layout.buffer<16xf32>, %out: !layout.buffer<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<16xf32>, f32
    layout.store %v, %out[%c0] : !layout.buffer<1xf32>, f32
  }
  func.return
}

// Not parallel: a sliding window (out[i + k]) collides across iterations of i.
// CHECK-LABEL: __kernel void window(__global float* out) {
// CHECK-NOT:     get_global_id
// CHECK-NEXT:    for (int i = 0; i < 4; i += 1) {
// CHECK-NEXT:      for (int k = 0; k < 3; k += 1) {
// CHECK-NEXT:        out[i + k] = 1.0f;
func.func @window(%out: !layout.buffer<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %k = %c0 to %c3 step %c1 {
      %j = arith.addi %i, %k : index
      layout.store %one, %out[%j] : !layout.buffer<8xf32>, f32
    }
  }
  func.return
}

// scf.parallel is parallel by definition; iter_args of inner loops become C variables.
// Two top-level loops are two kernels, launched in order.
// CHECK-LABEL: __kernel void two_launches_0(__global const float* a, __global float* b) {
// CHECK-NEXT:    int i = (int)get_global_id(0);
// CHECK-NEXT:    float [[S:sum]] = 0.0f;
// CHECK-NEXT:    for (int k = 0; k < 4; k += 1) {
// CHECK-NEXT:      float [[V:v]] = a[i * 4 + k];
// CHECK-NEXT:      float [[T:t]] = [[S]] + [[V]];
// CHECK-NEXT:      [[S]] = [[T]];
// CHECK-NEXT:    }
// CHECK-NEXT:    b[i] = [[S]];
// CHECK-NEXT:  }
// CHECK-LABEL: __kernel void two_launches_1(__global const float* a, __global float* b) {
// CHECK-NEXT:    int i_{{[0-9]+}} = (int)get_global_id(0);
func.func @two_launches(%a: !layout.buffer<8x4xf32>, %b: !layout.buffer<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %sum = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = layout.load %a[%i, %k] : !layout.buffer<8x4xf32>, f32
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    layout.store %sum, %b[%i] : !layout.buffer<8xf32>, f32
    scf.reduce
  }) : (index, index, index) -> ()
  scf.for %i = %c0 to %c8 step %c1 {
    %v = layout.load %b[%i] : !layout.buffer<8xf32>, f32
    %d = arith.addf %v, %v : f32
    layout.store %d, %b[%i] : !layout.buffer<8xf32>, f32
  }
  func.return
}

// affine.parallel (generic form) is parallel by definition; an affine.for whose stores
// are injective in its variable is proven parallel.
// CHECK-LABEL: __kernel void affine_loops_0(__global const float* a, __global float* b) {
// CHECK-NEXT:    int j = (int)get_global_id(0);
// CHECK-NEXT:    int i = (int)get_global_id(1);
// CHECK-NEXT:    float [[V:[a-z0-9_]+]] = a[i * 8 + j];
// CHECK-NEXT:    float [[W:[a-z0-9_]+]] = [[V]] * 2.0f;
// CHECK-NEXT:    b[i * 8 + j] = [[W]];
// CHECK-NEXT:  }
// CHECK-LABEL: __kernel void affine_loops_1(__global float* a, __global const float* b) {
// CHECK-NEXT:    int k = (int)get_global_id(0);
// CHECK-NEXT:    float [[V:[a-z0-9_]+]] = b[k];
func.func @affine_loops(%a: !layout.buffer<4x8xf32>, %b: !layout.buffer<4x8xf32>) {
  %two = arith.constant 2.0 : f32
  "affine.parallel"() <{lowerBoundsGroups = dense<1> : vector<2xi32>, lowerBoundsMap = affine_map<() -> (0, 0)>, reductions = [], steps = [1, 1], upperBoundsGroups = dense<1> : vector<2xi32>, upperBoundsMap = affine_map<() -> (4, 8)>}> ({
  ^bb0(%i: index, %j: index):
    %v = layout.load %a[%i, %j] : !layout.buffer<4x8xf32>, f32
    %w = arith.mulf %v, %two : f32
    layout.store %w, %b[%i, %j] : !layout.buffer<4x8xf32>, f32
    "affine.yield"() : () -> ()
  }) : () -> ()
  affine.for %k = 0 to 8 {
    %z = arith.constant 0 : index
    %v = layout.load %b[%z, %k] : !layout.buffer<4x8xf32>, f32
    %d = arith.addf %v, %v : f32
    layout.store %d, %a[%z, %k] : !layout.buffer<4x8xf32>, f32
  }
  func.return
}

// A load before the parallel nest whose storage nothing stores to afterwards is a setup
// value: every work-item of the launches that use it reads it again. A load between two
// loops of the band (of storage the nest does not write) does not stop the band.
// CHECK-LABEL: __kernel void invariant_scale(
// CHECK-NEXT:      __global const float* x,
// CHECK-NEXT:      __global const float* scale,
// CHECK-NEXT:      __global float* y) {
// CHECK-NEXT:    int i = (int)get_global_id(0);
// CHECK-NEXT:    float s = scale[1];
// CHECK-NEXT:    float v = x[i];
// CHECK-NEXT:    float r = v * s;
// CHECK-NEXT:    y[i] = r;
// CHECK-NEXT:  }
func.func @invariant_scale(%x: !layout.buffer<16xf32>, %scale: !layout.buffer<2xf32>, %y: !layout.buffer<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %s = layout.load %scale[%c1] : !layout.buffer<2xf32>, f32
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<16xf32>, f32
    %r = arith.mulf %v, %s : f32
    layout.store %r, %y[%i] : !layout.buffer<16xf32>, f32
  }
  func.return
}

// CHECK-LABEL: __kernel void row_scale(__global const float* x, __global const float* scale, __global float* y) {
// CHECK-NEXT:    int j = (int)get_global_id(0);
// CHECK-NEXT:    int i = (int)get_global_id(1);
// CHECK-NEXT:    float s = scale[i];
// CHECK-NEXT:    float v = x[i * 8 + j];
// CHECK-NEXT:    float r = v * s;
// CHECK-NEXT:    y[i * 8 + j] = r;
// CHECK-NEXT:  }
func.func @row_scale(%x: !layout.buffer<4x8xf32>, %scale: !layout.buffer<4xf32>, %y: !layout.buffer<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %s = layout.load %scale[%i] : !layout.buffer<4xf32>, f32
    scf.for %j = %c0 to %c8 step %c1 {
      %v = layout.load %x[%i, %j] : !layout.buffer<4x8xf32>, f32
      %r = arith.mulf %v, %s : f32
      layout.store %r, %y[%i, %j] : !layout.buffer<4x8xf32>, f32
    }
  }
  func.return
}

// NHWC with 6 channels into an NCHW4c texture: the second channel block has 2 padding
// lanes. apply-layout re-iterates the nest over the texels with a padding test per lane;
// vectorize-texels versions the texel: when no lane is padding (the first channel block),
// one vload4, the relu and one write_imagef; else (the remainder block) it reads the
// per-lane tests computed before the branch (not computed again: the writer names equal
// pure values by one variable), loads the input only for the lanes that are not padding
// (their index leaves the input otherwise), and writes each texel ONCE, selecting the pad
// value in the padding lanes.
// CHECK-LABEL: __kernel void relu_padded_texture(__global const float* a, __write_only image2d_t b) {
// CHECK:         int [[X:p3]] = (int)get_global_id(0);
// CHECK:         bool [[C0:v[0-9]+]] = {{.*}} >= 6;
// CHECK:         bool [[C1:v[0-9]+]] = {{.*}} >= 6;
// CHECK:         bool [[C2:v[0-9]+]] = {{.*}} >= 6;
// CHECK:         bool [[C3:v[0-9]+]] = {{.*}} >= 6;
// CHECK-COUNT-4: bool {{v[0-9]+}} = {{.*}} ^ true;
// CHECK-NEXT:    bool [[WHOLE:v[0-9]+]] = {{.*}} & {{.*}};
// CHECK-NEXT:    if ([[WHOLE]]) {
// CHECK-NEXT:      float4 [[V:v]] = vload4(0, a + {{.*}});
// CHECK-NEXT:      float4 [[Z:v[0-9]+]] = (float4)(0.0f);
// CHECK-NEXT:      float4 [[RW:r]] = ([[V]] >= [[Z]] || [[V]] != [[V]]) ? [[V]] : [[Z]];
// CHECK-NEXT:      write_imagef(b, (int2)([[X]], {{.*}}), [[RW]]);
// CHECK-NEXT:    } else {
// CHECK-NOT:     >= 6
// CHECK:         if ([[C0]]) {
// CHECK-NEXT:      [[A0:v[_0-9]*]] = 0.0f;
// CHECK-NEXT:    } else {
// CHECK-NEXT:      float [[L0:v[0-9]+]] = a[
// CHECK-NEXT:      [[A0]] = [[L0]];
// CHECK-NEXT:    }
// CHECK-COUNT-3: = a[
// CHECK:         float4 [[R:r_[0-9]+]] = ({{.*}}) ? {{.*}} : {{.*}};
// CHECK-NEXT:    float [[E0:v[0-9]+]] = [[R]].s0;
// CHECK-NEXT:    float [[S0:v[0-9]+]] = [[C0]] ? 0.0f : [[E0]];
// CHECK-NEXT:    float4 [[T0:v[0-9]+]] = (float4)([[S0]]);
// CHECK-NEXT:    float [[E1:v[0-9]+]] = [[R]].s1;
// CHECK-NEXT:    float [[S1:v[0-9]+]] = [[C1]] ? 0.0f : [[E1]];
// CHECK-NEXT:    float4 [[T1:v[0-9]+]] = [[T0]];
// CHECK-NEXT:    [[T1]].s1 = [[S1]];
// CHECK:         float [[S3:v[0-9]+]] = [[C3]] ? 0.0f : {{.*}};
// CHECK-NEXT:    float4 [[T3:v[0-9]+]] = {{.*}};
// CHECK-NEXT:    [[T3]].s3 = [[S3]];
// CHECK-NEXT:    write_imagef(b, (int2)([[X]], {{.*}}), [[T3]]);
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT: }
// CHECK-NOT:  write_imagef(b
func.func @relu_padded_texture(%a: !layout.buffer<2x3x3x6xf32>, %b: !layout.buffer<2x3x3x6xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c2 step %c1 {
    scf.for %h = %c0 to %c3 step %c1 {
      scf.for %w = %c0 to %c3 step %c1 {
        scf.for %c = %c0 to %c6 step %c1 {
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<2x3x3x6xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<2x3x3x6xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}

// Host functions are not kernels.
// CHECK: // host function @host launches: relu_texture, texture_to_nhwc
func.func @host(%x: !layout.buffer<1x8x8x16xf32>) {
  %p = layout.allocate [1, 8, 8, 16] : !layout.ptr<f32, scope = "global.texture">
  %t = layout.decl_buffer %p : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">
  %q = layout.allocate [1, 8, 8, 16] : !layout.ptr<f32, scope = "global.texture">
  %u = layout.decl_buffer %q : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">
  func.call @relu_texture(%t, %u) : (!layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">) -> ()
  func.call @texture_to_nhwc(%u, %x) : (!layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">, !layout.buffer<1x8x8x16xf32>) -> ()
  func.return
}

// A kernel without loops that reads back what it stored and computes with the value (what
// merge-sibling-kernels makes of a forwarded pair whose grid is one work item): one launch,
// the product after the load, in that launch (it was refused: a pure op of a launch's value
// was taken for setup, re-emitted in every launch).
// CHECK-LABEL: __kernel void store_then_load(
// CHECK:         float [[V:.*]] = x[0];
// CHECK:         t[0] = [[D:.*]];
// CHECK-NEXT:    float [[W:.*]] = t[0];
// CHECK-NEXT:    float [[M:.*]] = [[W]] * [[V]];
// CHECK-NEXT:    y[0] = [[M]];
// CHECK-NEXT:  }
func.func @store_then_load(%x: !layout.buffer<4xf32>, %t: !layout.buffer<4xf32>, %y: !layout.buffer<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = layout.load %x[%c0] : !layout.buffer<4xf32>, f32
  %d = arith.addf %v, %v : f32
  layout.store %d, %t[%c0] : !layout.buffer<4xf32>, f32
  %w = layout.load %t[%c0] : !layout.buffer<4xf32>, f32
  %m = arith.mulf %w, %v : f32
  layout.store %m, %y[%c0] : !layout.buffer<4xf32>, f32
  func.return
}
