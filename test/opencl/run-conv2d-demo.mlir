// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %S/../../examples/demo.mlir --check | filecheck %s

// The demo pipeline: NHWC -> NCHW4c texture, relu on the texture, conv2d NCHW4c with
// texture activations and OIHW4o global weights, all checked against the numpy evaluator.
// CHECK: @main: 3 launch(es)
// CHECK-NEXT: to_nchw4c {{.*}} global size [16, 16, 4]
// CHECK-NEXT: relu {{.*}} global size [16, 16, 4]
// CHECK-NEXT: conv2d {{.*}} global size [14, 14, 4]
// CHECK: %y {{.*}} OK
// CHECK-NEXT: check: passed (rtol 1e-05)
