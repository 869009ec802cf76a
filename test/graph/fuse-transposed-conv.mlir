// fuse-transposed-conv on IR as torch-mlir prints ConvTranspose2d (the autoencoder_transpose
// model's dec1, at smaller shapes): the weight flipped and transposed by a gather generic,
// the input spread into a zero fill by a strided tensor.insert_slice, a stride-1 conv.
// test/python/test_fuse_transposed_conv.py runs these functions before and after the pass.
// RUN: xdsl-opt %s -p fuse-transposed-conv | filecheck %s
// RUN: xdsl-opt %s -p fuse-transposed-conv,fuse-transposed-conv | filecheck %s
// RUN: xdsl-opt %s -p 'fuse-transposed-conv{remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1) on 4x4: the conv reads
// the input padded by one row/column above (iy = oy floordiv 2 + j reaches 4) and the filter
// split into (phase, tap) axes, 2 taps per phase and axis (the 4th, (1, 1), is the
// transform's zero padding, which the guard scf.if (phase + 2 * tap < 3 on both axes) never
// multiplies); the spread tensor and its fill are gone.
// CHECK-LABEL: func.func @spread_stride2
// CHECK-NOT:     tensor.insert_slice
// CHECK:         %[[XP:.*]] = layout.pad %x {low = array<i64: 0, 0, 0, 0>, high = array<i64: 0, 0, 1, 1>, pad_value = 0.000000e+00 : f32} : tensor<1x3x4x4xf32> -> tensor<1x3x5x5xf32>
// CHECK:         %[[WQ:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(a0, a1, a2, a3) -> (a0, a1, a2 mod 2, a2 floordiv 2, a3 mod 2, a3 floordiv 2)>, pad_value = 0.000000e+00 : f32} : tensor<2x3x3x3xf32> -> tensor<2x3x2x2x2x2xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, (d5 + (d2 floordiv 2)), (d6 + (d3 floordiv 2)))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, ((d2 + 1) mod 2), d5, ((d3 + 1) mod 2), d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[XP]], %[[WQ]] : tensor<1x3x5x5xf32>, tensor<2x3x2x2x2x2xf32>)
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT:      %[[OY:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[JY:.*]] = linalg.index 5 : index
// CHECK-NEXT:      %[[OX:.*]] = linalg.index 3 : index
// CHECK-NEXT:      %[[JX:.*]] = linalg.index 6 : index
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[SJY:.*]] = arith.muli %[[JY]], %[[TWO]] : index
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[OY1:.*]] = arith.addi %[[OY]], %[[ONE]] : index
// CHECK-NEXT:      %[[RY:.*]] = arith.remsi %[[OY1]], %[[TWO]] : index
// CHECK-NEXT:      %[[KY:.*]] = arith.addi %[[SJY]], %[[RY]] : index
// CHECK-NEXT:      %[[K:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[INY:.*]] = arith.cmpi ult, %[[KY]], %[[K]] : index
// CHECK-NEXT:      %[[SJX:.*]] = arith.muli %[[JX]], %[[TWO]] : index
// CHECK-NEXT:      %[[OX1:.*]] = arith.addi %[[OX]], %[[ONE]] : index
// CHECK-NEXT:      %[[RX:.*]] = arith.remsi %[[OX1]], %[[TWO]] : index
// CHECK-NEXT:      %[[KX:.*]] = arith.addi %[[SJX]], %[[RX]] : index
// CHECK-NEXT:      %[[INX:.*]] = arith.cmpi ult, %[[KX]], %[[K]] : index
// CHECK-NEXT:      %[[IN:.*]] = arith.andi %[[INY]], %[[INX]] : i1
// CHECK-NEXT:      %[[R:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK-NEXT:        %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[M]], %[[C]] : f32
// CHECK-NEXT:        scf.yield %[[S]] : f32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[C]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         return
func.func @spread_stride2(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x2x8x8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c2 = arith.constant 2 : index
  %6 = tensor.empty() : tensor<2x3x3x3xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  %8 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%7 : tensor<2x3x3x3xf32>) {
  ^bb0(%out: f32):
    %52 = linalg.index 0 : index
    %53 = linalg.index 1 : index
    %54 = linalg.index 2 : index
    %55 = linalg.index 3 : index
    %56 = arith.subi %c2, %54 : index
    %57 = arith.subi %c2, %55 : index
    %extracted = tensor.extract %w[%53, %52, %56, %57] : tensor<3x2x3x3xf32>
    linalg.yield %extracted : f32
  } -> tensor<2x3x3x3xf32>
  %9 = tensor.empty() : tensor<1x3x10x10xf32>
  %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %inserted_slice = tensor.insert_slice %x into %10[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x4x4xf32> into tensor<1x3x10x10xf32>
  %0 = tensor.empty() : tensor<1x2x8x8xf32>
  %init = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %11 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%inserted_slice, %8 : tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) outs(%init : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %11 : tensor<1x2x8x8xf32>
}

