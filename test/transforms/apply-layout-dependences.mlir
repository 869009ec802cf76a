// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true}' | filecheck %s
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: physlayout-opt %s -p 'apply-layout{rewrite-loops=true remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=LOC
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true}' > %t.plain
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops=true remarks=true}' 2>/dev/null > %t.remarks
// RUN: diff %t.plain %t.remarks

// rewrite-loops re-iterates a nest in the physical order of the buffer it writes only when
// isl proves that every two iterations that touch one element (one of them writing it)
// still run in their logical order. Remarks (stderr) say which nests are re-iterated and
// why the others keep their logical order; they never change the IR (the diff above).
//
// #tsplit runs logical i = 4 * a + b at physical (b, a): it reorders iterations.
// #split runs logical i at physical (i floordiv 4, i mod 4): the logical order itself.

!T = !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>>
!S = !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>
!M = !layout.buffer<4x6xf32, transform = #layout.index_map<(i, j) -> (j, i)>>
!X = !layout.buffer<16xf32>
!X2 = !layout.buffer<4x6xf32>

// In-place reversal: iteration 6 reads y[9] before iteration 9 writes it; the physical
// order would run 9 first. Kept: the loop still runs over i, the accesses are transformed.
// CHECK-LABEL: func.func @reverse
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:    %{{.*}} = arith.constant 16 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:           %[[R:.*]] = arith.remsi %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[Q:.*]] = arith.divsi %[[I]], %{{.*}} : index
// CHECK-NEXT:      layout.store %{{.*}}, %{{.*}}[%[[R]], %[[Q]]] : !layout.buffer<4x4xf32>, f32
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=2) and (i=13) both access %y[13] (load, then store); the new order runs (i=13) first
// LOC: apply-layout-dependences.mlir:[[# @LINE + 5]]:3: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=2) and (i=13)
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

// A running sum kept in the buffer itself: y[i] = y[i - 1] + x[i] (flow dependence).
// CHECK-LABEL: func.func @scan
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:           scf.if
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=3) and (i=4) both access %y[3] (store, then load); the new order runs (i=4) first
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

// The same scan under #split: the physical order is the logical order, so the
// re-iteration keeps every dependence and happens.
// CHECK-LABEL: func.func @scan_in_order
// CHECK:         scf.for %[[P0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[P1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             layout.store %{{.*}}, %{{.*}}[%[[P0]], %[[P1]]] : !layout.buffer<4x4xf32>, f32
// REMARK: remark: apply-layout: re-iterated the loop nest over %i in the physical order of %y
func.func @scan_in_order(%y: !S, %x: !X) {
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
      %p = layout.load %y[%k] : !S, f32
      scf.yield %p : f32
    }
    %v = layout.load %x[%i] : !X, f32
    %s = arith.addf %prev, %v : f32
    layout.store %s, %y[%i] : !S, f32
  }
  func.return
}

// Two stores to one element, the last writer wins: iteration i stores 2 * x[i] to
// y[i + 1] before iteration i + 1 stores x[i + 1] there (output dependence); in the
// physical order 2 * x[3] would win at y[4].
// CHECK-LABEL: func.func @last_writer
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=3) and (i=4) both access %y[4] (store, then store); the new order runs (i=4) first
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

// A reduction into another buffer at a fixed index: every iteration writes s[0], so the
// order of the additions is part of the result (output and flow dependences).
// CHECK-LABEL: func.func @sum_aside
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=1) and (i=4) both access %s[0] (load, then store); the new order runs (i=4) first
func.func @sum_aside(%y: !T, %x: !X, %s: !layout.buffer<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %x[%i] : !X, f32
    layout.store %v, %y[%i] : !T, f32
    %a = layout.load %s[%c0] : !layout.buffer<1xf32>, f32
    %b = arith.addf %a, %v : f32
    layout.store %b, %s[%c0] : !layout.buffer<1xf32>, f32
  }
  func.return
}

