// One behaviour of legalize-layout per function. test/python/test_legalize_layout.py runs
// every function with the graph evaluator and its legalized host function (after
// apply-layout) with the buffer evaluator, and compares.
// RUN: xdsl-opt %s -p legalize-layout | filecheck %s
// RUN: xdsl-opt %s -p legalize-layout,legalize-layout | filecheck %s
// RUN: xdsl-opt %s -p legalize-layout,verify-buffers,apply-layout,verify-buffers > /dev/null

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#id5 = affine_map<(n, c, h, w, b) -> (n, c, h, w, b)>
#id2 = affine_map<(i, j) -> (i, j)>
#tr2 = affine_map<(i, j) -> (j, i)>

// Elementwise: one parallel loop nest; the result is written straight into the
// out-parameter %result0 (no allocation); the outer constant becomes a kernel constant.
// CHECK-LABEL: func.func @relu_generic_r
// CHECK-SAME:    (%[[X:.*]]: !layout.buffer<1x8x4x4xf32>, %[[OUT:.*]]: !layout.buffer<1x8x4x4xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.parallel (%[[N:.*]], %[[C:.*]], %[[H:.*]], %[[W:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT:      %[[V:.*]] = layout.load %[[X]][%[[N]], %[[C]], %[[H]], %[[W]]] : !layout.buffer<1x8x4x4xf32>, f32
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[V]], %[[ZERO]] : f32
// CHECK-NEXT:      layout.store %[[M]], %[[OUT]][%[[N]], %[[C]], %[[H]], %[[W]]] : !layout.buffer<1x8x4x4xf32>, f32
// CHECK-NEXT:      scf.reduce
// CHECK-LABEL: func.func @relu
// CHECK-SAME:    (%[[X:.*]]: !layout.buffer<1x8x4x4xf32>, %[[OUT:.*]]: !layout.buffer<1x8x4x4xf32>)
// CHECK-NEXT:    func.call @relu_generic_r(%[[X]], %[[OUT]])
// CHECK-NEXT:    func.return
func.func @relu(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x8x4x4xf32>) outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x4x4xf32>
  func.return %r : tensor<1x8x4x4xf32>
}

