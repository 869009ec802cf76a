// One behaviour of convert-layout per function; test/python/test_convert_layout.py runs every
// function before and after (and after flow + fold) with the graph evaluator.
// RUN: xdsl-opt %s -p convert-layout | filecheck %s
// RUN: xdsl-opt %s -p convert-layout | xdsl-opt -p convert-layout | filecheck %s
// RUN: xdsl-opt %s -p 'convert-layout{allow-padding=false}' 2>/dev/null | filecheck %s --check-prefix=NOPAD
// RUN: xdsl-opt %s -p 'convert-layout{allow-padding=false}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: xdsl-opt %s -p 'convert-layout{desired-layouts="conv2d=NHWC,OHWI,NHWC"}' | filecheck %s --check-prefix=NHWC
// RUN: xdsl-opt %s -p convert-layout 2>&1 >/dev/null | filecheck %s --check-prefix=DEFAULT-REMARK

// 8 -> 8 channels: no padding. The conv becomes a frozen generic over the NCHW4c output
// (n, f4, oh, ow, f) and the reductions (c, kh, kw), between layout rewrites.
// CHECK-LABEL: func.func @conv8
// CHECK-SAME:    (%[[X:.*]]: tensor<1x8x6x6xf32>, %[[W:.*]]: tensor<8x8x3x3xf32>)
// CHECK:         %[[XT:.*]] = layout.transform %[[X]] {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>} : tensor<1x8x6x6xf32> -> tensor<1x2x6x6x4xf32>
// CHECK-NEXT:    %[[WT:.*]] = layout.transform %[[W]] {index_map = #layout.index_map<(O, I, H, W) -> (O floordiv 4, I, H, W, O mod 4)>} : tensor<8x8x3x3xf32> -> tensor<2x8x3x3x4xf32>
// CHECK-NEXT:    %[[IT:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>} : tensor<1x8x4x4xf32> -> tensor<1x2x4x4x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, (d5 floordiv 4), (d6 + d2), (d7 + d3), (d5 mod 4))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d5, d6, d7, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[XT]], %[[WT]] : tensor<1x2x6x6x4xf32>, tensor<2x8x3x3x4xf32>) outs(%[[IT]] : tensor<1x2x4x4x4xf32>) attrs = {layout.frozen}
// CHECK:         %[[B:.*]] = layout.transform %[[Y]] {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C * 4 + c, H, W)>} : tensor<1x2x4x4x4xf32> -> tensor<1x8x4x4xf32>
// CHECK-NEXT:    func.return %[[B]]
// NOPAD-LABEL: func.func @conv8
// NOPAD:         attrs = {layout.frozen}
// NHWC-LABEL: func.func @conv8
// NHWC:          layout.transform %{{.*}} {index_map = #layout.index_map<(N, C, H, W) -> (N, H, W, C)>}
// NHWC:          layout.transform %{{.*}} {index_map = #layout.index_map<(O, I, H, W) -> (O, H, W, I)>}
// NHWC:          linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d5 + d1), (d6 + d2), d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d5, d6, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]
func.func @conv8(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %c : tensor<1x8x4x4xf32>
}

