// REQUIRES: opencl
// The lane loops of target-lane-loops.mlir run on OpenCL and equal the numpy evaluator
// exactly (--rtol 0): the unrolled copies keep the order of the additions.
// RUN: physlayout run --texture-storage image %S/target-lane-loops.mlir --entry channel_sum --check --rtol 0 | filecheck %s
// RUN: physlayout run --texture-storage image %S/target-lane-loops.mlir --entry window_sum --check --rtol 0 | filecheck %s
// RUN: physlayout run --texture-storage image %S/target-lane-loops.mlir --entry three_channels --check --rtol 0 | filecheck %s
// RUN: physlayout run --texture-storage image %S/target-lane-loops.mlir --entry long_window --check --rtol 0 | filecheck %s
// RUN: physlayout run --texture-storage image %S/target-lane-loops.mlir --entry carried_column --check --rtol 0 | filecheck %s
// RUN: physlayout run --texture-storage image %S/target-lane-loops.mlir --entry guarded_window --check --rtol 0 | filecheck %s
// RUN: physlayout run --texture-storage buffer %S/target-lane-loops.mlir --entry guarded_window --check --rtol 0 | filecheck %s

// CHECK: %t {{.*}} OK
// CHECK-NEXT: %out {{.*}} OK
// CHECK-NEXT: check: passed
