// RUN: xdsl-opt %s -p 'vectorize-texels{vector-width=8}' | filecheck %s
// RUN: xdsl-opt %s -p 'vectorize-texels{vector-width=8},vectorize-texels{vector-width=8}' | filecheck %s
// RUN: xdsl-opt %s -p 'vectorize-texels{vector-width=8},apply-schedules' -t opencl | filecheck %s --check-prefix=CL
// RUN: xdsl-opt %s -p 'vectorize-texels' | filecheck %s --check-prefix=FOUR

// A matmul kernel (5 x 16 outputs, K = 7, bias and relu): its 16 output columns become two
// blocks of eight lanes. Per reduction step a row's A element is loaded once (a scalar,
// broadcast) and B's eight columns are one vector load; the accumulator is a vector, the
// epilogue runs on it and one vector store writes the block.
// CHECK-LABEL: func.func @matmul
// CHECK:         %{{.*}} = arith.constant 8 : index
// CHECK-NEXT:    %[[BLOCKS:.*]] = arith.constant 2 : index
// CHECK:         scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[BLOCKS]])
// CHECK-NEXT:      %[[ZERO:.*]] = vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK-NEXT:      %[[ACC:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CARRY:.*]] = %[[ZERO]]) -> (vector<8xf32>) {
// CHECK:             %[[A:.*]] = layout.load %{{.*}}[%{{.*}}] : !layout.buffer<35xf32>, f32
// CHECK:             %[[KROW:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK:             %[[COL:.*]] = arith.muli %[[J]], %[[EIGHT:.*]] : index
// CHECK-NEXT:        %[[AT:.*]] = arith.addi %[[KROW]], %[[COL]] : index
// CHECK-NEXT:        %[[B:.*]] = layout.load %{{.*}}[%[[AT]]] : !layout.buffer<112xf32>, vector<8xf32>
// CHECK-NEXT:        %[[AV:.*]] = vector.broadcast %[[A]] : f32 to vector<8xf32>
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[AV]], %[[B]] : vector<8xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[P]], %[[CARRY]] : vector<8xf32>
// CHECK-NEXT:        scf.yield %[[S]] : vector<8xf32>
// CHECK:           %[[BIAS:.*]] = layout.load %{{.*}}[%{{.*}}] : !layout.buffer<16xf32>, vector<8xf32>
// CHECK-NEXT:      %{{.*}} = arith.addf %[[ACC]], %[[BIAS]] : vector<8xf32>
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:           layout.store %{{.*}}, %{{.*}}[%{{.*}}] : !layout.buffer<80xf32>, vector<8xf32>
// CHECK-NEXT:      scf.reduce

// Default width: four lanes, four blocks.
// FOUR-LABEL: func.func @matmul
// FOUR:         %{{.*}} = arith.constant 4 : index
// FOUR-NEXT:    %[[BLOCKS:.*]] = arith.constant 4 : index
// FOUR:         scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[BLOCKS]])
// FOUR:           layout.load %{{.*}}[%{{.*}}] : !layout.buffer<112xf32>, vector<4xf32>