// 6 channels: the transforms pad with 0.0, the init with its fill value (here 1.5), and the
// rewrite back crops the padded channels with the promise that they hold the fill value.
// CHECK-LABEL: func.func @conv6
// CHECK:         layout.transform %{{.*}} {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<1x6x5x5xf32> -> tensor<1x2x5x5x4xf32>
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<(O, I, H, W) -> (O floordiv 4, I, H, W, O mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<6x6x3x3xf32> -> tensor<2x6x3x3x4xf32>
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<(N, C, H, W) -> (N, C floordiv 4, H, W, C mod 4)>, pad_value = 1.500000e+00 : f32} : tensor<1x6x3x3xf32> -> tensor<1x2x3x3x4xf32>
// CHECK:         %[[B:.*]] = layout.transform %{{.*}} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
// CHECK-NEXT:    %[[C:.*]] = layout.crop %[[B]] {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 6, 3, 3>, cropped_value = 1.500000e+00 : f32} : tensor<1x8x3x3xf32> -> tensor<1x6x3x3xf32>
// CHECK-NEXT:    func.return %[[C]]
// NOPAD-LABEL: func.func @conv6
// NOPAD:         linalg.conv_2d_nchw_fchw
// REMARK: remark: convert-layout: linalg.conv_2d_nchw_fchw %c left unconverted: its shapes [[1, 6, 5, 5], [6, 6, 3, 3], [1, 6, 3, 3]] need padding for NCHW4c, OIHW4o, NCHW4c and allow-padding=false
func.func @conv6(%x: tensor<1x6x5x5xf32>, %w: tensor<6x6x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %v = arith.constant 1.5 : f32
  %e = tensor.empty() : tensor<1x6x3x3xf32>
  %f = linalg.fill ins(%v : f32) outs(%e : tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x5x5xf32>, tensor<6x6x3x3xf32>) outs(%f : tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32>
  func.return %c : tensor<1x6x3x3xf32>
}

// A convolution written as linalg.generic, reduction loops first, strides 2 and dilations
// 2: recognized from its maps and body; the blocked maps keep the strides.
// CHECK-LABEL: func.func @generic_strided
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, (d5 floordiv 4), ((d6 * 2) + (d2 * 2)), ((d7 * 2) + (d3 * 2)), (d5 mod 4))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d5, d6, d7, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>]
// CHECK-SAME:    attrs = {layout.frozen}
// CHECK-NEXT:    ^{{.*}}(%[[XV:.*]]: f32, %[[WV:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[WV]], %[[XV]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
func.func @generic_strided(%x: tensor<2x4x9x9xf32>, %w: tensor<4x4x2x2xf32>, %init: tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %y = linalg.generic {indexing_maps = [
      affine_map<(c, kh, kw, n, f, oh, ow) -> (n, c, oh * 2 + kh * 2, ow * 2 + kw * 2)>,
      affine_map<(c, kh, kw, n, f, oh, ow) -> (f, c, kh, kw)>,
      affine_map<(c, kh, kw, n, f, oh, ow) -> (n, f, oh, ow)>],
    iterator_types = ["reduction", "reduction", "reduction", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %w : tensor<2x4x9x9xf32>, tensor<4x4x2x2xf32>) outs(%init : tensor<2x4x3x3xf32>) {
  ^bb0(%xv: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %wv, %xv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x3x3xf32>
  func.return %y : tensor<2x4x3x3xf32>
}

// 3 input channels (an RGB image): only the input pads (its padded channels are never
// read: the reduction runs over the 3 real ones); 4 output channels need no crop.
// CHECK-LABEL: func.func @rgb
// CHECK:         layout.transform %{{.*}}, pad_value = 0.000000e+00 : f32} : tensor<1x3x4x4xf32> -> tensor<1x1x4x4x4xf32>
// CHECK-NEXT:    layout.transform %{{.*}} : tensor<4x3x1x1xf32> -> tensor<1x3x1x1x4xf32>
// CHECK-NOT:     layout.crop
// CHECK:         func.return
// NOPAD-LABEL: func.func @rgb
// NOPAD:         linalg.conv_2d_nchw_fchw
// REMARK-NEXT: remark: convert-layout: linalg.conv_2d_nchw_fchw %c left unconverted: its shapes [[1, 3, 4, 4], [4, 3, 1, 1], [1, 4, 4, 4]] need padding
func.func @rgb(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<4x3x1x1xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %c : tensor<1x4x4x4xf32>
}

// The RFC's shapes, smaller spatially: 64 -> 32 channels.
// CHECK-LABEL: func.func @rfc
// CHECK:         layout.transform %{{.*}} : tensor<2x64x6x6xf32> -> tensor<2x16x6x6x4xf32>
// CHECK-NEXT:    layout.transform %{{.*}} : tensor<32x64x3x3xf32> -> tensor<8x64x3x3x4xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8x4x4x4xf32>) attrs = {layout.frozen}
func.func @rfc(%x: tensor<2x64x6x6xf32>, %w: tensor<32x64x3x3xf32>) -> tensor<2x32x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x32x4x4xf32>) -> tensor<2x32x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x64x6x6xf32>, tensor<32x64x3x3xf32>) outs(%f : tensor<2x32x4x4xf32>) -> tensor<2x32x4x4xf32>
  func.return %c : tensor<2x32x4x4xf32>
}

