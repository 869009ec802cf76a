// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %s --check --rtol 0 --remarks 2>&1 | filecheck %s

// Loop nests whose iterations communicate through memory run on OpenCL with the results of
// the numpy evaluator: apply-layout keeps their logical order (and says why with
// --remarks); the in-place elementwise nest is still re-iterated in physical order. @main
// runs every kernel (one OpenCL build). The IR and the remark text of the same kernels are
// checked in test/transforms/apply-layout-dependences.mlir.

// CHECK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=2) and (i=13) both access %y[13] (load, then store)
// CHECK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=3) and (i=4) both access %y[3] (store, then load)
// CHECK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=3) and (i=4) both access %y[4] (store, then store)
// CHECK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=1) and (i=4) both access %s[0] (load, then store)
// CHECK: remark: apply-layout: kept the logical order of the loop nest over %i, %j: iterations (i=0, j=1) and (i=1, j=0) both access %y[1, 0] (load, then store)
// CHECK: remark: apply-layout: re-iterated the loop nest over %i in the physical order of %y
// CHECK: @main: 6 launch(es)
// CHECK:      %reversed {{.*}} OK
// CHECK-NEXT: %sums {{.*}} OK
// CHECK-NEXT: %terms {{.*}} OK
// CHECK-NEXT: %last {{.*}} OK
// CHECK-NEXT: %values {{.*}} OK
// CHECK-NEXT: %copy {{.*}} OK
// CHECK-NEXT: %total {{.*}} OK
// CHECK-NEXT: %diagonal {{.*}} OK
// CHECK-NEXT: %scaled {{.*}} OK
// CHECK-NEXT: check: passed

!T = !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>>
!M = !layout.buffer<4x6xf32, transform = #layout.index_map<(i, j) -> (j, i)>>
!X = !layout.buffer<16xf32>
!S = !layout.buffer<1xf32>

func.func @main(%reversed: !T, %sums: !T, %terms: !X, %last: !T, %values: !X, %copy: !T,
                %total: !S, %diagonal: !M, %scaled: !T) {
  func.call @reverse(%reversed) : (!T) -> ()
  func.call @scan(%sums, %terms) : (!T, !X) -> ()
  func.call @last_writer(%last, %values) : (!T, !X) -> ()
  func.call @sum_aside(%copy, %values, %total) : (!T, !X, !S) -> ()
  func.call @diagonal_transposed(%diagonal) : (!M) -> ()
  func.call @scale_in_place(%scaled) : (!T) -> ()
  func.return
}

func.func @reverse(%y: !T) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %c15 = arith.constant 15 : index
    %j = arith.subi %c15, %i : index
    %v = layout.load %y[%j] : !T, f32
    layout.store %v, %y[%i] : !T, f32
  }
  func.return
}

func.func @scan(%y: !T, %x: !X) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %first = arith.cmpi eq, %i, %c0 : index
    %prev = scf.if %first -> (f32) {
      scf.yield %zero : f32
    } else {
      %k = arith.subi %i, %c1 : index
      %p = layout.load %y[%k] : !T, f32
      scf.yield %p : f32
    }
    %v = layout.load %x[%i] : !X, f32
    %s = arith.addf %prev, %v : f32
    layout.store %s, %y[%i] : !T, f32
  }
  func.return
}

func.func @last_writer(%y: !T, %x: !X) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %x[%i] : !X, f32
    layout.store %v, %y[%i] : !T, f32
    %n = arith.addi %i, %c1 : index
    %next = arith.remsi %n, %c16 : index
    %w = arith.mulf %v, %two : f32
    layout.store %w, %y[%next] : !T, f32
  }
  func.return
}

func.func @sum_aside(%y: !T, %x: !X, %s: !S) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %x[%i] : !X, f32
    layout.store %v, %y[%i] : !T, f32
    %a = layout.load %s[%c0] : !S, f32
    %b = arith.addf %a, %v : f32
    layout.store %b, %s[%c0] : !S, f32
  }
  func.return
}

func.func @diagonal_transposed(%y: !M) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c6 step %c1 {
      %ip = arith.addi %i, %c1 : index
      %in = arith.remsi %ip, %c4 : index
      %jm = arith.addi %j, %c5 : index
      %jn = arith.remsi %jm, %c6 : index
      %v = layout.load %y[%in, %jn] : !M, f32
      %w = arith.addf %v, %v : f32
      layout.store %w, %y[%i, %j] : !M, f32
    }
  }
  func.return
}

func.func @scale_in_place(%y: !T) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %y[%i] : !T, f32
    %w = arith.addf %v, %v : f32
    layout.store %w, %y[%i] : !T, f32
  }
  func.return
}
