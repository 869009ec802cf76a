// RUN: xdsl-opt %s -p 'apply-schedules{default=true registers=32 compute-units=1 vector-items=true}' | filecheck %s
// RUN: xdsl-opt %s -p 'apply-schedules{default=true registers=32 compute-units=1}' | filecheck %s --check-prefix=PLAIN

// The heuristic's default tile of a 3x3 convolution writing NCHW4c texels (one float4
// accumulator per output element, a budget of 32 lanes: 8 of them) and reading its input
// through a fused zero pad: the input's row and column indices are clamped with
// maxsi/minsi and the value selected by a bounds test.
//
// With vector-items (a CPU driver running neighbouring work-items as SIMD lanes) the column
// axis (dimension 0 of the work-items) stays untiled and the tile takes 8 output channel
// blocks: one input load (varying along the columns: a transpose of the lanes' texels)
// shared by the 8 accumulators, 8 weight texels (uniform across the columns: broadcasts).
//
// CHECK-LABEL: func.func @main_fused_c
// CHECK-SAME:    layout.scheduled = #layout.schedule<tile = [1, 8, 1, 1], workgroup = [1, 1, 8, 8]>
// CHECK:         scf.for %d7
// CHECK:           layout.load %{{[0-9]+}}[%{{[0-9]+}}, %{{[0-9]+}}] : !layout.buffer<8x32xf32, axis_separators = [1], scope = "global.texture">, f32
// CHECK-NOT:       scope = "global.texture">, f32
// CHECK-COUNT-8:   layout.load %{{[0-9]+}}[%{{[a-z0-9]+}}, %{{[0-9]+}}] : !layout.buffer<8x144xf32, axis_separators = [1], scope = "global.texture-weight">, vector<4xf32>
// CHECK-COUNT-8:   arith.mulf
//
// Without it, tiles are weighed by the distinct texels they read (as a GPU's texture cache
// shares them): 2 rows x 4 columns. The clamped reads count as depending on the rows and
// columns they are clamped from: each tile offset loads its own input, the weight texel is
// loaded once.
//
// PLAIN-LABEL: func.func @main_fused_c
// PLAIN-SAME:    layout.scheduled = #layout.schedule<tile = [1, 1, 2, 4], workgroup = [1, 8, 4, 2]>
// PLAIN:         scf.for %d7
// PLAIN-COUNT-8:   layout.load %{{[0-9]+}}[%{{[0-9]+}}, %{{[0-9]+}}] : !layout.buffer<8x32xf32, axis_separators = [1], scope = "global.texture">, f32
// PLAIN-NEXT:      arith.andi
// PLAIN:           layout.load %{{[0-9]+}}[%d1, %{{[0-9]+}}] : !layout.buffer<8x144xf32, axis_separators = [1], scope = "global.texture-weight">, vector<4xf32>
// PLAIN-NOT:       layout.load
// PLAIN:           scf.yield