// ConvTranspose2d(3, 2, 3, stride=3, padding=0) on 4x4 (offset 2): one tap per phase,
// r(oy) = (2 - oy) mod 3, iy = oy floordiv 3 (never outside the input: no pad), no tap
// padding (3 divides 3).
// CHECK-LABEL: func.func @spread_stride3
// CHECK-NOT:     tensor.insert_slice
// CHECK-NOT:     layout.pad
// CHECK:         %[[WQ:.*]] = layout.transform %{{.*}} {index_map = #layout.index_map<(a0, a1, a2, a3) -> (a0, a1, a2 mod 3, a2 floordiv 3, a3 mod 3, a3 floordiv 3)>} : tensor<2x3x3x3xf32> -> tensor<2x3x3x1x3x1xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, (d5 + (d2 floordiv 3)), (d6 + (d3 floordiv 3)))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, (((d2 * -1) + 2) mod 3), d5, (((d3 * -1) + 2) mod 3), d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], {{.*}} ins(%x, %[[WQ]] : tensor<1x3x4x4xf32>, tensor<2x3x3x1x3x1xf32>)
// CHECK-NOT:     scf.if
// CHECK:         return
func.func @spread_stride3(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x2x12x12xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c2 = arith.constant 2 : index
  %6 = tensor.empty() : tensor<2x3x3x3xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  %8 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%7 : tensor<2x3x3x3xf32>) {
  ^bb0(%out: f32):
    %52 = linalg.index 0 : index
    %53 = linalg.index 1 : index
    %54 = linalg.index 2 : index
    %55 = linalg.index 3 : index
    %56 = arith.subi %c2, %54 : index
    %57 = arith.subi %c2, %55 : index
    %extracted = tensor.extract %w[%53, %52, %56, %57] : tensor<3x2x3x3xf32>
    linalg.yield %extracted : f32
  } -> tensor<2x3x3x3xf32>
  %9 = tensor.empty() : tensor<1x3x14x14xf32>
  %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x3x14x14xf32>) -> tensor<1x3x14x14xf32>
  %inserted_slice = tensor.insert_slice %x into %10[0, 0, 2, 2] [1, 3, 4, 4] [1, 1, 3, 3] : tensor<1x3x4x4xf32> into tensor<1x3x14x14xf32>
  %0 = tensor.empty() : tensor<1x2x12x12xf32>
  %init = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x12x12xf32>) -> tensor<1x2x12x12xf32>
  %11 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%inserted_slice, %8 : tensor<1x3x14x14xf32>, tensor<2x3x3x3xf32>) outs(%init : tensor<1x2x12x12xf32>) -> tensor<1x2x12x12xf32>
  return %11 : tensor<1x2x12x12xf32>
}