// Broadcast: the bias is loaded at its indexing map (c, 0, 0); the dense bias constant
// is a kernel that stores its elements into an allocation.
// CHECK-LABEL: func.func @bias_constant_bias
// CHECK-SAME:    (%[[DST:.*]]: !layout.buffer<3x1x1xf32>)
// CHECK-COUNT-3: layout.store %{{.*}}, %[[DST]][%{{.*}}, %{{.*}}, %{{.*}}] : !layout.buffer<3x1x1xf32>, f32
// CHECK-LABEL: func.func @bias_generic_a
// CHECK-SAME:    (%[[X:.*]]: !layout.buffer<1x3x2x2xf32>, %[[B:.*]]: !layout.buffer<3x1x1xf32>, %[[OUT:.*]]: !layout.buffer<1x3x2x2xf32>)
// CHECK:         scf.parallel (%[[N:.*]], %[[C:.*]], %[[H:.*]], %[[W:.*]]) = ({{.*}}) to ({{.*}}) step ({{.*}}) {
// CHECK-NEXT:      %[[V:.*]] = layout.load %[[X]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[BV:.*]] = layout.load %[[B]][%[[C]], %[[Z]], %[[Z]]]
// CHECK-NEXT:      arith.addf %[[V]], %[[BV]] : f32
// CHECK-LABEL: func.func @bias(
// CHECK-NEXT:    %[[P:.*]] = layout.allocate [3, 1, 1] : !layout.ptr<f32>
// CHECK-NEXT:    %[[BIAS:.*]] = layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<3x1x1xf32>
// CHECK-NEXT:    func.call @bias_constant_bias(%[[BIAS]])
// CHECK-NEXT:    func.call @bias_generic_a(%{{.*}}, %[[BIAS]], %{{.*}})
func.func @bias(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32> {
  %bias = arith.constant dense<[[[0.5]], [[-1.5]], [[2.25]]]> : tensor<3x1x1xf32>
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %a = linalg.generic {indexing_maps = [#id4, affine_map<(n, c, h, w) -> (c, 0, 0)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %bias : tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) outs(%e : tensor<1x3x2x2xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x3x2x2xf32>
  func.return %a : tensor<1x3x2x2xf32>
}

// A named convolution takes the generic path (xDSL's generalization): the fill is a kernel
// of its own; the conv reads its init and carries the accumulator through its three
// reduction loops (strides 2 appear in the input's indices).
// CHECK-LABEL: func.func @conv_generic_f
// CHECK:         layout.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : !layout.buffer<1x4x3x3xf32>, f32
// CHECK-LABEL: func.func @conv_generic_c
// CHECK-SAME:    (%[[X:.*]]: !layout.buffer<1x6x7x7xf32>, %[[WT:.*]]: !layout.buffer<4x6x3x3xf32>, %[[INIT:.*]]: !layout.buffer<1x4x3x3xf32>, %[[OUT:.*]]: !layout.buffer<1x4x3x3xf32>)
// CHECK:         scf.parallel (%[[N:.*]], %[[F:.*]], %[[OH:.*]], %[[OW:.*]]) = ({{.*}}) to ({{.*}}) step ({{.*}}) {
// CHECK-NEXT:      %[[ACC:.*]] = layout.load %[[INIT]][%[[N]], %[[F]], %[[OH]], %[[OW]]]
// CHECK-NEXT:      %[[R:.*]] = scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A0:.*]] = %[[ACC]]) -> (f32) {
// CHECK-NEXT:        scf.for %[[KH:.*]] = {{.*}} iter_args(%[[A1:.*]] = %[[A0]]) -> (f32) {
// CHECK-NEXT:          scf.for %[[KW:.*]] = {{.*}} iter_args(%[[A2:.*]] = %[[A1]]) -> (f32) {
// CHECK:                 %[[IH:.*]] = arith.addi %{{.*}}, %[[KH]] : index
// CHECK:                 %[[IW:.*]] = arith.addi %{{.*}}, %[[KW]] : index
// CHECK-NEXT:            %[[XV:.*]] = layout.load %[[X]][%[[N]], %[[C]], %[[IH]], %[[IW]]]
// CHECK-NEXT:            %[[WV:.*]] = layout.load %[[WT]][%[[F]], %[[C]], %[[KH]], %[[KW]]]
// CHECK-NEXT:            %[[P:.*]] = arith.mulf %[[XV]], %[[WV]] : f32
// CHECK-NEXT:            %[[S:.*]] = arith.addf %[[P]], %[[A2]] : f32
// CHECK-NEXT:            scf.yield %[[S]] : f32
// CHECK:           layout.store %[[R]], %[[OUT]][%[[N]], %[[F]], %[[OH]], %[[OW]]]
// CHECK-LABEL: func.func @conv(
// CHECK-NEXT:    %[[P:.*]] = layout.allocate [1, 4, 3, 3] : !layout.ptr<f32>
// CHECK-NEXT:    %[[FILL:.*]] = layout.decl_buffer %[[P]]
// CHECK-NEXT:    func.call @conv_generic_f(%[[FILL]])
// CHECK-NEXT:    func.call @conv_generic_c(%{{.*}}, %{{.*}}, %[[FILL]], %{{.*}})
func.func @conv(%x: tensor<1x6x7x7xf32>, %w: tensor<4x6x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x6x7x7xf32>, tensor<4x6x3x3xf32>) outs(%f : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return %c : tensor<1x4x3x3xf32>
}

// A padded transform (C = 6 -> NCHW4c): storage in the transformed shape, declared plainly
// for readers and with the pending layout (and pad value) for the copy kernel, which
// iterates over the source box.
// CHECK-LABEL: func.func @padded_transform_transform_xt
// CHECK-SAME:    (%[[SRC:.*]]: !layout.buffer<1x6x2x2xf32>, %[[DST:.*]]: !layout.buffer<1x6x2x2xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.000000e+00 : f32>)
// CHECK:         scf.parallel (%[[I0:.*]], %[[I1:.*]], %[[I2:.*]], %[[I3:.*]]) = ({{.*}}) to ({{.*}}) step ({{.*}}) {
// CHECK-NEXT:      %[[V:.*]] = layout.load %[[SRC]][%[[I0]], %[[I1]], %[[I2]], %[[I3]]]
// CHECK-NEXT:      layout.store %[[V]], %[[DST]][%[[I0]], %[[I1]], %[[I2]], %[[I3]]]
// CHECK-LABEL: func.func @padded_transform(
// CHECK-SAME:    %[[X:.*]]: !layout.buffer<1x6x2x2xf32>, %[[OUT:.*]]: !layout.buffer<1x2x2x2x4xf32>)
// CHECK-NEXT:    %[[PTR:.*]] = layout.data %[[OUT]] : !layout.buffer<1x2x2x2x4xf32> -> !layout.ptr<f32>
// CHECK-NEXT:    %[[VIEW:.*]] = layout.decl_buffer %[[PTR]] : !layout.ptr<f32> -> !layout.buffer<1x6x2x2xf32, transform = {{.*}}, pad_value = 0.000000e+00 : f32>
// CHECK-NEXT:    func.call @padded_transform_transform_xt(%[[X]], %[[VIEW]])
func.func @padded_transform(%x: tensor<1x6x2x2xf32>) -> tensor<1x2x2x2x4xf32> {
  %xt = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32} : tensor<1x6x2x2xf32> -> tensor<1x2x2x2x4xf32>
  func.return %xt : tensor<1x2x2x2x4xf32>
}

// Scopes: a producer's `layout.scope` places its storage; a texture output whose innermost
// axis is a parallel loop of extent 4 iterates that loop as an inner `scf.for` (a texel
// lane loop, for vectorize-texels); a transform into a texture is an scf.for nest (for
// apply-layout{rewrite-loops=true}). The out-parameter stays global: the texture result is
// copied into it.
// CHECK-LABEL: func.func @scopes_transform_xt
// CHECK-SAME:    %{{.*}}: !layout.buffer<1x8x2x2xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">)
// CHECK-COUNT-4: scf.for
// CHECK-NOT:     scf.parallel
// CHECK-LABEL: func.func @scopes_generic_r
// CHECK-SAME:    (%[[XT:.*]]: !layout.buffer<1x2x2x2x4xf32, scope = "global.texture">, %[[R:.*]]: !layout.buffer<1x2x2x2x4xf32, scope = "global.texture">)
// CHECK:         scf.parallel (%[[N:.*]], %[[C:.*]], %[[H:.*]], %[[W:.*]]) = ({{.*}}) to ({{.*}}) step ({{.*}}) {
// CHECK-NEXT:      scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        layout.load %[[XT]][%[[N]], %[[C]], %[[H]], %[[W]], %[[L]]]
// CHECK-LABEL: func.func @scopes_copy_r
// CHECK-SAME:    (%{{.*}}: !layout.buffer<1x2x2x2x4xf32, scope = "global.texture">, %{{.*}}: !layout.buffer<1x2x2x2x4xf32>)
// CHECK-LABEL: func.func @scopes(
// CHECK-NEXT:    layout.allocate [1, 2, 2, 2, 4] : !layout.ptr<f32, scope = "global.texture">
// CHECK:         layout.allocate [1, 2, 2, 2, 4] : !layout.ptr<f32, scope = "global.texture">
// CHECK:         func.call @scopes_generic_r
// CHECK-NEXT:    func.call @scopes_copy_r
func.func @scopes(%x: tensor<1x8x2x2xf32>) -> tensor<1x2x2x2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %xt = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, layout.scope = "global.texture"} : tensor<1x8x2x2xf32> -> tensor<1x2x2x2x4xf32>
  %e = tensor.empty() : tensor<1x2x2x2x4xf32>
  %r = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%xt : tensor<1x2x2x2x4xf32>) outs(%e : tensor<1x2x2x2x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x2x2x4xf32>
  func.return %r : tensor<1x2x2x2x4xf32>
}