// An index that is not quasi-affine in the loop variables may touch any element.
// CHECK-LABEL: func.func @gather_self
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=1) and (i=4) both access %y[4] (load, then store); the new order runs (i=4) first
func.func @gather_self(%y: !T) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %sq = arith.muli %i, %i : index
    %k = arith.remsi %sq, %c16 : index
    %v = layout.load %y[%k] : !T, f32
    %w = arith.addf %v, %v : f32
    layout.store %w, %y[%i] : !T, f32
  }
  func.return
}

// Another view of the same storage (a second buffer declared over `layout.data %y`, same
// type and offset) is compared with %y in their common logical index space.
// CHECK-LABEL: func.func @reverse_through_alias
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=2) and (i=13) access one element, %z[13] (load) and %y[13] (store); the new order runs (i=13) first
func.func @reverse_through_alias(%y: !T) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c15 = arith.constant 15 : index
  %p = layout.data %y : !T -> !layout.ptr<f32>
  %z = layout.decl_buffer %p : !layout.ptr<f32> -> !T
  scf.for %i = %c0 to %c16 step %c1 {
    %j = arith.subi %c15, %i : index
    %v = layout.load %z[%j] : !T, f32
    layout.store %v, %y[%i] : !T, f32
  }
  func.return
}

// Two buffers declared over one allocation are views of one storage, compared in their
// common logical index space: the copy into %b is re-iterated, the reversal from %b into
// %a is not. (The result leaves through %out.)
// CHECK-LABEL: func.func @reverse_through_two_declarations
// CHECK:         layout.allocate [4, 4]
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:           layout.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<4x4xf32>, f32
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=2) and (i=13) access one element, %b[13] (load) and %a[13] (store); the new order runs (i=13) first
func.func @reverse_through_two_declarations(%x: !X, %out: !X) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  %p = layout.allocate [16] : !layout.ptr<f32>
  %a = layout.decl_buffer %p : !layout.ptr<f32> -> !T
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !T
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %x[%i] : !X, f32
    layout.store %v, %b[%i] : !T, f32
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %j = arith.subi %c15, %i : index
    %v = layout.load %b[%j] : !T, f32
    layout.store %v, %a[%i] : !T, f32
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %a[%i] : !T, f32
    layout.store %v, %out[%i] : !X, f32
  }
  func.return
}

// An inner loop's variable ranges over its bounds: the window y[i .. i + 2] (mod 16)
// read by iteration 2 holds y[4], which iteration 4 writes.
// CHECK-LABEL: func.func @window_in_place
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %{{.*}} = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i=2) and (i=4) both access %y[4] (load, then store); the new order runs (i=4) first
func.func @window_in_place(%y: !T) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %sum = scf.for %k = %c0 to %c3 step %c1 iter_args(%a = %zero) -> (f32) {
      %j = arith.addi %i, %k : index
      %m = arith.remsi %j, %c16 : index
      %v = layout.load %y[%m] : !T, f32
      %b = arith.addf %a, %v : f32
      scf.yield %b : f32
    }
    layout.store %sum, %y[%i] : !T, f32
  }
  func.return
}

// A value defined outside the nest is the same in every iteration; the proof covers all
// of its values and the remark names one that breaks the new order.
// CHECK-LABEL: func.func @shift_by_argument
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: iterations (i={{[0-9]+}}) and (i={{[0-9]+}}) both access %y[{{[0-9]+}}] (load, then store); the new order runs (i={{[0-9]+}}) first (when %s = {{[0-9]+}})
func.func @shift_by_argument(%y: !T, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %j = arith.addi %i, %s : index
    %inside = arith.cmpi slt, %j, %c16 : index
    %v = scf.if %inside -> (f32) {
      %w = layout.load %y[%j] : !T, f32
      scf.yield %w : f32
    } else {
      scf.yield %zero : f32
    }
    layout.store %v, %y[%i] : !T, f32
  }
  func.return
}

// A call in the body may touch anything.
// CHECK-LABEL: func.func @calls
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: its body calls @peek
func.func @peek(%y: !T) -> f32 {
  %c5 = arith.constant 5 : index
  %v = layout.load %y[%c5] : !T, f32
  func.return %v : f32
}
func.func @calls(%y: !T) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = func.call @peek(%y) : (!T) -> f32
    layout.store %v, %y[%i] : !T, f32
  }
  func.return
}

