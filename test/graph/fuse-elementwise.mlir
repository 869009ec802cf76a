// One fusion rule or refusal of fuse-elementwise per function (graph IR written by hand, as
// the pipeline leaves it before legalize-layout: NCHW4c convs as generics, fill inits,
// torch-mlir-shaped batch norms with per-channel broadcast operands).
// RUN: xdsl-opt %s -p fuse-elementwise | filecheck %s
// RUN: xdsl-opt %s -p fuse-elementwise,fuse-elementwise | filecheck %s
// RUN: xdsl-opt %s -p 'fuse-elementwise{remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch4 = affine_map<(n, c, h, w) -> (c, 0, 0)>
#par4 = ["parallel", "parallel", "parallel", "parallel"]
#tr = affine_map<(i, j) -> (j, i)>
#id2 = affine_map<(i, j) -> (i, j)>
#par2 = ["parallel", "parallel"]

// conv (fill init) + bias + batch-norm scale + relu: one group; the fill is the root's
// start, the epilogue stages follow the conv in one region.
// CHECK-LABEL: func.func @conv_bias_bn_relu
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.0
// CHECK-NEXT:    %[[R:.*]] = layout.fused ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>) -> tensor<1x4x2x2xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: tensor<1x4x4x4xf32>, %[[W:.*]]: tensor<4x4x3x3xf32>, %[[B:.*]]: tensor<4x1x1xf32>, %[[S:.*]]: tensor<4x1x1xf32>):
// CHECK-NEXT:      tensor.empty()
// CHECK-NEXT:      %[[F:.*]] = linalg.fill ins(%[[Z]] : f32)
// CHECK-NEXT:      %[[C:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[F]] : tensor<1x4x2x2xf32>)
// CHECK:           tensor.empty()
// CHECK-NEXT:      %[[A:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[B]] : {{.*}})
// CHECK:           %[[M:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[S]] : {{.*}})
// CHECK:           %[[Y:.*]] = linalg.generic {{.*}} ins(%[[M]] : {{.*}})
// CHECK:           layout.yield %[[Y]] : tensor<1x4x2x2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @conv_bias_bn_relu(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4x1x1xf32>, %s: tensor<4x1x1xf32>) -> tensor<1x4x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) outs(%init : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %a = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%c, %b : tensor<1x4x2x2xf32>, tensor<4x1x1xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2xf32>
  %m = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%a, %s : tensor<1x4x2x2xf32>, tensor<4x1x1xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.mulf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%m : tensor<1x4x2x2xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2xf32>
  func.return %y : tensor<1x4x2x2xf32>
}

// A chain of elementwise generics (no reduction): one group, its first generic the root.
// CHECK-LABEL: func.func @elementwise_chain
// CHECK-NEXT:    %[[R:.*]] = layout.fused ins(%{{.*}}, %{{.*}} : tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32> {
// CHECK-COUNT-3:   linalg.generic
// CHECK:           layout.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @elementwise_chain(%x: tensor<3x5xf32>, %y: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %e = tensor.empty() : tensor<3x5xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = #par2} ins(%x, %y : tensor<3x5xf32>, tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = #par2} ins(%a, %a : tensor<3x5xf32>, tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.mulf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  %c = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = #par2} ins(%b, %x : tensor<3x5xf32>, tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.subf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  func.return %c : tensor<3x5xf32>
}

// A conv with nothing to fuse still absorbs its fill (no fill kernel).
// CHECK-LABEL: func.func @lone_conv
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    %[[R:.*]] = layout.fused ins
// CHECK-NEXT:    ^
// CHECK-NEXT:      tensor.empty
// CHECK-NEXT:      linalg.fill
// CHECK-NEXT:      linalg.generic
// CHECK:           layout.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @lone_conv(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) outs(%init : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %c : tensor<1x4x2x2xf32>
}

// REFUSED: a 3x3 conv reads a neighbourhood of the exp (the planted bug: fusing it would
// read elements other iterations write), and exp is not cheap enough for the conv to repeat
// it per read. The exp stays a kernel of its own.
// CHECK-LABEL: func.func @conv_reads_neighbours
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK:         layout.fused ins(%[[Y]], %{{.*}} :
// REMARK: remark: fuse-elementwise: %y is not fused into %c: %y is read at (d0, d4, d2 + d5, d3 + d6) by a consumer that has reduction loops (only the root of a group may reduce); nor computed by the root reading it: its body has 'math.exp', which the root would repeat per read
func.func @conv_reads_neighbours(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<1x4x4x4xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%x : tensor<1x4x4x4xf32>) outs(%ex : tensor<1x4x4x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x4xf32>
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%y, %w : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) outs(%init : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %c : tensor<1x4x2x2xf32>
}

// COMPUTED BY THE ROOT: the same 3x3 conv over a relu of an argument. The relu cannot be
// fused (the conv reads neighbours of it) but is cheap: the conv computes it from %x where
// it reads it (every read recomputes max(x, 0) of an element that exists before the kernel).
// CHECK-LABEL: func.func @relu_into_conv_window
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.0
// CHECK-NEXT:    %{{.*}} = layout.fused ins(%x, %w : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x2x2xf32> {
// CHECK:           linalg.fill
// CHECK-NEXT:      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, (d2 + d5), (d3 + d6))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]
// CHECK-NEXT:      ^{{.*}}(%[[U:.*]]: f32, %[[K:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT:        %[[R:.*]] = arith.maximumf %[[U]], %[[Z]] : f32
// CHECK-NEXT:        %[[M:.*]] = arith.mulf %[[R]], %[[K]] : f32
// CHECK-NEXT:        %{{.*}} = arith.addf %[[M]], %[[O]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
func.func @relu_into_conv_window(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<1x4x4x4xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%x : tensor<1x4x4x4xf32>) outs(%ex : tensor<1x4x4x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x4xf32>
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%y, %w : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) outs(%init : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %c : tensor<1x4x2x2xf32>
}

// COMPUTED BY THE ROOT: squeeze-excite's per-channel scale of %x, read by a 1x1 conv with a
// bias epilogue: one kernel reads %x, %s, %w and %b; %x * %s is never stored.
// CHECK-LABEL: func.func @scale_into_conv
// CHECK:         %[[R:.*]] = layout.fused ins(%x, %s, %w, %b : tensor<1x4x3x3xf32>, tensor<4x1x1xf32>, tensor<5x4x1x1xf32>, tensor<5x1x1xf32>) -> tensor<1x5x3x3xf32> {
// CHECK:           affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, (d2 + d5), (d3 + d6))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, 0, 0)>
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK:         func.return %[[R]]
func.func @scale_into_conv(%x: tensor<1x4x3x3xf32>, %s: tensor<4x1x1xf32>, %w: tensor<5x4x1x1xf32>, %b: tensor<5x1x1xf32>) -> tensor<1x5x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<1x4x3x3xf32>
  %y = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%x, %s : tensor<1x4x3x3xf32>, tensor<4x1x1xf32>) outs(%ex : tensor<1x4x3x3xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.mulf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x4x3x3xf32>
  %e = tensor.empty() : tensor<1x5x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x5x3x3xf32>) -> tensor<1x5x3x3xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%y, %w : tensor<1x4x3x3xf32>, tensor<5x4x1x1xf32>) outs(%init : tensor<1x5x3x3xf32>) -> tensor<1x5x3x3xf32>
  %bias = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%c, %b : tensor<1x5x3x3xf32>, tensor<5x1x1xf32>) outs(%e : tensor<1x5x3x3xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x5x3x3xf32>
  func.return %bias : tensor<1x5x3x3xf32>
}