// pad and crop: a pad fills its destination with the pad value, then copies the source at
// offset `low`; a crop copies the window at `start`.
// CHECK-LABEL: func.func @pad_crop_pad_p
// CHECK:         %[[PAD:.*]] = arith.constant -1.000000e+00 : f32
// CHECK:         layout.store %[[PAD]], %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<5x7xf32>, f32
// CHECK:         %[[V:.*]] = layout.load %{{.*}}[%[[I:.*]], %[[J:.*]]] : !layout.buffer<3x4xf32>, f32
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[I1:.*]] = arith.addi %[[I]], %[[ONE]] : index
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[J2:.*]] = arith.addi %[[J]], %[[TWO]] : index
// CHECK-NEXT:    layout.store %[[V]], %{{.*}}[%[[I1]], %[[J2]]] : !layout.buffer<5x7xf32>, f32
// CHECK-LABEL: func.func @pad_crop_crop_c
// CHECK:         layout.load %{{.*}} : !layout.buffer<5x7xf32>, f32
// CHECK:         layout.store %{{.*}} : !layout.buffer<2x3xf32>, f32
func.func @pad_crop(%x: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %p = layout.pad %x {low = array<i64: 1, 2>, high = array<i64: 1, 1>, pad_value = -1.0 : f32} : tensor<3x4xf32> -> tensor<5x7xf32>
  %c = layout.crop %p {start = array<i64: 2, 1>, sizes = array<i64: 2, 3>} : tensor<5x7xf32> -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}

