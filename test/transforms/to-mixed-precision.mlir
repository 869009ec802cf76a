// RUN: xdsl-opt %s -p to-mixed-precision | filecheck %s
// RUN: xdsl-opt %s -p to-mixed-precision,to-mixed-precision | filecheck %s
// RUN: xdsl-opt %s -p 'to-mixed-precision{accumulate="conv,matmul"}' | filecheck %s --check-prefix=NOACC
// RUN: xdsl-opt %s -p 'to-mixed-precision{keep-io-f32=false}' | filecheck %s --check-prefix=IO
// RUN: xdsl-opt %s -p 'to-mixed-precision{params-f16=true}' | filecheck %s --check-prefix=PARAMS
// RUN: xdsl-opt %s -p 'to-mixed-precision{params-f16=true},to-mixed-precision{params-f16=true}' | filecheck %s --check-prefix=PARAMS
// RUN: not physlayout-opt %s -p 'to-mixed-precision{accumulate="conv,softmax"}' 2>&1 | filecheck %s --check-prefix=BAD

// BAD: to-mixed-precision: unknown accumulate kind(s) ['softmax']; the kinds are conv, matmul, pooling, reduction

// conv -> relu: the parameters stay f32 (no cast kernel at the entry): the conv reads them
// and rounds each element to f16 where it reads it (truncf, then extf: the rounding a cast
// at the entry would do), accumulates into its f32 init (the fill stays f32); its f32
// result is rounded the same way by the relu that reads it (no cast kernel after the
// conv), which computes in f32 and rounds its result into f16 storage; the result is
// widened back to f32 for the return.
// CHECK-LABEL: func.func @conv_relu(
// CHECK-SAME:      %[[X:.*]]: tensor<1x8x6x6xf32>, %[[W:.*]]: tensor<4x8x3x3xf32>) -> tensor<1x4x4x4xf32> {
// CHECK-NOT:     outs(%{{.*}} : tensor<1x8x6x6xf16>)
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK:         %[[ACC:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[X]], %[[W]] : tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>) outs(%[[INIT]] : tensor<1x4x4x4xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[XV:.*]]: f32, %[[WV:.*]]: f32, %[[AV:.*]]: f32):
// CHECK-NEXT:      %[[XT:.*]] = arith.truncf %[[XV]] : f32 to f16
// CHECK-NEXT:      %[[XE:.*]] = arith.extf %[[XT]] : f16 to f32
// CHECK-NEXT:      %[[WT:.*]] = arith.truncf %[[WV]] : f32 to f16
// CHECK-NEXT:      %[[WE:.*]] = arith.extf %[[WT]] : f16 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[XE]], %[[WE]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[P]], %[[AV]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NEXT:    } -> tensor<1x4x4x4xf32>
// CHECK-NOT:     arith.truncf %{{.*}} : f32 to f16
// CHECK:         %[[RELU:.*]] = linalg.generic {{.*}} ins(%[[ACC]] : tensor<1x4x4x4xf32>) outs(%{{.*}} : tensor<1x4x4x4xf16>) {
// CHECK-NEXT:    ^{{.*}}(%[[V:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[VT:.*]] = arith.truncf %[[V]] : f32 to f16
// CHECK-NEXT:      %[[VE:.*]] = arith.extf %[[VT]] : f16 to f32
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[VE]], %{{.*}} : f32
// CHECK-NEXT:      %[[RT:.*]] = arith.truncf %[[R]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[RT]] : f16
// CHECK:         %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[RELU]] : tensor<1x4x4x4xf16>) outs(%{{.*}} : tensor<1x4x4x4xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[O:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT:      %[[OE:.*]] = arith.extf %[[O]] : f16 to f32
// CHECK-NEXT:      linalg.yield %[[OE]] : f32
// CHECK:         func.return %[[OUT]] : tensor<1x4x4x4xf32>
// IO-LABEL:    func.func @conv_relu(
// IO-SAME:         %{{.*}}: tensor<1x8x6x6xf16>, %{{.*}}: tensor<4x8x3x3xf16>) -> tensor<1x4x4x4xf16> {
// IO-NOT:        arith.extf %{{.*}} : f16 to f32{{$}}
// IO:            linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x4x4xf32>)
// IO:            func.return %{{.*}} : tensor<1x4x4x4xf16>
func.func @conv_relu(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x4x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv : tensor<1x4x4x4xf32>) outs(%e2 : tensor<1x4x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x4xf32>
  func.return %relu : tensor<1x4x4x4xf32>
}