// (`physlayout-adreno{schedule=false}`'s kernel of a tensor.pad of the entry's input feeding
// a linalg.conv_2d_nchw_fchw, 4 -> 32 channels, 8x8 pixels, whose result another conv reads.)
func.func @main_fused_c(%x: !layout.buffer<1x1x8x8x4xf32, scope = "global.texture">, %w: !layout.buffer<8x4x3x3x4xf32, scope = "global.texture-weight">, %c: !layout.buffer<1x8x8x8x4xf32, scope = "global.texture">) {
  %0 = layout.data %c : !layout.buffer<1x8x8x8x4xf32, scope = "global.texture"> -> !layout.ptr<f32, scope = "global.texture">
  %1 = layout.decl_buffer %0 : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<64x32xf32, axis_separators = [1], scope = "global.texture">
  %2 = layout.data %w : !layout.buffer<8x4x3x3x4xf32, scope = "global.texture-weight"> -> !layout.ptr<f32, scope = "global.texture-weight">
  %3 = layout.decl_buffer %2 : !layout.ptr<f32, scope = "global.texture-weight"> -> !layout.buffer<8x144xf32, axis_separators = [1], scope = "global.texture-weight">
  %4 = layout.data %x : !layout.buffer<1x1x8x8x4xf32, scope = "global.texture"> -> !layout.ptr<f32, scope = "global.texture">
  %5 = layout.decl_buffer %4 : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<8x32xf32, axis_separators = [1], scope = "global.texture">
  %6 = arith.constant 7 : index
  %7 = arith.constant 3 : index
  %8 = arith.constant 0.000000e+00 : f32
  %9 = arith.constant 4 : index
  %10 = arith.constant 8 : index
  %11 = arith.constant 1 : index
  %12 = arith.constant 0 : index
  scf.parallel (%d0, %d1, %d2, %d3) = (%12, %12, %12, %12) to (%11, %10, %10, %10) step (%11, %11, %11, %11) {
    %13 = vector.broadcast %8 : f32 to vector<4xf32>
    %14 = scf.for %d5 = %12 to %9 step %11 iter_args(%15 = %13) -> (vector<4xf32>) {
      %16 = scf.for %d6 = %12 to %7 step %11 iter_args(%17 = %15) -> (vector<4xf32>) {
        %18 = scf.for %d7 = %12 to %7 step %11 iter_args(%19 = %17) -> (vector<4xf32>) {
          %20 = arith.addi %d6, %d2 : index
          %21 = arith.constant -1 : index
          %22 = arith.addi %20, %21 : index
          %23 = arith.cmpi sge, %22, %12 : index
          %24 = arith.maxsi %22, %12 : index
          %25 = arith.cmpi slt, %22, %10 : index
          %26 = arith.minsi %24, %6 : index
          %27 = arith.addi %d7, %d3 : index
          %28 = arith.addi %27, %21 : index
          %29 = arith.cmpi sge, %28, %12 : index
          %30 = arith.maxsi %28, %12 : index
          %31 = arith.cmpi slt, %28, %10 : index
          %32 = arith.minsi %30, %6 : index
          %33 = arith.constant 4 : index
          %34 = arith.muli %32, %33 : index
          %35 = arith.addi %34, %d5 : index
          %36 = layout.load %5[%26, %35] : !layout.buffer<8x32xf32, axis_separators = [1], scope = "global.texture">, f32
          %37 = arith.andi %23, %25 : i1
          %38 = arith.andi %37, %29 : i1
          %39 = arith.andi %38, %31 : i1
          %40 = arith.select %39, %36, %8 : f32
          %41 = arith.constant 36 : index
          %42 = arith.muli %d5, %41 : index
          %43 = arith.constant 12 : index
          %44 = arith.muli %d6, %43 : index
          %45 = arith.addi %42, %44 : index
          %46 = arith.constant 4 : index
          %47 = arith.muli %d7, %46 : index
          %48 = arith.addi %45, %47 : index
          %49 = layout.load %3[%d1, %48] : !layout.buffer<8x144xf32, axis_separators = [1], scope = "global.texture-weight">, vector<4xf32>
          %50 = vector.broadcast %40 : f32 to vector<4xf32>
          %51 = arith.mulf %50, %49 : vector<4xf32>
          %52 = arith.addf %51, %19 : vector<4xf32>
          scf.yield %52 : vector<4xf32>
        }
        scf.yield %18 : vector<4xf32>
      }
      scf.yield %16 : vector<4xf32>
    }
    %53 = arith.constant 8 : index
    %54 = arith.muli %d1, %53 : index
    %55 = arith.addi %54, %d2 : index
    %56 = arith.constant 4 : index
    %57 = arith.muli %d3, %56 : index
    layout.store %14, %1[%55, %57] : !layout.buffer<64x32xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
    scf.reduce
  }
  func.return
}