// Results that are arguments, or returned twice, are copied into their out-parameters (the
// two copies are one kernel: equal up to their names).
// CHECK-NOT:     func.func @returns_copy_x
// CHECK-LABEL: func.func @returns(
// CHECK-SAME:    %[[X:.*]]: !layout.buffer<4xf32>, %[[R0:.*]]: !layout.buffer<4xf32>, %[[R1:.*]]: !layout.buffer<4xf32>, %[[R2:.*]]: !layout.buffer<4xf32>)
// CHECK-NEXT:    func.call @returns_generic_n(%[[X]], %[[R0]])
// CHECK-NEXT:    func.call @returns_copy_n(%[[R0]], %[[R1]])
// CHECK-NEXT:    func.call @returns_copy_n(%[[X]], %[[R2]])
func.func @returns(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  func.return %n, %n, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A scalar argument used in a body is a scalar kernel parameter; linalg.index becomes
// the loop variable.
// CHECK-LABEL: func.func @scalar_and_index_generic_r
// CHECK-SAME:    (%[[OUT:.*]]: !layout.buffer<2x3xf32>, %[[S:.*]]: f32)
// CHECK:         scf.parallel (%[[I:.*]], %[[J:.*]]) = ({{.*}}) to ({{.*}}) step ({{.*}}) {
// CHECK-NEXT:      %[[K:.*]] = arith.index_cast %[[J]] : index to i32
// CHECK-LABEL: func.func @scalar_and_index(
// CHECK-SAME:    %[[S:.*]]: f32, %[[OUT:.*]]: !layout.buffer<2x3xf32>)
// CHECK-NEXT:    func.call @scalar_and_index_generic_r(%[[OUT]], %[[S]])
func.func @scalar_and_index(%s: f32) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<2x3xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 1 : index
    %k = arith.index_cast %j : index to i32
    %f = arith.sitofp %k : i32 to f32
    %m = arith.mulf %f, %s : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// An output map that does not cover the output (column 0 only): the init is copied into
// the result first, which the kernel then updates in place.
// CHECK-LABEL: func.func @partial_copy_col
// CHECK-LABEL: func.func @partial_generic_col
// CHECK-SAME:    (%[[X:.*]]: !layout.buffer<3xf32>, %[[OUT:.*]]: !layout.buffer<3x2xf32>)
// CHECK:         layout.load %[[OUT]]
// CHECK:         layout.store %{{.*}}, %[[OUT]]
// CHECK-LABEL: func.func @partial(
// CHECK-SAME:    %[[X:.*]]: !layout.buffer<3xf32>, %[[Y:.*]]: !layout.buffer<3x2xf32>, %[[OUT:.*]]: !layout.buffer<3x2xf32>)
// CHECK-NEXT:    func.call @partial_copy_col(%[[Y]], %[[OUT]])
// CHECK-NEXT:    func.call @partial_generic_col(%[[X]], %[[OUT]])
func.func @partial(%x: tensor<3xf32>, %y: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %col = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i, 0)>], iterator_types = ["parallel"]} ins(%x : tensor<3xf32>) outs(%y : tensor<3x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<3x2xf32>
  func.return %col : tensor<3x2xf32>
}