// A value carried from one iteration to the next (iter_args).
// CHECK-LABEL: func.func @carried
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: loop %i carries values between iterations
func.func @carried(%y: !T, %x: !X) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %total = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = layout.load %x[%i] : !X, f32
    %s = arith.addf %acc, %v : f32
    layout.store %s, %y[%i] : !T, f32
    scf.yield %s : f32
  }
  func.return
}

// One storage passed for two parameters: inside @copy_reversed, %a and %b may be one
// storage, so their accesses cannot be told apart.
// CHECK-LABEL: func.func @copy_reversed
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i: %a and %b may be one storage (a call passes the same storage for both)
func.func @copy_reversed(%a: !T, %b: !T) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c15 = arith.constant 15 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %j = arith.subi %c15, %i : index
    %v = layout.load %a[%j] : !T, f32
    layout.store %v, %b[%i] : !T, f32
  }
  func.return
}
func.func @reverse_by_call(%y: !T) {
  func.call @copy_reversed(%y, %y) : (!T, !T) -> ()
  func.return
}

// Re-iterated: an in-place elementwise update (each iteration touches only its own
// element), reads of other buffers, and a periodic stencil over another buffer.
// CHECK-LABEL: func.func @scale_in_place
// CHECK:         scf.for %[[P0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[P1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[V:.*]] = layout.load %{{.*}}[%[[P0]], %[[P1]]] : !layout.buffer<4x4xf32>, f32
// CHECK:             layout.store %{{.*}}, %{{.*}}[%[[P0]], %[[P1]]] : !layout.buffer<4x4xf32>, f32
// REMARK: remark: apply-layout: re-iterated the loop nest over %i in the physical order of %y
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

// CHECK-LABEL: func.func @stencil_other
// CHECK:         scf.for %[[P0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[P1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             layout.store %{{.*}}, %{{.*}}[%[[P0]], %[[P1]]] : !layout.buffer<4x4xf32>, f32
// REMARK: remark: apply-layout: re-iterated the loop nest over %i in the physical order of %y
func.func @stencil_other(%y: !T, %x: !X) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %l = arith.addi %i, %c15 : index
    %left = arith.remsi %l, %c16 : index
    %r = arith.addi %i, %c1 : index
    %right = arith.remsi %r, %c16 : index
    %a = layout.load %x[%left] : !X, f32
    %b = layout.load %x[%i] : !X, f32
    %c = layout.load %x[%right] : !X, f32
    %ab = arith.addf %a, %b : f32
    %abc = arith.addf %ab, %c : f32
    layout.store %abc, %y[%i] : !T, f32
  }
  func.return
}

// A 2-D transpose keeps the order of iterations that differ in one loop variable only:
// a scan along each row is re-iterated; y[i, j] = 2 * y[i + 1, j - 1] (periodic), a
// dependence along the anti-diagonal, is not.
// CHECK-LABEL: func.func @row_scan_transposed
// CHECK:         scf.for %[[Q0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[Q1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             layout.store %{{.*}}, %{{.*}}[%[[Q0]], %[[Q1]]] : !layout.buffer<6x4xf32>, f32
// REMARK: remark: apply-layout: re-iterated the loop nest over %i, %j in the physical order of %y
func.func @row_scan_transposed(%y: !M, %x: !X2) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c6 step %c1 {
      %first = arith.cmpi eq, %j, %c0 : index
      %prev = scf.if %first -> (f32) {
        scf.yield %zero : f32
      } else {
        %k = arith.subi %j, %c1 : index
        %p = layout.load %y[%i, %k] : !M, f32
        scf.yield %p : f32
      }
      %v = layout.load %x[%i, %j] : !X2, f32
      %s = arith.addf %prev, %v : f32
      layout.store %s, %y[%i, %j] : !M, f32
    }
  }
  func.return
}

// CHECK-LABEL: func.func @diagonal_transposed
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:         scf.for
// CHECK:         func.return
// REMARK: remark: apply-layout: kept the logical order of the loop nest over %i, %j: iterations (i=0, j=1) and (i=1, j=0) both access %y[1, 0] (load, then store); the new order runs (i=1, j=0) first
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