// Not convolutions: a max-accumulating body (pooling-like) and an already frozen generic
// are left alone.
// CHECK-LABEL: func.func @not_a_conv
// CHECK-NOT:     layout.transform
// CHECK:         arith.maximumf
// CHECK-NOT:     layout.transform
// CHECK:         func.return
func.func @not_a_conv(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x1x1xf32>, %init: tensor<1x4x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %y = linalg.generic {indexing_maps = [
      affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>,
      affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>,
      affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>],
    iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) outs(%init : tensor<1x4x4x4xf32>) {
  ^bb0(%xv: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %xv, %wv : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x4xf32>
  %z = linalg.generic {indexing_maps = [
      affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>,
      affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>,
      affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>],
    iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) outs(%init : tensor<1x4x4x4xf32>) attrs = {layout.frozen} {
  ^bb0(%xv: f32, %wv: f32, %acc: f32):
    %p = arith.mulf %xv, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x4xf32>
  func.return %y, %z : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}

// A mixed-precision conv (to-mixed-precision: f16 data and filter, f32 accumulator) with 6
// channels: each padded transform pads with a zero of its operand's element type (an f32
// pad value on an f16 tensor used to leave the conv unconverted).
// CHECK-LABEL: func.func @mixed_precision_padded
// CHECK:         layout.transform %{{.*}} pad_value = 0.000000e+00 : f16} : tensor<1x6x5x5xf16> -> tensor<1x2x5x5x4xf16>
// CHECK:         layout.transform %{{.*}} pad_value = 0.000000e+00 : f16} : tensor<6x6x3x3xf16> -> tensor<2x6x3x3x4xf16>
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<1x2x5x5x4xf16>, tensor<2x6x3x3x4xf16>) outs(%{{.*}} : tensor<1x2x3x3x4xf32>)
func.func @mixed_precision_padded(%x: tensor<1x6x5x5xf16>, %w: tensor<6x6x3x3xf16>) -> tensor<1x6x3x3xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x6x3x3xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>, affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x6x5x5xf16>, tensor<6x6x3x3xf16>) outs(%1 : tensor<1x6x3x3xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ae = arith.extf %a : f16 to f32
    %be = arith.extf %b : f16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x6x3x3xf32>
  func.return %2 : tensor<1x6x3x3xf32>
}

// A grouped conv as torch-mlir prints it (groups=2, 8 -> 16 channels, stride 2): expand the
// NCHW input and the OIHW filter into groups, conv_2d_ngchw_gfchw, collapse the result.
// The group axis folds into the channels (g * 4 + c of the data, g * 8 + f of the filter
// and the output), so the three transforms are the conv2d layouts of the ungrouped tensors
// (after raise + fold the expands cancel with them); output block q1 reads the data of
// group q1 floordiv 2, and the result is split back into groups.
// CHECK-LABEL: func.func @grouped
// CHECK:         layout.transform %{{.*}} {index_map = #layout.index_map<(N, G, C, H, W) -> (N, G + C floordiv 4, H, W, C mod 4)>} : tensor<1x2x4x9x9xf32> -> tensor<1x2x9x9x4xf32>
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<(G, O, I, H, W) -> (G * 2 + O floordiv 4, I, H, W, O mod 4)>} : tensor<2x8x4x3x3xf32> -> tensor<4x4x3x3x4xf32>
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<(N, G, C, H, W) -> (N, G * 2 + C floordiv 4, H, W, C mod 4)>} : tensor<1x2x8x4x4xf32> -> tensor<1x4x4x4x4xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, ((d5 floordiv 4) + (d1 floordiv 2)), ((d2 * 2) + d6), ((d3 * 2) + d7), (d5 mod 4))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d5, d6, d7, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>]
// CHECK-SAME:    attrs = {layout.frozen}
// CHECK:         layout.transform %{{.*}} {index_map = #layout.index_map<(N, C, H, W, c) -> (N, C floordiv 2, (C mod 2) * 4 + c, H, W)>} : tensor<1x4x4x4x4xf32> -> tensor<1x2x8x4x4xf32>
// CHECK-NEXT:    tensor.collapse_shape
// NHWC-LABEL: func.func @grouped
// NHWC:          layout.transform %{{.*}} {index_map = #layout.index_map<(N, G, C, H, W) -> (N, H, W, G * 4 + C)>}
// NHWC-NEXT:     layout.transform %{{.*}} {index_map = #layout.index_map<(G, O, I, H, W) -> (G * 8 + O, H, W, I)>}
// NHWC:          attrs = {layout.frozen}
// NHWC:          layout.transform %{{.*}} {index_map = #layout.index_map<(N, H, W, C) -> (N, C floordiv 8, C mod 8, H, W)>}
func.func @grouped(%x: tensor<1x8x7x7xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<1x16x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %cst : f32
  } : tensor<1x8x7x7xf32> to tensor<1x8x9x9xf32>
  %xe = tensor.expand_shape %padded [[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 9, 9] : tensor<1x8x9x9xf32> into tensor<1x2x4x9x9xf32>
  %we = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 8, 4, 3, 3] : tensor<16x4x3x3xf32> into tensor<2x8x4x3x3xf32>
  %e = tensor.empty() : tensor<1x2x8x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x2x8x4x4xf32>) -> tensor<1x2x8x4x4xf32>
  %g = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%xe, %we : tensor<1x2x4x9x9xf32>, tensor<2x8x4x3x3xf32>) outs(%f : tensor<1x2x8x4x4xf32>) -> tensor<1x2x8x4x4xf32>
  %y = tensor.collapse_shape %g [[0], [1, 2], [3], [4]] : tensor<1x2x8x4x4xf32> into tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}