// COMPUTED BY THE ROOT, read through composed maps: the producer writes %x - %s[w] at the
// transposed point (n, c, w, h); the window sum reads it at (n, c, h + i, w + j), which the
// producer wrote at w = h + i, h = w + j: the root reads %x at (n, c, w + j, h + i) and %s at
// h + i (extents 3 and 5, so a wrong composition reads other values or out of bounds).
// CHECK-LABEL: func.func @transposed_prologue_into_window
// CHECK:         layout.fused ins(%x, %s : tensor<1x2x3x5xf32>, tensor<5xf32>) -> tensor<1x2x4x2xf32> {
// CHECK:           indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d3 + d5), (d2 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> ((d2 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
func.func @transposed_prologue_into_window(%x: tensor<1x2x3x5xf32>, %s: tensor<5xf32>) -> tensor<1x2x4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %ey = tensor.empty() : tensor<1x2x5x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (w)>, affine_map<(n, c, h, w) -> (n, c, w, h)>], iterator_types = #par4} ins(%x, %s : tensor<1x2x3x5xf32>, tensor<5xf32>) outs(%ey : tensor<1x2x5x3xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.subf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x2x5x3xf32>
  %e = tensor.empty() : tensor<1x2x4x2xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(n, c, h, w, i, j) -> (n, c, h + i, w + j)>, affine_map<(n, c, h, w, i, j) -> (i, j)>, affine_map<(n, c, h, w, i, j) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%y, %win : tensor<1x2x5x3xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x4x2xf32>) {
  ^bb0(%u: f32, %k: f32, %o: f32):
    %r = arith.addf %o, %u : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x2xf32>
  func.return %p : tensor<1x2x4x2xf32>
}

// COMPUTED BY THE ROOT, with the producer's output map a 3-cycle (y[n, h, w, c] = x[n, c, h,
// w] - s[c]), not its own inverse: the channel mix reads y at (n, i, h, w), written at
// c = w, h = i, w = h, so the root reads %x at (n, w, i, h) and %s at w. Every extent is 3:
// a composition that forgets to invert the output map reads other elements, in bounds
// (test_fuse_elementwise's planted bug).
// CHECK-LABEL: func.func @rotated_prologue_into_mix
// CHECK:         layout.fused ins(%x, %s, %k : tensor<1x3x3x3xf32>, tensor<3xf32>, tensor<3x3xf32>) -> tensor<1x3x3x3xf32> {
// CHECK:           indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>
func.func @rotated_prologue_into_mix(%x: tensor<1x3x3x3xf32>, %s: tensor<3xf32>, %k: tensor<3x3xf32>) -> tensor<1x3x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ey = tensor.empty() : tensor<1x3x3x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, h, w, c)>], iterator_types = #par4} ins(%x, %s : tensor<1x3x3x3xf32>, tensor<3xf32>) outs(%ey : tensor<1x3x3x3xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.subf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x3x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%ey : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(n, c, h, w, i) -> (n, i, h, w)>, affine_map<(n, c, h, w, i) -> (c, i)>, affine_map<(n, c, h, w, i) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%y, %k : tensor<1x3x3x3xf32>, tensor<3x3xf32>) outs(%init : tensor<1x3x3x3xf32>) {
  ^bb0(%u: f32, %q: f32, %o: f32):
    %p = arith.mulf %u, %q : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x3x3x3xf32>
  func.return %m : tensor<1x3x3x3xf32>
}

// COMPUTED BY THE ROOT in f16 storage (to-mixed-precision's form): the scale's extf, extf,
// mulf, truncf is one multiply beside conversions the root repeats per read; the root
// accumulates in f32 from the rounded f16 product, as the unfused kernels did.
// CHECK-LABEL: func.func @f16_scale_into_mix
// CHECK:         layout.fused ins(%x, %s, %k : tensor<1x3x2x2xf16>, tensor<3x1x1xf16>, tensor<3x3xf32>) -> tensor<1x3x2x2xf32> {
// CHECK:           arith.extf
// CHECK-NEXT:      arith.extf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.truncf
// CHECK-NEXT:      arith.extf
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
func.func @f16_scale_into_mix(%x: tensor<1x3x2x2xf16>, %s: tensor<3x1x1xf16>, %k: tensor<3x3xf32>) -> tensor<1x3x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %ey = tensor.empty() : tensor<1x3x2x2xf16>
  %y = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%x, %s : tensor<1x3x2x2xf16>, tensor<3x1x1xf16>) outs(%ey : tensor<1x3x2x2xf16>) {
  ^bb0(%u: f16, %v: f16, %o: f16):
    %a = arith.extf %u : f16 to f32
    %b = arith.extf %v : f16 to f32
    %p = arith.mulf %a, %b : f32
    %r = arith.truncf %p : f32 to f16
    linalg.yield %r : f16
  } -> tensor<1x3x2x2xf16>
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(n, c, h, w, i) -> (n, i, h, w)>, affine_map<(n, c, h, w, i) -> (c, i)>, affine_map<(n, c, h, w, i) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%y, %k : tensor<1x3x2x2xf16>, tensor<3x3xf32>) outs(%init : tensor<1x3x2x2xf32>) {
  ^bb0(%u: f16, %q: f32, %o: f32):
    %a = arith.extf %u : f16 to f32
    %p = arith.mulf %a, %q : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x2xf32>
  func.return %m : tensor<1x3x2x2xf32>
}

