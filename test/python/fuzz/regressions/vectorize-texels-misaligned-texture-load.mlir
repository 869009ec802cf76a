// Regression, fixed: vectorize-texels turned a lane loop whose texture load straddles two
// texels (column 3 * p0 + lane after re-iteration) into one vector<4xf32> load, which
// verify-buffers rejects; such loads are now gathered lane by lane. Found by the
// 10,000-program campaign:
// fuzz buffer program (minimized): opencl-pipeline -> MISMATCH (1 program(s) in this class)
// detail: verify-buffers rejects the output: verify-buffers: vector<4xf32> load from texture buffer of type !layout.buffer<1x8xf32, axis_separators = [1], scope = "global.texture"> may cross a texel boundary (its innermost index mod 4 lies in [0, 3])
// class: buffer | opencl-pipeline | mismatch | verify-buffers rejects the output: verify-buffers: vector<NxfN> load from texture buffer of type BUFFER may cross a texel boundary (its innermost index mod N li
// features used: item3_small_padded_tiles, item4_padded_texels, item5_invariant_loads
// re-check: PYTHONPATH=test/python python -m fuzz.campaign --check THIS_FILE
// fuzz-functions: [{"name": "k0", "param_types": ["!layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (i | j)>>", "!layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (j floordiv 4 | i, j mod 4)>, pad_value = 2.500000e+00 : f32, scope = \"global.texture\">"], "written_params": [0], "allocates": false, "calls": false, "result": false}, {"name": "k1", "param_types": ["!layout.buffer<3x2xf32, transform = [#layout.index_map<(i, j) -> ((i * 2) * 2, j ceildiv 6, j mod 6)>, #layout.index_map<(a, b, c) -> (a, b floordiv 3, c, b mod 3)>], pad_value = 7.0 : f32, scope = \"shared\">", "!layout.buffer<3xf32, transform = #layout.index_map<(i) -> (i * 2)>, pad_value = 2.500000e+00 : f32>"], "written_params": [0], "allocates": false, "calls": false, "result": false}, {"name": "k2", "param_types": ["!layout.buffer<3x2xf32>", "!layout.buffer<2x3xf32, axis_separators = [1]>", "!layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (i | j)>>", "!layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (j floordiv 4 | i, j mod 4)>, pad_value = 2.500000e+00 : f32, scope = \"global.texture\">"], "written_params": [1, 2], "allocates": true, "calls": true, "result": false}]
func.func @k0(%a0: !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (i | j)>>, %a1: !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (j floordiv 4 | i, j mod 4)>, pad_value = 2.500000e+00 : f32, scope = "global.texture">) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %f0 = arith.constant 5.000000e-01 : f32
  "affine.parallel"() <{lowerBoundsGroups = dense<1> : vector<2xi32>, lowerBoundsMap = affine_map<() -> (0, 0)>, reductions = [], steps = [1, 1], upperBoundsGroups = dense<1> : vector<2xi32>, upperBoundsMap = affine_map<() -> (3, 2)>}> ({
  ^bb0(%i1: index, %i2: index):
    %t3 = arith.addi %i1, %c1 : index
    %t4 = arith.minsi %t3, %c2 : index
    %v5 = layout.load %a1[%i2, %t4] : !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (j floordiv 4 | i, j mod 4)>, pad_value = 2.500000e+00 : f32, scope = "global.texture">, f32
    %v6 = layout.load %a1[%i2, %i1] : !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (j floordiv 4 | i, j mod 4)>, pad_value = 2.500000e+00 : f32, scope = "global.texture">, f32
    %v7 = layout.load %a0[%i2, %i1] : !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (i | j)>>, f32
    %v8 = arith.addf %v5, %v6 : f32
    %v9 = arith.maximumf %v8, %v7 : f32
    %v10 = arith.mulf %v9, %f0 : f32
    layout.store %v10, %a0[%i2, %i1] : !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (i | j)>>, f32
    "affine.yield"() : () -> ()
  }) : () -> ()
  func.return
}