// Groups of 2 output channels (groups=2, 4 -> 4 channels): one texel of the output holds
// both groups, so lane f reads the data at channel (f floordiv 2) * 2 + c.
// CHECK-LABEL: func.func @grouped_narrow
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, (d1 + ((((d4 floordiv 2) * 2) + d5) floordiv 4)), (d6 + d2), (d7 + d3), ((((d4 floordiv 2) * 2) + d5) mod 4))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d5, d6, d7, d4)>
// CHECK-SAME:    attrs = {layout.frozen}
func.func @grouped_narrow(%x: tensor<1x2x2x5x5xf32>, %w: tensor<2x2x2x3x3xf32>) -> tensor<1x2x2x3x3xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x2x2x3x3xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x2x2x3x3xf32>) -> tensor<1x2x2x3x3xf32>
  %g = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x2x5x5xf32>, tensor<2x2x2x3x3xf32>) outs(%f : tensor<1x2x2x3x3xf32>) -> tensor<1x2x2x3x3xf32>
  func.return %g : tensor<1x2x2x3x3xf32>
}

// Three groups of two output channels: the 6 channels would pad, and padded channels of a
// grouped output name no (group, channel) pair: left unconverted, with a remark.
// CHECK-LABEL: func.func @grouped_padded
// CHECK:         linalg.conv_2d_ngchw_gfchw
// DEFAULT-REMARK: remark: convert-layout: linalg.conv_2d_ngchw_gfchw %g left unconverted: its output channels G * 2 + C (groups of [1, 3, 2, 3, 3]) would need padding for NCHW4c
func.func @grouped_padded(%x: tensor<1x3x2x5x5xf32>, %w: tensor<3x2x2x3x3xf32>) -> tensor<1x3x2x3x3xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x3x2x3x3xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x3x2x3x3xf32>) -> tensor<1x3x2x3x3xf32>
  %g = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x2x5x5xf32>, tensor<3x2x2x3x3xf32>) outs(%f : tensor<1x3x2x3x3xf32>) -> tensor<1x3x2x3x3xf32>
  func.return %g : tensor<1x3x2x3x3xf32>
}