// REFUSED (both ways): a prologue of three ops is more than the root repeats per read.
// CHECK-LABEL: func.func @long_prologue
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK:         layout.fused ins(%[[Y]], %{{.*}} :
// REMARK: remark: fuse-elementwise: %y is not fused into %c: %y is read at (d0, d4, d2 + d5, d3 + d6) by a consumer that has reduction loops (only the root of a group may reduce); nor computed by the root reading it: its body has 3 ops, which the root would repeat per read
func.func @long_prologue(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<1x4x4x4xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%x : tensor<1x4x4x4xf32>) outs(%ex : tensor<1x4x4x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %a = arith.mulf %u, %u : f32
    %b = arith.addf %a, %u : f32
    %r = arith.maximumf %b, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x4xf32>
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%y, %w : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) outs(%init : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %c : tensor<1x4x2x2xf32>
}

// REFUSED: a 2x2 max pool (a window reduction) over an exp (its fill, 0.0 as exp's
// outputs are >= 0, is absorbed).
// CHECK-LABEL: func.func @pool_reads_window
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK:         layout.fused ins(%[[Y]] :
// REMARK: remark: fuse-elementwise: %y is not fused into %p: %y is read at (d0, d1, d2 * 2 + d4, d3 * 2 + d5) by a consumer that has reduction loops (only the root of a group may reduce); nor computed by the root reading it: its body has 'math.exp', which the root would repeat per read
func.func @pool_reads_window(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<1x4x4x4xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%x : tensor<1x4x4x4xf32>) outs(%ex : tensor<1x4x4x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x4xf32>
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(n, c, h, w, i, j) -> (n, c, 2 * h + i, 2 * w + j)>, affine_map<(n, c, h, w, i, j) -> (i, j)>, affine_map<(n, c, h, w, i, j) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%y, %win : tensor<1x4x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x4x2x2xf32>) {
  ^bb0(%u: f32, %k: f32, %o: f32):
    %r = arith.maximumf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2xf32>
  func.return %p : tensor<1x4x2x2xf32>
}

// REFUSED: a transposed read (iteration (i, j) reads the element (j, i) of the producer);
// an exp is no cheap prologue, so %t does not recompute it either (fuse-recompute.mlir).
// CHECK-LABEL: func.func @transposed_read
// CHECK-NOT:     layout.fused
// CHECK:         func.return
// REMARK: remark: fuse-elementwise: %a is not fused into %t: %a is read at (d1, d0) by a consumer that writes (d0, d1): not the element the producer writes there (a neighbour, broadcast or transposed read)
func.func @transposed_read(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %e = tensor.empty() : tensor<3x3xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%x : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<3x3xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = #par2} ins(%a : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<3x3xf32>
  func.return %t : tensor<3x3xf32>
}

// REFUSED: a broadcast read of a per-channel producer (each of its elements would be
// recomputed once per pixel).
// CHECK-LABEL: func.func @broadcast_read
// CHECK-NOT:     layout.fused
// CHECK:         func.return
// REMARK: remark: fuse-elementwise: %s is not fused into %y: %s is read at (d1, 0, 0) by a consumer that writes (d0, d1, d2, d3)
func.func @broadcast_read(%x: tensor<1x4x2x2xf32>, %v: tensor<4x1x1xf32>) -> tensor<1x4x2x2xf32> {
  %ev = tensor.empty() : tensor<4x1x1xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(c, i, j) -> (c, i, j)>, affine_map<(c, i, j) -> (c, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v : tensor<4x1x1xf32>) outs(%ev : tensor<4x1x1xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.sqrt %u : f32
    linalg.yield %r : f32
  } -> tensor<4x1x1xf32>
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = #par4} ins(%x, %s : tensor<1x4x2x2xf32>, tensor<4x1x1xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%u: f32, %w: f32, %o: f32):
    %r = arith.mulf %u, %w : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2xf32>
  func.return %y : tensor<1x4x2x2xf32>
}

// REFUSED: %a has two consumers (it is needed whole); %b and %c are not fused with it, nor
// do they recompute it (an exp; a cheap body would be: fuse-recompute.mlir).
// CHECK-LABEL: func.func @two_users
// CHECK-NOT:     layout.fused
// CHECK:         func.return
// REMARK: remark: fuse-elementwise: %a is not fused into %c: it has 2 users, so it is needed whole (fusing would compute it once per consumer); nor recomputed by its 2 readers: its body has 'math.exp', which the root would repeat per read
func.func @two_users(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %e = tensor.empty() : tensor<3x5xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%x : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%a : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%a : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.mulf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  func.return %b, %c : tensor<3x5xf32>, tensor<3x5xf32>
}

// REFUSED: a consumer that reads its output's initial value (an accumulation into %a's
// consumer's init) is no stage.
// CHECK-LABEL: func.func @reads_init
// CHECK-NOT:     layout.fused
// CHECK:         func.return
// REMARK: remark: fuse-elementwise: %a is not fused into %b: %a is read at (d0, d1) by a consumer that reads the initial value of its output
func.func @reads_init(%x: tensor<3x5xf32>, %y: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %e = tensor.empty() : tensor<3x5xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%x : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = #par2} ins(%a : tensor<3x5xf32>) outs(%y : tensor<3x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  func.return %b : tensor<3x5xf32>
}

// REFUSED: the sum of two convs: one is fused as the root, the other would be a second
// reduction in the same kernel.
// CHECK-LABEL: func.func @two_reductions
// CHECK:         %[[B:.*]] = layout.fused ins(%{{.*}}, %{{.*}} : {{.*}}) -> tensor<1x4x2x2xf32> {
// CHECK:         %[[R:.*]] = layout.fused ins(%{{.*}}, %{{.*}}, %[[B]] : {{.*}}) -> tensor<1x4x2x2xf32> {
// CHECK:         func.return %[[R]]
// REMARK: remark: fuse-elementwise: %b is not fused into %s: the group holds 2 generics with reduction loops (one kernel runs one)
func.func @two_reductions(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) outs(%i1 : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) outs(%i2 : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = #par4} ins(%a, %b : tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2xf32>
  func.return %s : tensor<1x4x2x2xf32>
}

// REFUSED: the value reaches its consumer through a layout.copy (a scope realize-scopes
// decided) or a layout.transform (a layout convert-layout decided). The transform back to
// NCHW only relabels: %y reads the blocked %d through it (lane c of texel 0), but %d is
// stored in its own layout and not fused (the read is not at %y's output map).
// CHECK-LABEL: func.func @decided_scope_and_layout
// CHECK:         %[[A:.*]] = linalg.generic
// CHECK:         layout.copy %[[A]]
// CHECK:         %[[D:.*]] = linalg.generic
// CHECK-NOT:     layout.transform
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]{{.*}} ins(%[[D]] :
// REMARK: remark: fuse-elementwise: %a is not fused into its consumer: it reaches it through a copy into global.texture (a decided scope)
// REMARK: remark: fuse-elementwise: %d is not fused into %y: %d is read at (d0, 0, d2, d3, d1) by a consumer that writes (d0, d1, d2, d3): not the element the producer writes there (a neighbour, broadcast or transposed read)
func.func @decided_scope_and_layout(%x: tensor<1x1x2x2x4xf32>) -> tensor<1x4x2x2xf32> {
  %e = tensor.empty() : tensor<1x1x2x2x4xf32>
  %id5 = arith.constant 0 : index
  %a = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, l) -> (a, b, c, d, l)>, affine_map<(a, b, c, d, l) -> (a, b, c, d, l)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x1x2x2x4xf32>) outs(%e : tensor<1x1x2x2x4xf32>) attrs = {layout.scope = "global"} {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<1x1x2x2x4xf32>
  %t = layout.copy %a {scope = "global.texture"} : tensor<1x1x2x2x4xf32> -> tensor<1x1x2x2x4xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, l) -> (a, b, c, d, l)>, affine_map<(a, b, c, d, l) -> (a, b, c, d, l)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<1x1x2x2x4xf32>) outs(%e : tensor<1x1x2x2x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<1x1x2x2x4xf32>
  %n = layout.transform %d {index_map = #layout.index_map<(n, c, h, w, l) -> (n, c * 4 + l, h, w)>} : tensor<1x1x2x2x4xf32> -> tensor<1x4x2x2xf32>
  %e4 = tensor.empty() : tensor<1x4x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%n : tensor<1x4x2x2xf32>) outs(%e4 : tensor<1x4x2x2xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2xf32>
  func.return %y : tensor<1x4x2x2xf32>
}

// A 3x3 conv over a zero pad (3 channels, prime extents): the pad joins the conv's group
// and is read through its padding, never stored; the fill is the conv's start.
// CHECK-LABEL: func.func @conv_reads_pad
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    %[[R:.*]] = layout.fused ins(%{{.*}}, %{{.*}} : tensor<1x3x5x7xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x5x7xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: tensor<1x3x5x7xf32>, %[[W:.*]]: tensor<2x3x3x3xf32>):
// CHECK-NEXT:      %[[P:.*]] = layout.pad %[[X]] {{.*}}low = array<i64: 0, 0, 1, 1>
// CHECK:           linalg.fill
// CHECK-NEXT:      %[[C:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[W]] :
// CHECK:           layout.yield %[[C]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @conv_reads_pad(%x: tensor<1x3x5x7xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x5x7xf32> {
  %zero = arith.constant 0.0 : f32
  %p = layout.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, pad_value = 0.0 : f32} : tensor<1x3x5x7xf32> -> tensor<1x3x7x9xf32>
  %e = tensor.empty() : tensor<1x2x5x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x5x7xf32>) -> tensor<1x2x5x7xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<1x3x7x9xf32>, tensor<2x3x3x3xf32>) outs(%init : tensor<1x2x5x7xf32>) -> tensor<1x2x5x7xf32>
  func.return %c : tensor<1x2x5x7xf32>
}