// A matmul accumulates in f32 (named ops become generics), its result rounded by the op
// reading it; a bias constant is stored in f16 (its values rounded); the row sum (a
// reduction generic) accumulates in f32 and is returned as it is (f32, not rounded). With
// accumulate="conv,matmul" the row sum accumulates in f16 storage: its output is f16 and
// each partial sum is rounded (truncf before the yield).
// CHECK-LABEL: func.func @matmul_bias_rowsum(
// CHECK:         %[[MM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<3x5xf32>, tensor<5x7xf32>) outs(%{{.*}} : tensor<3x7xf32>)
// CHECK:           arith.truncf
// CHECK-NEXT:      arith.extf
// CHECK:         %[[B:.*]] = arith.constant dense<[9.997560e-02, 1.999510e-01, 3.000490e-01, 3.999020e-01, 5.000000e-01, 6.000980e-01, 7.001950e-01]> : tensor<7xf16>
// CHECK:         %[[ADD:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[B]] : tensor<3x7xf32>, tensor<7xf16>) outs(%{{.*}} : tensor<3x7xf16>)
// CHECK-NEXT:    ^{{.*}}(%[[MV:.*]]: f32, %{{.*}}: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[MT:.*]] = arith.truncf %[[MV]] : f32 to f16
// CHECK-NEXT:      arith.extf %[[MT]] : f16 to f32
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[ADD]] : tensor<3x7xf16>) outs(%{{.*}} : tensor<3xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[E:.*]]: f16, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[EE:.*]] = arith.extf %[[E]] : f16 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[EE]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         func.return %[[SUM]] : tensor<3xf32>
// NOACC-LABEL: func.func @matmul_bias_rowsum(
// NOACC:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<3x7xf16>) outs(%{{.*}} : tensor<3xf16>) {
// NOACC-NEXT:    ^{{.*}}(%[[E:.*]]: f16, %[[ACC:.*]]: f16):
// NOACC-NEXT:      %[[EE:.*]] = arith.extf %[[E]] : f16 to f32
// NOACC-NEXT:      %[[AE:.*]] = arith.extf %[[ACC]] : f16 to f32
// NOACC-NEXT:      %[[S:.*]] = arith.addf %[[AE]], %[[EE]] : f32
// NOACC-NEXT:      %[[ST:.*]] = arith.truncf %[[S]] : f32 to f16
// NOACC-NEXT:      linalg.yield %[[ST]] : f16
func.func @matmul_bias_rowsum(%a: tensor<3x5xf32>, %b: tensor<5x7xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x7xf32>) -> tensor<3x7xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<3x5xf32>, tensor<5x7xf32>) outs(%init : tensor<3x7xf32>) -> tensor<3x7xf32>
  %bias = arith.constant dense<[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]> : tensor<7xf32>
  %add = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %bias : tensor<3x7xf32>, tensor<7xf32>) outs(%e : tensor<3x7xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<3x7xf32>
  %es = tensor.empty() : tensor<3xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%es : tensor<3xf32>) -> tensor<3xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%add : tensor<3x7xf32>) outs(%sinit : tensor<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  func.return %sum : tensor<3xf32>
}