func.func @k1(%a0: !layout.buffer<3x2xf32, transform = [#layout.index_map<(i, j) -> ((i * 2) * 2, j ceildiv 6, j mod 6)>, #layout.index_map<(a, b, c) -> (a, b floordiv 3, c, b mod 3)>], pad_value = 7.0 : f32, scope = "shared">, %a1: !layout.buffer<3xf32, transform = #layout.index_map<(i) -> (i * 2)>, pad_value = 2.500000e+00 : f32>) {
  "affine.parallel"() <{lowerBoundsGroups = dense<1> : vector<2xi32>, lowerBoundsMap = affine_map<() -> (0, 0)>, reductions = [], steps = [1, 1], upperBoundsGroups = dense<1> : vector<2xi32>, upperBoundsMap = affine_map<() -> (2, 3)>}> ({
  ^bb0(%i1: index, %i2: index):
    %v3 = layout.load %a1[%i2] : !layout.buffer<3xf32, transform = #layout.index_map<(i) -> (i * 2)>, pad_value = 2.500000e+00 : f32>, f32
    layout.store %v3, %a0[%i2, %i1] : !layout.buffer<3x2xf32, transform = [#layout.index_map<(i, j) -> ((i * 2) * 2, j ceildiv 6, j mod 6)>, #layout.index_map<(a, b, c) -> (a, b floordiv 3, c, b mod 3)>], pad_value = 7.0 : f32, scope = "shared">, f32
    "affine.yield"() : () -> ()
  }) : () -> ()
  func.return
}

func.func @k2(%a0: !layout.buffer<3x2xf32>, %a1: !layout.buffer<2x3xf32, axis_separators = [1]>, %a2: !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (i | j)>>, %a3: !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (j floordiv 4 | i, j mod 4)>, pad_value = 2.500000e+00 : f32, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  "affine.parallel"() <{lowerBoundsGroups = dense<1> : vector<2xi32>, lowerBoundsMap = affine_map<() -> (1, 0)>, reductions = [], steps = [1, 1], upperBoundsGroups = dense<1> : vector<2xi32>, upperBoundsMap = affine_map<() -> (2, 3)>}> ({
  ^bb0(%i1: index, %i2: index):
    %v3 = layout.load %a0[%i2, %i1] : !layout.buffer<3x2xf32>, f32
    layout.store %v3, %a1[%i1, %i2] : !layout.buffer<2x3xf32, axis_separators = [1]>, f32
    "affine.yield"() : () -> ()
  }) : () -> ()
  func.call @k0(%a2, %a3) : (!layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (i | j)>>, !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (j floordiv 4 | i, j mod 4)>, pad_value = 2.500000e+00 : f32, scope = "global.texture">) -> ()
  %p4 = layout.allocate [2, 3] : !layout.ptr<f32>
  %b5 = layout.decl_buffer %p4 : !layout.ptr<f32> -> !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (i, i + j)>, pad_value = -1.0 : f32>
  %v6 = layout.load %a1[%c1, %c2] : !layout.buffer<2x3xf32, axis_separators = [1]>, f32
  scf.for %i7 = %c0 to %c3 step %c1 {
    scf.for %i8 = %c0 to %c2 step %c1 {
      %v9 = layout.load %a0[%i7, %i8] : !layout.buffer<3x2xf32>, f32
      %v10 = layout.load %a3[%i8, %i7] : !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (j floordiv 4 | i, j mod 4)>, pad_value = 2.500000e+00 : f32, scope = "global.texture">, f32
      %v11 = arith.minimumf %v9, %v10 : f32
      %v12 = arith.minimumf %v11, %v6 : f32
      layout.store %v12, %b5[%i8, %i7] : !layout.buffer<2x3xf32, transform = #layout.index_map<(i, j) -> (i, i + j)>, pad_value = -1.0 : f32>, f32
    }
  }
  func.return
}