// A TensorFlow-style conv (NHWC data, HWCF filter, 6 -> 5 channels, dilation 2): each
// operand is read in its own axis order; the output pads 5 -> 8 channels and is cropped.
// CHECK-LABEL: func.func @nhwc
// CHECK:         layout.transform %{{.*}} {index_map = #layout.index_map<(N, H, W, C) -> (N, C floordiv 4, H, W, C mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<1x7x7x6xf32> -> tensor<1x2x7x7x4xf32>
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<(H, W, I, O) -> (O floordiv 4, I, H, W, O mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<2x2x6x5xf32> -> tensor<2x6x2x2x4xf32>
// CHECK-NEXT:    layout.transform %{{.*}} {index_map = #layout.index_map<(N, H, W, C) -> (N, C floordiv 4, H, W, C mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<1x5x5x5xf32> -> tensor<1x2x5x5x4xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, (d7 floordiv 4), ((d5 * 2) + d2), ((d6 * 2) + d3), (d7 mod 4))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d7, d5, d6, d4)>
// CHECK:         layout.transform %{{.*}} {index_map = #layout.index_map<(N, C, H, W, c) -> (N, H, W, C * 4 + c)>} : tensor<1x2x5x5x4xf32> -> tensor<1x5x5x8xf32>
// CHECK-NEXT:    layout.crop %{{.*}} {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 5, 5, 5>, cropped_value = 0.000000e+00 : f32}
// NOPAD-LABEL: func.func @nhwc
// NOPAD:         linalg.conv_2d_nhwc_hwcf
// NHWC-LABEL: func.func @nhwc
// NHWC:          layout.transform %{{.*}} {index_map = #layout.index_map<(N, H, W, C) -> (N, H, W, C)>}
func.func @nhwc(%x: tensor<1x7x7x6xf32>, %w: tensor<2x2x6x5xf32>) -> tensor<1x5x5x5xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x5x5x5xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x5x5x5xf32>) -> tensor<1x5x5x5xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x7x7x6xf32>, tensor<2x2x6x5xf32>) outs(%f : tensor<1x5x5x5xf32>) -> tensor<1x5x5x5xf32>
  func.return %c : tensor<1x5x5x5xf32>
}

// A depthwise conv (torch-mlir's depthwise_conv_2d_nchw_chw, 6 channels): each channel is a
// group of one input and one output channel; the CHW filter gets a unit I axis in OIHW4o.
// CHECK-LABEL: func.func @depthwise
// CHECK:         layout.transform %{{.*}} {index_map = #layout.index_map<(G, H, W) -> (G floordiv 4, 0, H, W, G mod 4)>, pad_value = 0.000000e+00 : f32} : tensor<6x3x3xf32> -> tensor<2x1x3x3x4xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, (d5 + d2), (d6 + d3), d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, 0, d5, d6, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK:         layout.crop
func.func @depthwise(%x: tensor<1x6x5x5xf32>, %w: tensor<6x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x6x3x3xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x6x5x5xf32>, tensor<6x3x3xf32>) outs(%f : tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32>
  func.return %c : tensor<1x6x3x3xf32>
}

// A grouped conv with a 1x1 output (stride 2 over a 2x2 input padded to 4x4, regnet's last
// stage): the unit output axes stay loops of the access (oh * 2 + kh), so the blocked
// generic verifies (a bare kh would index the 4 input rows with a 3-row filter loop).
// CHECK-LABEL: func.func @grouped_unit_output
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, (d1 + (d5 floordiv 4)), ((d2 * 2) + d6), ((d3 * 2) + d7), (d5 mod 4))>
// CHECK-SAME:    attrs = {layout.frozen}
func.func @grouped_unit_output(%x: tensor<1x2x4x4x4xf32>, %w: tensor<2x4x4x3x3xf32>) -> tensor<1x2x4x1x1xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x2x4x1x1xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x2x4x1x1xf32>) -> tensor<1x2x4x1x1xf32>
  %g = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x2x4x4x4xf32>, tensor<2x4x4x3x3xf32>) outs(%f : tensor<1x2x4x1x1xf32>) -> tensor<1x2x4x1x1xf32>
  func.return %g : tensor<1x2x4x1x1xf32>
}