// Refused: the fill is 1.0, not zero (the spread positions are not zeros).
// CHECK-LABEL: func.func @fill_not_zero
// CHECK:         tensor.insert_slice
// CHECK:         linalg.conv_2d_nchw_fchw
// REMARK: remark: fuse-transposed-conv: {{.*}}left alone: the fill value is 1.000000e+00 : f32, not +0.0
func.func @fill_not_zero(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x2x8x8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c2 = arith.constant 2 : index
  %6 = tensor.empty() : tensor<2x3x3x3xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  %8 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%7 : tensor<2x3x3x3xf32>) {
  ^bb0(%out: f32):
    %52 = linalg.index 0 : index
    %53 = linalg.index 1 : index
    %54 = linalg.index 2 : index
    %55 = linalg.index 3 : index
    %56 = arith.subi %c2, %54 : index
    %57 = arith.subi %c2, %55 : index
    %extracted = tensor.extract %w[%53, %52, %56, %57] : tensor<3x2x3x3xf32>
    linalg.yield %extracted : f32
  } -> tensor<2x3x3x3xf32>
  %9 = tensor.empty() : tensor<1x3x10x10xf32>
  %10 = linalg.fill ins(%one : f32) outs(%9 : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %inserted_slice = tensor.insert_slice %x into %10[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x4x4xf32> into tensor<1x3x10x10xf32>
  %0 = tensor.empty() : tensor<1x2x8x8xf32>
  %init = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %11 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%inserted_slice, %8 : tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) outs(%init : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %11 : tensor<1x2x8x8xf32>
}

// Refused: -0.0 would give -0.0 where the source sums to +0.0 (bit-exactness).
// CHECK-LABEL: func.func @fill_negative_zero
// CHECK:         tensor.insert_slice
// REMARK: remark: fuse-transposed-conv: {{.*}}left alone: the fill value is -0.000000e+00 : f32, not +0.0
func.func @fill_negative_zero(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x2x8x8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %neg = arith.constant -0.000000e+00 : f32
  %c2 = arith.constant 2 : index
  %6 = tensor.empty() : tensor<2x3x3x3xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  %8 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%7 : tensor<2x3x3x3xf32>) {
  ^bb0(%out: f32):
    %52 = linalg.index 0 : index
    %53 = linalg.index 1 : index
    %54 = linalg.index 2 : index
    %55 = linalg.index 3 : index
    %56 = arith.subi %c2, %54 : index
    %57 = arith.subi %c2, %55 : index
    %extracted = tensor.extract %w[%53, %52, %56, %57] : tensor<3x2x3x3xf32>
    linalg.yield %extracted : f32
  } -> tensor<2x3x3x3xf32>
  %9 = tensor.empty() : tensor<1x3x10x10xf32>
  %10 = linalg.fill ins(%neg : f32) outs(%9 : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %inserted_slice = tensor.insert_slice %x into %10[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x4x4xf32> into tensor<1x3x10x10xf32>
  %0 = tensor.empty() : tensor<1x2x8x8xf32>
  %init = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %11 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%inserted_slice, %8 : tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) outs(%init : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %11 : tensor<1x2x8x8xf32>
}

// Refused: an offset known only at run time.
// CHECK-LABEL: func.func @dynamic_offset
// CHECK:         tensor.insert_slice %x into %{{.*}}[0, 0, %i, 1]
// CHECK:         linalg.conv_2d_nchw_fchw
// REMARK: remark: fuse-transposed-conv: {{.*}}left alone: the insert's offsets, sizes or strides are not static
func.func @dynamic_offset(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>, %i: index) -> (tensor<1x2x8x8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c2 = arith.constant 2 : index
  %6 = tensor.empty() : tensor<2x3x3x3xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  %8 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%7 : tensor<2x3x3x3xf32>) {
  ^bb0(%out: f32):
    %52 = linalg.index 0 : index
    %53 = linalg.index 1 : index
    %54 = linalg.index 2 : index
    %55 = linalg.index 3 : index
    %56 = arith.subi %c2, %54 : index
    %57 = arith.subi %c2, %55 : index
    %extracted = tensor.extract %w[%53, %52, %56, %57] : tensor<3x2x3x3xf32>
    linalg.yield %extracted : f32
  } -> tensor<2x3x3x3xf32>
  %9 = tensor.empty() : tensor<1x3x10x10xf32>
  %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %inserted_slice = tensor.insert_slice %x into %10[0, 0, %i, 1] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x4x4xf32> into tensor<1x3x10x10xf32>
  %0 = tensor.empty() : tensor<1x2x8x8xf32>
  %init = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %11 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%inserted_slice, %8 : tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) outs(%init : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %11 : tensor<1x2x8x8xf32>
}

// Refused: the conv has stride 2 (it reads every other spread row, not oy + ky).
// CHECK-LABEL: func.func @conv_stride2
// CHECK:         tensor.insert_slice
// CHECK:         linalg.conv_2d_nchw_fchw
// REMARK: remark: fuse-transposed-conv: {{.*}}left alone: spread axis 2 is read at {{.*}}, not oy + ky (stride 1, dilation 1)
func.func @conv_stride2(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x2x4x4xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c2 = arith.constant 2 : index
  %6 = tensor.empty() : tensor<2x3x3x3xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  %8 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%7 : tensor<2x3x3x3xf32>) {
  ^bb0(%out: f32):
    %52 = linalg.index 0 : index
    %53 = linalg.index 1 : index
    %54 = linalg.index 2 : index
    %55 = linalg.index 3 : index
    %56 = arith.subi %c2, %54 : index
    %57 = arith.subi %c2, %55 : index
    %extracted = tensor.extract %w[%53, %52, %56, %57] : tensor<3x2x3x3xf32>
    linalg.yield %extracted : f32
  } -> tensor<2x3x3x3xf32>
  %9 = tensor.empty() : tensor<1x3x10x10xf32>
  %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %inserted_slice = tensor.insert_slice %x into %10[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x4x4xf32> into tensor<1x3x10x10xf32>
  %0 = tensor.empty() : tensor<1x2x4x4xf32>
  %init = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %11 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%inserted_slice, %8 : tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) outs(%init : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %11 : tensor<1x2x4x4xf32>
}

// Refused: the zero fill is also returned (it must exist in memory).
// CHECK-LABEL: func.func @fill_read_elsewhere
// CHECK:         tensor.insert_slice
// CHECK:         linalg.conv_2d_nchw_fchw
// REMARK: remark: fuse-transposed-conv: {{.*}}left alone: the insert's destination is not a linalg.fill read by it alone
func.func @fill_read_elsewhere(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x3x10x10xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c2 = arith.constant 2 : index
  %6 = tensor.empty() : tensor<2x3x3x3xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  %8 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%7 : tensor<2x3x3x3xf32>) {
  ^bb0(%out: f32):
    %52 = linalg.index 0 : index
    %53 = linalg.index 1 : index
    %54 = linalg.index 2 : index
    %55 = linalg.index 3 : index
    %56 = arith.subi %c2, %54 : index
    %57 = arith.subi %c2, %55 : index
    %extracted = tensor.extract %w[%53, %52, %56, %57] : tensor<3x2x3x3xf32>
    linalg.yield %extracted : f32
  } -> tensor<2x3x3x3xf32>
  %9 = tensor.empty() : tensor<1x3x10x10xf32>
  %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %inserted_slice = tensor.insert_slice %x into %10[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x4x4xf32> into tensor<1x3x10x10xf32>
  %0 = tensor.empty() : tensor<1x2x8x8xf32>
  %init = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %11 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%inserted_slice, %8 : tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) outs(%init : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %11, %10 : tensor<1x2x8x8xf32>, tensor<1x3x10x10xf32>
}

// Refused: the spread tensor is also returned.
// CHECK-LABEL: func.func @spread_read_elsewhere
// CHECK:         tensor.insert_slice
// CHECK:         linalg.conv_2d_nchw_fchw
// REMARK: remark: fuse-transposed-conv: {{.*}}left alone: the spread tensor is read by other ops than the conv's data operand
func.func @spread_read_elsewhere(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x3x10x10xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c2 = arith.constant 2 : index
  %6 = tensor.empty() : tensor<2x3x3x3xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  %8 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%7 : tensor<2x3x3x3xf32>) {
  ^bb0(%out: f32):
    %52 = linalg.index 0 : index
    %53 = linalg.index 1 : index
    %54 = linalg.index 2 : index
    %55 = linalg.index 3 : index
    %56 = arith.subi %c2, %54 : index
    %57 = arith.subi %c2, %55 : index
    %extracted = tensor.extract %w[%53, %52, %56, %57] : tensor<3x2x3x3xf32>
    linalg.yield %extracted : f32
  } -> tensor<2x3x3x3xf32>
  %9 = tensor.empty() : tensor<1x3x10x10xf32>
  %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %inserted_slice = tensor.insert_slice %x into %10[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x4x4xf32> into tensor<1x3x10x10xf32>
  %0 = tensor.empty() : tensor<1x2x8x8xf32>
  %init = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %11 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%inserted_slice, %8 : tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) outs(%init : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %11, %inserted_slice : tensor<1x2x8x8xf32>, tensor<1x3x10x10xf32>
}

// Left alone: every stride 1 (a padded conv, nothing spread).
// CHECK-LABEL: func.func @not_spread
// CHECK:         tensor.insert_slice
// CHECK:         linalg.conv_2d_nchw_fchw
// REMARK: remark: fuse-transposed-conv: {{.*}}left alone: no axis is spread (every stride is 1)
func.func @not_spread(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x2x8x8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c2 = arith.constant 2 : index
  %6 = tensor.empty() : tensor<2x3x3x3xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<2x3x3x3xf32>) -> tensor<2x3x3x3xf32>
  %8 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%7 : tensor<2x3x3x3xf32>) {
  ^bb0(%out: f32):
    %52 = linalg.index 0 : index
    %53 = linalg.index 1 : index
    %54 = linalg.index 2 : index
    %55 = linalg.index 3 : index
    %56 = arith.subi %c2, %54 : index
    %57 = arith.subi %c2, %55 : index
    %extracted = tensor.extract %w[%53, %52, %56, %57] : tensor<3x2x3x3xf32>
    linalg.yield %extracted : f32
  } -> tensor<2x3x3x3xf32>
  %9 = tensor.empty() : tensor<1x3x10x10xf32>
  %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %inserted_slice = tensor.insert_slice %x into %10[0, 0, 2, 2] [1, 3, 4, 4] [1, 1, 1, 1] : tensor<1x3x4x4xf32> into tensor<1x3x10x10xf32>
  %0 = tensor.empty() : tensor<1x2x8x8xf32>
  %init = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %11 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%inserted_slice, %8 : tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) outs(%init : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %11 : tensor<1x2x8x8xf32>
}