// A 3x3 stride-2 max pool over a -inf pad with asymmetric widths (ceil mode): padding only
// on the high side of the width, so the kernel checks only that bound; the pool's -inf
// fill is its start.
// CHECK-LABEL: func.func @pool_reads_neg_inf_pad
// CHECK:         layout.fused ins(%{{.*}} : tensor<1x3x5x6xf32>) -> tensor<1x3x2x3xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: tensor<1x3x5x6xf32>):
// CHECK-NEXT:      layout.pad %[[X]] {{.*}}high = array<i64: 0, 0, 0, 1>
func.func @pool_reads_neg_inf_pad(%x: tensor<1x3x5x6xf32>) -> tensor<1x3x2x3xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = layout.pad %x {low = array<i64: 0, 0, 0, 0>, high = array<i64: 0, 0, 0, 1>, pad_value = 0xFF800000 : f32} : tensor<1x3x5x6xf32> -> tensor<1x3x5x7xf32>
  %e = tensor.empty() : tensor<1x3x2x3xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x3x2x3xf32>) -> tensor<1x3x2x3xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(n, c, h, w, i, j) -> (n, c, 2 * h + i, 2 * w + j)>, affine_map<(n, c, h, w, i, j) -> (i, j)>, affine_map<(n, c, h, w, i, j) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %win : tensor<1x3x5x7xf32>, tensor<3x3xf32>) outs(%init : tensor<1x3x2x3xf32>) {
  ^bb0(%u: f32, %k: f32, %o: f32):
    %r = arith.maximumf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<1x3x2x3xf32>
  func.return %m : tensor<1x3x2x3xf32>
}