// Only f32 is converted: an f64 and an i32 graph are left alone. A data-movement op
// (tensor.collapse_shape) of an f16 tensor moves f16; a tensor.extract of an f16 tensor
// reads the f16 element and widens the scalar (no cast generic).
// CHECK-LABEL: func.func @others(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<4xf64>) outs(%{{.*}} : tensor<4xf64>)
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: f64, %{{.*}}: f64):
// CHECK-NEXT:      arith.negf %{{.*}} : f64
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<4xi32>) outs(%{{.*}} : tensor<4xi32>)
// CHECK:         %[[N:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2xf16>)
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[N]] {{.*}} : tensor<2x2xf16> into tensor<4xf16>
// CHECK:         %[[E:.*]] = tensor.extract %[[N]]{{\[}}%{{.*}}, %{{.*}}] : tensor<2x2xf16>
// CHECK-NEXT:    %[[EW:.*]] = arith.extf %[[E]] : f16 to f32
// CHECK:         %[[CW:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<4xf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:         func.return %{{.*}}, %{{.*}}, %[[CW]], %[[EW]] : tensor<4xf64>, tensor<4xi32>, tensor<4xf32>, f32
func.func @others(%d: tensor<4xf64>, %i: tensor<4xi32>, %f: tensor<2x2xf32>) -> (tensor<4xf64>, tensor<4xi32>, tensor<4xf32>, f32) {
  %ed = tensor.empty() : tensor<4xf64>
  %nd = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%d : tensor<4xf64>) outs(%ed : tensor<4xf64>) {
  ^bb0(%x: f64, %o: f64):
    %n = arith.negf %x : f64
    linalg.yield %n : f64
  } -> tensor<4xf64>
  %ei = tensor.empty() : tensor<4xi32>
  %ni = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%i : tensor<4xi32>) outs(%ei : tensor<4xi32>) {
  ^bb0(%x: i32, %o: i32):
    %n = arith.addi %x, %x : i32
    linalg.yield %n : i32
  } -> tensor<4xi32>
  %ef = tensor.empty() : tensor<2x2xf32>
  %nf = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%f : tensor<2x2xf32>) outs(%ef : tensor<2x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<2x2xf32>
  %c = tensor.collapse_shape %nf [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %k = arith.constant 0 : index
  %s = tensor.extract %nf[%k, %k] : tensor<2x2xf32>
  func.return %nd, %ni, %c, %s : tensor<4xf64>, tensor<4xi32>, tensor<4xf32>, f32
}

// Data movement carries f16: the relu's f16 result is padded in f16 (the pad value an f16
// constant) and concatenated with a parameter, which (being f32) is rounded by a cast; a
// parameter reshaped by expand_shape stays f32 and the op reading it rounds it in its body.
// CHECK-LABEL: func.func @data_movement(
// CHECK-SAME:      %[[A:.*]]: tensor<1x2x4x4xf32>, %[[B:.*]]: tensor<1x2x6x6xf32>, %[[S:.*]]: tensor<2xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[SX:.*]] : tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) outs(%{{.*}} : tensor<1x2x4x4xf16>) {
// CHECK-NEXT:    ^{{.*}}(%[[AV:.*]]: f32, %[[SV:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT:      %[[AT:.*]] = arith.truncf %[[AV]] : f32 to f16
// CHECK-NEXT:      arith.extf %[[AT]] : f16 to f32
// CHECK-NEXT:      %[[ST:.*]] = arith.truncf %[[SV]] : f32 to f16
// CHECK-NEXT:      arith.extf %[[ST]] : f16 to f32
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f16
// CHECK:         %[[P:.*]] = tensor.pad %[[R]] low[0, 0, 1, 1] high[0, 0, 1, 1] {
// CHECK:           tensor.yield %[[Z]] : f16
// CHECK-NEXT:    } : tensor<1x2x4x4xf16> to tensor<1x2x6x6xf16>
// CHECK:         %[[BH:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<1x2x6x6xf32>) outs(%{{.*}} : tensor<1x2x6x6xf16>)
// CHECK:         %[[CAT:.*]] = tensor.concat dim(1) %[[P]], %[[BH]] : (tensor<1x2x6x6xf16>, tensor<1x2x6x6xf16>) -> tensor<1x4x6x6xf16>
// CHECK:         linalg.generic {{.*}} ins(%[[CAT]] : tensor<1x4x6x6xf16>) outs(%{{.*}} : tensor<1x4x6x6xf32>)
func.func @data_movement(%a: tensor<1x2x4x4xf32>, %b: tensor<1x2x6x6xf32>, %s: tensor<2xf32>) -> tensor<1x4x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %sx = tensor.expand_shape %s [[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c, 0, 0)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a, %sx : tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%v: f32, %k: f32, %o: f32):
    %m = arith.mulf %v, %k : f32
    %r0 = arith.maximumf %m, %zero : f32
    linalg.yield %r0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x2x4x4xf32> to tensor<1x2x6x6xf32>
  %cat = tensor.concat dim(1) %p, %b : (tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %cat : tensor<1x4x6x6xf32>
}

// params-f16: a conv with a bias broadcast into its init, as torch-mlir prints it. The
// weight (an argument but the first, which the conv reads rounded) is rounded once by a
// cast at the entry and read as f16 (the body's truncf is gone: the same values); the bias
// is read in f32 by the broadcast into the f32 accumulator, so it stays f32; the input %x
// (the first argument) is rounded where it is read, as without the option.
// PARAMS-LABEL: func.func @conv_bias(
// PARAMS-SAME:      %[[X:.*]]: tensor<1x3x5x5xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[B:.*]]: tensor<4xf32>)
// PARAMS:         %[[WH:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<4x3x3x3xf32>) outs(%{{.*}} : tensor<4x3x3x3xf16>) {
// PARAMS-NEXT:    ^{{.*}}(%[[WV:.*]]: f32, %{{.*}}: f16):
// PARAMS-NEXT:      %[[WT:.*]] = arith.truncf %[[WV]] : f32 to f16
// PARAMS-NEXT:      linalg.yield %[[WT]] : f16
// PARAMS-NOT:     outs(%{{.*}} : tensor<4xf16>)
// PARAMS:         linalg.broadcast ins(%[[B]]:tensor<4xf32>) outs(%{{.*}}:tensor<1x4x3x3xf32>)
// PARAMS:         ins(%[[X]], %[[WH]] : tensor<1x3x5x5xf32>, tensor<4x3x3x3xf16>)
// PARAMS-NEXT:    ^{{.*}}(%[[XV:.*]]: f32, %[[HV:.*]]: f16, %{{.*}}: f32):
// PARAMS-NEXT:      %[[XT:.*]] = arith.truncf %[[XV]] : f32 to f16
// PARAMS-NEXT:      %[[XE:.*]] = arith.extf %[[XT]] : f16 to f32
// PARAMS-NEXT:      %{{.*}} = arith.extf %[[HV]] : f16 to f32
func.func @conv_bias(%x: tensor<1x3x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x3x3xf32> {
  %e = tensor.empty() : tensor<1x4x3x3xf32>
  %bias = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e : tensor<1x4x3x3xf32>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x5x5xf32>, tensor<4x3x3x3xf32>) outs(%bias : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return %c : tensor<1x4x3x3xf32>
}