// A full reduction into a rank-0 tensor: its buffer has shape [1]; no parallel loop.
// CHECK-LABEL: func.func @sum_generic_s
// CHECK-SAME:    (%[[X:.*]]: !layout.buffer<5xf32>, %[[INIT:.*]]: !layout.buffer<1xf32>, %[[OUT:.*]]: !layout.buffer<1xf32>)
// CHECK-NOT:     scf.parallel
// CHECK:         %[[A:.*]] = layout.load %[[INIT]][%[[Z:.*]]] : !layout.buffer<1xf32>, f32
// CHECK-NEXT:    %[[R:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[A]]) -> (f32) {
// CHECK:         layout.store %[[R]], %[[OUT]][%[[Z]]]
func.func @sum(%x: tensor<5xf32>, %init: tensor<f32>) -> tensor<f32> {
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<5xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %o, %a : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  func.return %s : tensor<f32>
}

// Kernels equal up to their names are one kernel called twice (%a and %b); a kernel that
// differs only in its element type (%h, f16), a constant (%c, %d), an indexing map (%t) or a
// memory scope (%s) is a kernel of its own.
// CHECK-NOT:     func.func @equal_kernels_generic_b(
// CHECK-LABEL: func.func @equal_kernels_generic_a(
// CHECK-SAME:      !layout.buffer<4x4xf32>, %{{.*}}: !layout.buffer<4x4xf32>)
// CHECK-NOT:     func.func @equal_kernels_generic_b(
// CHECK-LABEL: func.func @equal_kernels_generic_h(
// CHECK-SAME:      !layout.buffer<4x4xf16>, %{{.*}}: !layout.buffer<4x4xf16>)
// CHECK-LABEL: func.func @equal_kernels_generic_c(
// CHECK:           arith.constant 1.000000e+00 : f32
// CHECK-LABEL: func.func @equal_kernels_generic_d(
// CHECK:           arith.constant 2.000000e+00 : f32
// CHECK-LABEL: func.func @equal_kernels_generic_t(
// CHECK-LABEL: func.func @equal_kernels_generic_s(
// CHECK-SAME:      scope = "global.texture">)
// CHECK-LABEL: func.func @equal_kernels(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<4x4xf32>, %[[XH:[^:]*]]: !layout.buffer<4x4xf16>, %[[R0:[^:]*]]: !layout.buffer<4x4xf32>, %[[R1:[^:]*]]: !layout.buffer<4x4xf16>)
// CHECK:         func.call @equal_kernels_generic_a(%[[X]], %[[A:[^)]*]])
// CHECK:         func.call @equal_kernels_generic_a(%[[A]], %[[B:[^)]*]])
// CHECK-NEXT:    func.call @equal_kernels_generic_h(%[[XH]], %[[R1]])
// CHECK:         func.call @equal_kernels_generic_c(%[[B]], %[[C:[^)]*]])
// CHECK:         func.call @equal_kernels_generic_d(%[[C]], %{{[^)]*}})
// CHECK:         func.call @equal_kernels_generic_t(
// CHECK:         func.call @equal_kernels_generic_s(
// CHECK-NEXT:    func.call @equal_kernels_copy_s(
func.func @equal_kernels(%x: tensor<4x4xf32>, %xh: tensor<4x4xf16>) -> (tensor<4x4xf32>, tensor<4x4xf16>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %eh = tensor.empty() : tensor<4x4xf16>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %h = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xh : tensor<4x4xf16>) outs(%eh : tensor<4x4xf16>) {
  ^bb0(%v: f16, %o: f16):
    %n = arith.negf %v : f16
    linalg.yield %n : f16
  } -> tensor<4x4xf16>
  %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.addf %v, %one : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %d = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.addf %v, %two : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#tr2, #id2], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) attrs = {layout.scope = "global.texture"} {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  func.return %s, %h : tensor<4x4xf32>, tensor<4x4xf16>
}