// REFUSED: the relu before a pad cannot join the conv that reads the pad (the conv reads a
// neighbourhood of it: only a tensor that exists before the kernel is padded on read).
// The pad still joins the conv; the relu is a kernel of its own.
// CHECK-LABEL: func.func @relu_pad_conv
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK:         layout.fused ins(%[[Y]], %{{.*}} :
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: tensor<1x4x4x4xf32>, %{{.*}}: tensor<4x4x3x3xf32>):
// CHECK-NEXT:      layout.pad %[[A]]
// REMARK: remark: fuse-elementwise: %y is not fused into %c: %y is used by 'layout.pad'
func.func @relu_pad_conv(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<1x4x4x4xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%x : tensor<1x4x4x4xf32>) outs(%ex : tensor<1x4x4x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x4xf32>
  %p = layout.pad %y {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, pad_value = 0.0 : f32} : tensor<1x4x4x4xf32> -> tensor<1x4x6x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%ex : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %c : tensor<1x4x4x4xf32>
}

// REFUSED: a pad two convs read is stored once (reading it through the padding would
// repeat it per reader); the two convs start from one fill, which each gets a copy of.
// CHECK-LABEL: func.func @pad_two_users
// CHECK:         %[[P:.*]] = layout.pad
// CHECK:         layout.fused ins(%[[P]], %{{.*}} :
// CHECK:           linalg.fill
// CHECK:         layout.fused ins(%[[P]], %{{.*}} :
// CHECK:           linalg.fill
// CHECK-NOT:     linalg.fill
// CHECK:         func.return
// REMARK: remark: fuse-elementwise: %p is not read through its padding: it has other users than %d, so it is stored
func.func @pad_two_users(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = layout.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, pad_value = 0.0 : f32} : tensor<1x4x4x4xf32> -> tensor<1x4x6x6xf32>
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %d = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %c, %d : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}

// REFUSED: the group would store a texture, but a stage selects per lane (a vector select
// vectorize-texels cannot run); a read at 0 of a loop of extent 1 (d1 here) still counts as
// the element the iteration writes, so only the texture stops this fusion.
// CHECK-LABEL: func.func @select_into_texture
// CHECK:         %[[A:.*]] = linalg.generic
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[A]] :
// REMARK: remark: fuse-elementwise: %a is not fused into %s: would store whole texels of its global.texture result, but its body computes 'arith.select', which vectorize-texels cannot run on texels
func.func @select_into_texture(%x: tensor<2x1x4xf32>, %m: tensor<2x1x4xi1>) -> tensor<2x1x4xf32> {
  %e = tensor.empty() : tensor<2x1x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j, l) -> (i, j, l)>, affine_map<(i, j, l) -> (i, j, l)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x1x4xf32>) outs(%e : tensor<2x1x4xf32>) attrs = {layout.scope = "global"} {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<2x1x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, l) -> (i, j, l)>, affine_map<(i, j, l) -> (i, 0, l)>, affine_map<(i, j, l) -> (i, j, l)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m, %a : tensor<2x1x4xi1>, tensor<2x1x4xf32>) outs(%e : tensor<2x1x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%c: i1, %u: f32, %o: f32):
    %n = arith.negf %u : f32
    %r = arith.select %c, %u, %n : f32
    linalg.yield %r : f32
  } -> tensor<2x1x4xf32>
  func.return %s : tensor<2x1x4xf32>
}

// REFUSED, after the producer became a group: the group of two negations takes its block
// back unchanged (the same ops, the same arguments) when the texture store refuses %s.
// CHECK-LABEL: func.func @select_into_texture_after_group
// CHECK-NEXT:    %[[E:.*]] = tensor.empty()
// CHECK-NEXT:    %[[A:.*]] = layout.fused ins(%[[X:.*]] : tensor<2x1x4xf32>) -> tensor<2x1x4xf32> attributes {layout.scope = "global"} {
// CHECK-NEXT:    ^{{.*}}(%[[XA:.*]]: tensor<2x1x4xf32>):
// CHECK-NEXT:      %[[EA:.*]] = tensor.empty()
// CHECK-NEXT:      %[[B:.*]] = linalg.generic {{.*}} ins(%[[XA]] : tensor<2x1x4xf32>) outs(%[[EA]] : tensor<2x1x4xf32>)
// CHECK:           arith.negf
// CHECK:           %[[C:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<2x1x4xf32>)
// CHECK:           arith.negf
// CHECK:           layout.yield %[[C]] : tensor<2x1x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[S:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[A]] : tensor<2x1x4xi1>, tensor<2x1x4xf32>) outs(%[[E]] : tensor<2x1x4xf32>)
// CHECK:           arith.select
// CHECK:         func.return %[[S]]
// REMARK: remark: fuse-elementwise: %a is not fused into %s: would store whole texels of its global.texture result, but its body computes 'arith.select', which vectorize-texels cannot run on texels
func.func @select_into_texture_after_group(%x: tensor<2x1x4xf32>, %m: tensor<2x1x4xi1>) -> tensor<2x1x4xf32> {
  %e = tensor.empty() : tensor<2x1x4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j, l) -> (i, j, l)>, affine_map<(i, j, l) -> (i, j, l)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x1x4xf32>) outs(%e : tensor<2x1x4xf32>) attrs = {layout.scope = "global"} {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<2x1x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j, l) -> (i, j, l)>, affine_map<(i, j, l) -> (i, j, l)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b : tensor<2x1x4xf32>) outs(%e : tensor<2x1x4xf32>) attrs = {layout.scope = "global"} {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<2x1x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, l) -> (i, j, l)>, affine_map<(i, j, l) -> (i, 0, l)>, affine_map<(i, j, l) -> (i, j, l)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m, %a : tensor<2x1x4xi1>, tensor<2x1x4xf32>) outs(%e : tensor<2x1x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%c: i1, %u: f32, %o: f32):
    %n = arith.negf %u : f32
    %r = arith.select %c, %u, %n : f32
    linalg.yield %r : f32
  } -> tensor<2x1x4xf32>
  func.return %s : tensor<2x1x4xf32>
}

