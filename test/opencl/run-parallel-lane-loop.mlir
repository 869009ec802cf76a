// RUN: xdsl-opt %s -p vectorize-texels | filecheck %s
// RUN: xdsl-opt %s -p vectorize-texels | xdsl-opt -p vectorize-texels | filecheck %s
// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %s --entry relu_lanes --check --rtol 0 | filecheck %s --check-prefix=EXE
// RUN: physlayout run --texture-storage image %s --entry relu_texels --check --rtol 0 | filecheck %s --check-prefix=EXE2

// A one-dimensional scf.parallel over the 4 lanes of a texel is a lane loop like scf.for:
// with 4 iterations in all, the kernel is straight-line vector code (one work-item).
// CHECK-LABEL: func.func @relu_lanes
// CHECK-NOT:     scf.parallel
// CHECK:         %[[V:.*]] = layout.load %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<1x4xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NEXT:    %[[Z:.*]] = vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK-NEXT:    %[[R:.*]] = arith.maximumf %[[V]], %[[Z]] : vector<4xf32>
// CHECK:         layout.store %[[R]], %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<1x4xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NEXT:    func.return
// EXE: relu_lanes {{.*}} global size [1]
// EXE: %y {{.*}} OK
// EXE-NEXT: check: passed
func.func @relu_lanes(%x: !layout.buffer<1x4xf32, axis_separators = [1], scope = "global.texture">, %y: !layout.buffer<1x4xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%l: index):
    %v = layout.load %x[%c0, %l] : !layout.buffer<1x4xf32, axis_separators = [1], scope = "global.texture">, f32
    %r = arith.maximumf %v, %zero : f32
    layout.store %r, %y[%c0, %l] : !layout.buffer<1x4xf32, axis_separators = [1], scope = "global.texture">, f32
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// Inside a parallel loop over texels (3 rows: a prime), the lane loop vectorizes and the
// outer loop stays parallel (3 work-items).
// CHECK-LABEL: func.func @relu_texels
// CHECK:         scf.parallel (%[[Y:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:           layout.load %{{.*}}[%[[Y]], %{{.*}}] : !layout.buffer<3x4xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// CHECK-NOT:       scf.parallel
// CHECK:           layout.store %{{.*}}, %{{.*}}[%[[Y]], %{{.*}}] : !layout.buffer<3x4xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
// EXE2: relu_texels {{.*}} global size [3]
// EXE2: %y {{.*}} OK
// EXE2-NEXT: check: passed
func.func @relu_texels(%x: !layout.buffer<3x4xf32, axis_separators = [1], scope = "global.texture">, %y: !layout.buffer<3x4xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c3, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb1(%l: index):
      %v = layout.load %x[%i, %l] : !layout.buffer<3x4xf32, axis_separators = [1], scope = "global.texture">, f32
      %r = arith.maximumf %v, %zero : f32
      layout.store %r, %y[%i, %l] : !layout.buffer<3x4xf32, axis_separators = [1], scope = "global.texture">, f32
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// A parallel lane loop that breaks the rules (lane 0 reads what lane 1 writes) is left
// as it is.
// CHECK-LABEL: func.func @shifted
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:           layout.load %{{.*}} : !layout.buffer<1x5xf32>, f32
func.func @shifted(%y: !layout.buffer<1x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%l: index):
    %l1 = arith.addi %l, %c1 : index
    %v = layout.load %y[%c0, %l1] : !layout.buffer<1x5xf32>, f32
    layout.store %v, %y[%c0, %l] : !layout.buffer<1x5xf32>, f32
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