// The schedule tiles 2 rows x 2 blocks: four float8 accumulators, each B block loaded once
// per step for both rows (one A scalar per row), the rows' remainder (5 = 2 + 2 + 1) read
// at the clamped last row and its stores guarded.
// CL-LABEL: __kernel void matmul(
// CL:         int [[ROW1:v[0-9]+]] = d0 + 1;
// CL-NEXT:    bool [[VALID:v[0-9]+]] = [[ROW1]] < 5;
// CL-NEXT:    int [[CLAMPED:v[0-9]+]] = min([[ROW1]], 4);
// CL-NEXT:    float8 [[Z:v[0-9]+]] = (float8)(0.0f);
// CL-COUNT-4: float8 v{{[0-9]+}} = [[Z]];
// CL-NEXT:    for (int [[K:[a-z0-9]+]] = 0; [[K]] < 7; [[K]] += 1) {
// CL-NEXT:      float [[A0:v[0-9]+]] = a[d0 * 7 + [[K]]];
// CL-NEXT:      float [[A1:v[0-9]+]] = a[[[CLAMPED]] * 7 + [[K]]];
// CL-NEXT:      float8 [[B0:v[0-9]+]] = *(__global const float8*)(b + [[K]] * 16);
// CL-NEXT:      float8 [[B1:v[0-9]+]] = *(__global const float8*)(b + [[K]] * 16 + 8);
// CL-NOT:       (b +
// CL:         }
// CL:         *(__global float8*)(result0 + d0 * 16) =
// CL-NEXT:    *(__global float8*)(result0 + d0 * 16 + 8) =
// CL-NEXT:    if ([[VALID]]) {
// CL-NEXT:      *(__global float8*)(result0 + [[CLAMPED]] * 16) =
func.func @matmul(%a: !layout.buffer<5x7xf32>, %b: !layout.buffer<7x16xf32>, %result0: !layout.buffer<5x16xf32>, %bias: !layout.buffer<16xf32>) attributes {layout.schedule = #layout.schedule<tile = [2, 2]>} {
  %0 = layout.data %result0 : !layout.buffer<5x16xf32> -> !layout.ptr<f32>
  %1 = layout.decl_buffer %0 : !layout.ptr<f32> -> !layout.buffer<80xf32>
  %2 = layout.data %b : !layout.buffer<7x16xf32> -> !layout.ptr<f32>
  %3 = layout.decl_buffer %2 : !layout.ptr<f32> -> !layout.buffer<112xf32>
  %4 = layout.data %a : !layout.buffer<5x7xf32> -> !layout.ptr<f32>
  %5 = layout.decl_buffer %4 : !layout.ptr<f32> -> !layout.buffer<35xf32>
  %6 = arith.constant 7 : index
  %7 = arith.constant 0.000000e+00 : f32
  %8 = arith.constant 1 : index
  %9 = arith.constant 16 : index
  %10 = arith.constant 5 : index
  %11 = arith.constant 0 : index
  scf.parallel (%d0, %d1) = (%11, %11) to (%10, %9) step (%8, %8) {
    %12 = scf.for %d2 = %11 to %6 step %8 iter_args(%13 = %7) -> (f32) {
      %14 = arith.constant 7 : index
      %15 = arith.muli %d0, %14 : index
      %16 = arith.addi %15, %d2 : index
      %17 = layout.load %5[%16] : !layout.buffer<35xf32>, f32
      %18 = arith.constant 16 : index
      %19 = arith.muli %d2, %18 : index
      %20 = arith.addi %19, %d1 : index
      %21 = layout.load %3[%20] : !layout.buffer<112xf32>, f32
      %22 = arith.mulf %17, %21 : f32
      %23 = arith.addf %22, %13 : f32
      scf.yield %23 : f32
    }
    %24 = layout.load %bias[%d1] : !layout.buffer<16xf32>, f32
    %s = arith.addf %12, %24 : f32
    %y = arith.maximumf %s, %7 : f32
    %25 = arith.constant 16 : index
    %26 = arith.muli %d0, %25 : index
    %27 = arith.addi %26, %d1 : index
    layout.store %y, %1[%27] : !layout.buffer<80xf32>, f32
    scf.reduce
  }
  func.return
}

// B read transposed (b[j, k]): a block of columns would gather eight scalars per step, so
// the kernel keeps its scalar columns.
// CHECK-LABEL: func.func @transposed
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) {
// CHECK-NOT:       vector
// CHECK:           scf.reduce
func.func @transposed(%a: !layout.buffer<35xf32>, %b: !layout.buffer<112xf32>, %c: !layout.buffer<80xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c5, %c16) step (%c1, %c1) {
    %acc = scf.for %k = %c0 to %c7 step %c1 iter_args(%carry = %zero) -> (f32) {
      %ai0 = arith.muli %i, %c7 : index
      %ai = arith.addi %ai0, %k : index
      %x = layout.load %a[%ai] : !layout.buffer<35xf32>, f32
      %bi0 = arith.muli %j, %c7 : index
      %bi = arith.addi %bi0, %k : index
      %w = layout.load %b[%bi] : !layout.buffer<112xf32>, f32
      %p = arith.mulf %x, %w : f32
      %s = arith.addf %p, %carry : f32
      scf.yield %s : f32
    }
    %ci0 = arith.muli %i, %c16 : index
    %ci = arith.addi %ci0, %j : index
    layout.store %acc, %c[%ci] : !layout.buffer<80xf32>, f32
    scf.reduce
  }
  func.return
}

// 12 columns: not a multiple of eight, so blocks of four (three of them).
// CHECK-LABEL: func.func @twelve
// CHECK:         %{{.*}} = arith.constant 4 : index
// CHECK-NEXT:    %[[THREE:.*]] = arith.constant 3 : index
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[THREE]])
// CHECK:           layout.load %{{.*}}[%{{.*}}] : !layout.buffer<84xf32>, vector<4xf32>
// CHECK:           layout.store %{{.*}}, %{{.*}}[%{{.*}}] : !layout.buffer<60xf32>, vector<4xf32>
func.func @twelve(%a: !layout.buffer<35xf32>, %b: !layout.buffer<84xf32>, %c: !layout.buffer<60xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c5, %c12) step (%c1, %c1) {
    %acc = scf.for %k = %c0 to %c7 step %c1 iter_args(%carry = %zero) -> (f32) {
      %ai0 = arith.muli %i, %c7 : index
      %ai = arith.addi %ai0, %k : index
      %x = layout.load %a[%ai] : !layout.buffer<35xf32>, f32
      %bi0 = arith.muli %k, %c12 : index
      %bi = arith.addi %bi0, %j : index
      %w = layout.load %b[%bi] : !layout.buffer<84xf32>, f32
      %p = arith.mulf %x, %w : f32
      %s = arith.addf %p, %carry : f32
      scf.yield %s : f32
    }
    %ci0 = arith.muli %i, %c12 : index
    %ci = arith.addi %ci0, %j : index
    layout.store %acc, %c[%ci] : !layout.buffer<60xf32>, f32
    scf.reduce
  }
  func.return
}