// A 3x3 max pool of an NCHW4c texture reads its input per texel lane, but the padding is
// on H and W, which the lanes share: one condition per texel, so the pad joins the pool
// (vectorize-texels selects whole texels on it).
// CHECK-LABEL: func.func @pool_per_lane_texture
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    layout.fused ins(%{{.*}} : tensor<1x1x5x5x4xf32>)
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: tensor<1x1x5x5x4xf32>):
// CHECK-NEXT:      layout.pad %[[X]]
func.func @pool_per_lane_texture(%x: tensor<1x1x5x5x4xf32>) -> tensor<1x1x5x5x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = layout.pad %x {layout.scope = "global.texture", low = array<i64: 0, 0, 1, 1, 0>, high = array<i64: 0, 0, 1, 1, 0>, pad_value = 0xFF800000 : f32} : tensor<1x1x5x5x4xf32> -> tensor<1x1x7x7x4xf32>
  %e = tensor.empty() : tensor<1x1x5x5x4xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %init = linalg.fill {layout.scope = "global.texture"} ins(%ninf : f32) outs(%e : tensor<1x1x5x5x4xf32>) -> tensor<1x1x5x5x4xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(n, c, h, w, l, i, j) -> (n, c, h + i, w + j, l)>, affine_map<(n, c, h, w, l, i, j) -> (i, j)>, affine_map<(n, c, h, w, l, i, j) -> (n, c, h, w, l)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %win : tensor<1x1x7x7x4xf32>, tensor<3x3xf32>) outs(%init : tensor<1x1x5x5x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%u: f32, %k: f32, %o: f32):
    %r = arith.maximumf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<1x1x5x5x4xf32>
  func.return %m : tensor<1x1x5x5x4xf32>
}

// READ THROUGH A RELAYOUT: a model's tail, its last conv's blocked result (12 channels, 10
// classes from channel 2 on) back to NCHW, cropped, then a global mean pool (sum + divide):
// the pool's root reads the blocked tensor itself at (c + 2) floordiv 4, lane (c + 2) mod 4;
// neither the NCHW copy nor the crop is built.
// CHECK-LABEL: func.func @relayout_into_mean
// CHECK-NOT:     layout.transform
// CHECK-NOT:     layout.crop
// CHECK:         %[[R:.*]] = layout.fused ins(%y : tensor<1x3x3x2x4xf32>) -> tensor<1x10xf32> {
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, ((d1 + 2) floordiv 4), d2, d3, ((d1 + 2) mod 4))>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>]
// CHECK:           arith.divf
// CHECK:         func.return %[[R]]
func.func @relayout_into_mean(%y: tensor<1x3x3x2x4xf32>) -> tensor<1x10xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %t = layout.transform %y {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x3x3x2x4xf32> -> tensor<1x12x3x2xf32>
  %k = layout.crop %t {start = array<i64: 0, 2, 0, 0>, sizes = array<i64: 1, 10, 3, 2>} : tensor<1x12x3x2xf32> -> tensor<1x10x3x2xf32>
  %e = tensor.empty() : tensor<1x10xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x10xf32>) -> tensor<1x10xf32>
  %s = linalg.generic {indexing_maps = [#id4, affine_map<(n, c, h, w) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%k : tensor<1x10x3x2xf32>) outs(%init : tensor<1x10xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<1x10xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (n, c)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<1x10xf32>) outs(%e : tensor<1x10xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.divf %u, %six : f32
    linalg.yield %r : f32
  } -> tensor<1x10xf32>
  func.return %m : tensor<1x10xf32>
}

// READ THROUGH A RELAYOUT, a lone root: a max-reduction that accumulates into its argument
// (nothing to group with) reads the blocked tensor (two texels of 4 channels, 2x5 pixels).
// CHECK-LABEL: func.func @relayout_into_lone_root
// CHECK-NOT:     layout.transform
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, (d1 floordiv 4), d2, d3, (d1 mod 4))>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>]
func.func @relayout_into_lone_root(%y: tensor<1x2x2x5x4xf32>, %acc: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %t = layout.transform %y {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x2x2x5x4xf32> -> tensor<1x8x2x5xf32>
  %s = linalg.generic {indexing_maps = [#id4, affine_map<(n, c, h, w) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%t : tensor<1x8x2x5xf32>) outs(%acc : tensor<1x8xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<1x8xf32>
  func.return %s : tensor<1x8xf32>
}

// NOT READ THROUGH: the sum over channels would index its reduction loop only inside a
// floordiv and a mod of the blocked tensor (no map would give the loop's extent).
// CHECK-LABEL: func.func @relayout_loop_only_in_floordiv
// CHECK:         %[[T:.*]] = layout.transform %y
// CHECK:         linalg.generic {{.*}} ins(%[[T]] :
func.func @relayout_loop_only_in_floordiv(%y: tensor<1x2x4xf32>, %acc: tensor<1xf32>) -> tensor<1xf32> {
  %t = layout.transform %y {index_map = #layout.index_map<(N, C, c) -> (N, C * 4 + c)>} : tensor<1x2x4xf32> -> tensor<1x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]} ins(%t : tensor<1x8xf32>) outs(%acc : tensor<1xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  func.return %s : tensor<1xf32>
}

// NOT READ THROUGH: a transform into a blocked layout (it raises the rank, and pads 10
// channels into 3 texels: the root would read padding positions, which hold the pad value
// only in the stored copy) and a relayout with a second user (it is stored anyway). An
// elementwise reader of a relayout back to NCHW reads through it like a reduction does.
// CHECK-LABEL: func.func @relayout_refused
// CHECK:         %[[P:.*]] = layout.transform %x {{.*}} -> tensor<1x3x2x2x4xf32>
// CHECK:         ins(%[[P]] :
// CHECK:         %[[T:.*]] = layout.transform %y
// CHECK:         layout.fused ins(%[[T]] :
// CHECK-NOT:     layout.transform %z
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3, d1)>, {{.*}} ins(%z :
func.func @relayout_refused(%x: tensor<1x10x2x2xf32>, %y: tensor<1x1x2x2x4xf32>, %z: tensor<1x1x2x2x4xf32>) -> (tensor<1x3x1x1x4xf32>, tensor<1x4xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = layout.transform %x {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>, pad_value = 1.0 : f32} : tensor<1x10x2x2xf32> -> tensor<1x3x2x2x4xf32>
  %e1 = tensor.empty() : tensor<1x3x1x1x4xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x3x1x1x4xf32>) -> tensor<1x3x1x1x4xf32>
  %s1 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w, l) -> (n, c, h, w, l)>, affine_map<(n, c, h, w, l) -> (n, c, 0, 0, l)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%p : tensor<1x3x2x2x4xf32>) outs(%i1 : tensor<1x3x1x1x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<1x3x1x1x4xf32>
  %t = layout.transform %y {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x1x2x2x4xf32> -> tensor<1x4x2x2xf32>
  %e2 = tensor.empty() : tensor<1x4xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4xf32>) -> tensor<1x4xf32>
  %s2 = linalg.generic {indexing_maps = [#id4, affine_map<(n, c, h, w) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%t : tensor<1x4x2x2xf32>) outs(%i2 : tensor<1x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %o : f32
    linalg.yield %r : f32
  } -> tensor<1x4xf32>
  %u = layout.transform %z {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x1x2x2x4xf32> -> tensor<1x4x2x2xf32>
  %e3 = tensor.empty() : tensor<1x4x2x2xf32>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = #par4} ins(%u : tensor<1x4x2x2xf32>) outs(%e3 : tensor<1x4x2x2xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2xf32>
  func.return %s1, %s2, %t, %n : tensor<1x3x1x1x4xf32>, tensor<1x4xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>
}

// READ THROUGH A CROP: ShuffleNet's branch input, the second half of the channels of a
// tensor, read by a 1x1 conv: the conv reads %x at channel 4 + c; the half is never stored.
// CHECK-LABEL: func.func @crop_into_conv
// CHECK-NOT:     layout.crop
// CHECK:         layout.fused ins(%x, %w : tensor<1x8x2x3xf32>, tensor<3x4x1x1xf32>)
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d4 + 4), (d2 + d5), (d3 + d6))>
func.func @crop_into_conv(%x: tensor<1x8x2x3xf32>, %w: tensor<3x4x1x1xf32>) -> tensor<1x3x2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %k = layout.crop %x {start = array<i64: 0, 4, 0, 0>, sizes = array<i64: 1, 4, 2, 3>} : tensor<1x8x2x3xf32> -> tensor<1x4x2x3xf32>
  %e = tensor.empty() : tensor<1x3x2x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2x3xf32>) -> tensor<1x3x2x3xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%k, %w : tensor<1x4x2x3xf32>, tensor<3x4x1x1xf32>) outs(%init : tensor<1x3x2x3xf32>) -> tensor<1x3x2x3xf32>
  func.return %c : tensor<1x3x2x3xf32>
}

// A CHANNEL SHUFFLE READ THROUGH: the shuffled tensor (8 channels, (C mod 4) * 2 + C
// floordiv 4) is split; the conv reads its half through the shuffle (it reads %x itself),
// and the other half, a crop of the shuffle, becomes one copy kernel reading %x through
// the shuffle: neither the shuffled tensor nor a crop of it is stored.
// CHECK-LABEL: func.func @shuffle_split_read_through
// CHECK-NOT:     layout.transform
// CHECK-NOT:     layout.crop
// CHECK:         %[[H:.*]] = layout.fused ins(%x : tensor<1x8x1x2xf32>) -> tensor<1x4x1x2xf32> {
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, (((d1 mod 2) * 4) + (d1 floordiv 2)), d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-NEXT:      ^{{.*}}(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:        linalg.yield %[[IN]] : f32
// CHECK:         %[[C:.*]] = layout.fused ins(%x, %w : tensor<1x8x1x2xf32>, tensor<3x4x1x1xf32>)
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, ((((d4 mod 2) * 4) + (d4 floordiv 2)) + 2), (d2 + d5), (d3 + d6))>
// CHECK:         func.return %[[H]], %[[C]]
func.func @shuffle_split_read_through(%x: tensor<1x8x1x2xf32>, %w: tensor<3x4x1x1xf32>) -> (tensor<1x4x1x2xf32>, tensor<1x3x1x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = layout.transform %x {index_map = #layout.index_map<(N, C, H, W) -> (N, (C mod 4) * 2 + C floordiv 4, H, W)>} : tensor<1x8x1x2xf32> -> tensor<1x8x1x2xf32>
  %h = layout.crop %s {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 4, 1, 2>} : tensor<1x8x1x2xf32> -> tensor<1x4x1x2xf32>
  %k = layout.crop %s {start = array<i64: 0, 4, 0, 0>, sizes = array<i64: 1, 4, 1, 2>} : tensor<1x8x1x2xf32> -> tensor<1x4x1x2xf32>
  %e = tensor.empty() : tensor<1x3x1x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x1x2xf32>) -> tensor<1x3x1x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%k, %w : tensor<1x4x1x2xf32>, tensor<3x4x1x1xf32>) outs(%init : tensor<1x3x1x2xf32>) -> tensor<1x3x1x2xf32>
  func.return %h, %c : tensor<1x4x1x2xf32>, tensor<1x3x1x2xf32>
}

// NOT ONE COPY: the transform is also returned (it is stored anyway), so its crop stays a
// crop of it; and a blocking transform (4c, it raises the rank) is not read through by the
// sum (its loop would be left inside a floordiv) but its crop still becomes one copy kernel.
// CHECK-LABEL: func.func @relayout_chain_refused
// CHECK:         %[[T:.*]] = layout.transform %x
// CHECK-NEXT:    layout.crop %[[T]]
// CHECK-NOT:     layout.transform
// CHECK:         layout.fused ins(%y : tensor<1x8x1x2xf32>) -> tensor<1x1x1x2x4xf32>
func.func @relayout_chain_refused(%x: tensor<1x8x1x2xf32>, %y: tensor<1x8x1x2xf32>) -> (tensor<1x8x1x2xf32>, tensor<1x4x1x2xf32>, tensor<1x1x1x2x4xf32>) {
  %s = layout.transform %x {index_map = #layout.index_map<(N, C, H, W) -> (N, (C mod 4) * 2 + C floordiv 4, H, W)>} : tensor<1x8x1x2xf32> -> tensor<1x8x1x2xf32>
  %h = layout.crop %s {start = array<i64: 0, 4, 0, 0>, sizes = array<i64: 1, 4, 1, 2>} : tensor<1x8x1x2xf32> -> tensor<1x4x1x2xf32>
  %b = layout.transform %y {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>} : tensor<1x8x1x2xf32> -> tensor<1x2x1x2x4xf32>
  %k = layout.crop %b {start = array<i64: 0, 1, 0, 0, 0>, sizes = array<i64: 1, 1, 1, 2, 4>} : tensor<1x2x1x2x4xf32> -> tensor<1x1x1x2x4xf32>
  func.return %s, %h, %k : tensor<1x8x1x2xf32>, tensor<1x4x1x2xf32>, tensor<1x1x1x2x4xf32>
}

// A pad read only by a relayout chain (fuzz case): the chain becomes a copy group, which
// then reads the pad through its padding, in one run (a second run changes nothing).
// CHECK-LABEL: func.func @pad_into_new_copy
// CHECK-NEXT:    %[[G:.*]] = layout.fused ins(%x : tensor<1xf32>) -> tensor<1x1xf32> {
// CHECK:           layout.pad
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ((d1 + 2))>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:         layout.pad %[[G]]
func.func @pad_into_new_copy(%x: tensor<1xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %v1 = layout.pad %x {low = array<i64: 2>, high = array<i64: 1>, pad_value = 2.5 : f32} : tensor<1xf32> -> tensor<4xf32>
  %v2 = layout.transform %v1 {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 7.0 : f32} : tensor<4xf32> -> tensor<1x4xf32>
  %v3 = layout.crop %v2 {start = array<i64: 0, 2>, sizes = array<i64: 1, 1>, cropped_value = 2.5 : f32} : tensor<1x4xf32> -> tensor<1x1xf32>
  %v4 = layout.pad %v3 {low = array<i64: 2, 2>, high = array<i64: 0, 1>, pad_value = -1.0 : f32} : tensor<1x1xf32> -> tensor<3x4xf32>
  func.return %v4, %v4 : tensor<3x4xf32>, tensor<3x4xf32>
}

// An MLP-Mixer channel MLP's last matmul (64x32 there, 5x3 here) and the residual add that
// restores the batch dimension (writes 1x5x3, reads the matmul at (d1, d2), d0 of extent
// 1): the same element with the unit dimension dropped, so the add is the matmul's
// epilogue (one group, its result 1x5x3).
// CHECK-LABEL: func.func @matmul_then_batched_residual
// CHECK:         %[[G:.*]] = layout.fused ins(
// CHECK-SAME:      -> tensor<1x5x3xf32>
// CHECK:           linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:           linalg.generic {{.*}}ins(%{{.*}}, %{{.*}} : tensor<5x3xf32>, tensor<1x5x3xf32>)
// CHECK:         func.return %[[G]] : tensor<1x5x3xf32>
func.func @matmul_then_batched_residual(%a: tensor<5x7xf32>, %b: tensor<7x3xf32>, %r: tensor<1x5x3xf32>) -> tensor<1x5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<5x7xf32>, tensor<7x3xf32>) outs(%f : tensor<5x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<5x3xf32>
  %e3 = tensor.empty() : tensor<1x5x3xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m, %r : tensor<5x3xf32>, tensor<1x5x3xf32>) outs(%e3 : tensor<1x5x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<1x5x3xf32>
  func.return %t : tensor<1x5x3xf32>
}

// REFUSED: the same rank change, but reading the matmul transposed (the unit dimension
// dropped, (d2, d1) is not (d1, d2)).
// CHECK-LABEL: func.func @matmul_then_transposed_batched_read
// CHECK:         %[[M:.*]] = layout.fused ins(%{{.*}}, %{{.*}} : tensor<3x7xf32>, tensor<7x3xf32>) -> tensor<3x3xf32>
// CHECK:         %[[T:.*]] = linalg.generic {{.*}}ins(%[[M]] : tensor<3x3xf32>)
// CHECK:         func.return %[[T]]
// REMARK: remark: fuse-elementwise: %m is not fused into %t: %m is read at (d2, d1) by a consumer that writes (d0, d1, d2)
func.func @matmul_then_transposed_batched_read(%a: tensor<3x7xf32>, %b: tensor<7x3xf32>) -> tensor<1x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<3x7xf32>, tensor<7x3xf32>) outs(%f : tensor<3x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<3x3xf32>
  %e3 = tensor.empty() : tensor<1x3x3xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m : tensor<3x3xf32>) outs(%e3 : tensor<1x3x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.negf %x : f32
    linalg.yield %s : f32
  } -> tensor<1x3x3xf32>
  func.return %t : tensor<1x3x3xf32>
}

// REFUSED: a rank change into a texture result (the texel lane is the last dimension of
// both tensors, but a texture group stores whole texels from its root's lane loop).
// CHECK-LABEL: func.func @rank_change_into_texture
// CHECK:         %[[M:.*]] = linalg.generic
// CHECK:         %[[T:.*]] = linalg.generic {{.*}}ins(%[[M]] : tensor<2x8x4xf32>)
// CHECK:         func.return %[[T]]
// REMARK: remark: fuse-elementwise: %m is not fused into %t: %m has another rank than its consumer's texture result
func.func @rank_change_into_texture(%a: tensor<2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %e = tensor.empty() : tensor<2x8x4xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j, l) -> (i, j, l)>, affine_map<(i, j, l) -> (i, j, l)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<2x8x4xf32>) outs(%e : tensor<2x8x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%x: f32, %o: f32):
    %s = math.exp %x : f32
    linalg.yield %s : f32
  } -> tensor<2x8x4xf32>
  %e4 = tensor.empty() : tensor<1x2x8x4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%m : tensor<2x8x4xf32>) outs(%e4 : tensor<1x2x8x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%x: f32, %o: f32):
    %s = arith.negf %x : f32
    linalg.yield %s : f32
  } -> tensor<1x2x8x4xf32>
  func.return %t : tensor<1x2x8x4xf32>
}
