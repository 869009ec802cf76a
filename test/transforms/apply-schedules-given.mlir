// RUN: physlayout-opt %s -p 'apply-schedules{schedules="7663a8bdf8d97cc44beff11a=3/2/u8"}' | filecheck %s
// RUN: physlayout-opt %s -p 'apply-schedules{schedules="7663a8bdf8d97cc44beff11a=3/2/u8" default=true}' | filecheck %s
// RUN: not physlayout-opt %s -p 'apply-schedules{schedules="7663a8bdf8d97cc44beff11a=3x"}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not physlayout-opt %s -p 'apply-schedules{schedules="not-hex=3"}' 2>&1 | filecheck %s --check-prefix=HEX

// Given schedules by kernel signature (`apply-schedules{schedules}`, what `physlayout tune`
// keeps): @sum and @same compute the same thing over the same extents (only their names and
// SSA names differ), so they share a signature and both take the listed schedule; @longer
// runs over other extents (another signature) and keeps none; a signature absent from the
// table leaves the heuristic to choose (`default=true`).

func.func @sum(%x: !layout.buffer<6x8xf32>, %y: !layout.buffer<6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c6) step (%c1) {
    %s = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = layout.load %x[%i, %k] : !layout.buffer<6x8xf32>, f32
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    layout.store %s, %y[%i] : !layout.buffer<6xf32>, f32
    scf.reduce
  }
  func.return
}

func.func @same(%in: !layout.buffer<6x8xf32>, %out: !layout.buffer<6xf32>) {
  %lo = arith.constant 0 : index
  %one = arith.constant 1 : index
  %rows = arith.constant 6 : index
  %cols = arith.constant 8 : index
  %init = arith.constant 0.0 : f32
  scf.parallel (%r) = (%lo) to (%rows) step (%one) {
    %t = scf.for %c = %lo to %cols step %one iter_args(%u = %init) -> (f32) {
      %e = layout.load %in[%r, %c] : !layout.buffer<6x8xf32>, f32
      %n = arith.addf %u, %e : f32
      scf.yield %n : f32
    }
    layout.store %t, %out[%r] : !layout.buffer<6xf32>, f32
    scf.reduce
  }
  func.return
}

func.func @longer(%x: !layout.buffer<7x8xf32>, %y: !layout.buffer<7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c7) step (%c1) {
    %s = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = layout.load %x[%i, %k] : !layout.buffer<7x8xf32>, f32
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    layout.store %s, %y[%i] : !layout.buffer<7xf32>, f32
    scf.reduce
  }
  func.return
}

// CHECK-LABEL: func.func @sum
// CHECK-SAME:    attributes {layout.scheduled = #layout.schedule<tile = [3], unroll = 8, workgroup = [2]>}
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%[[THREE:[a-z0-9_]+]]) {
// CHECK-NOT:       scf.for
// CHECK-COUNT-24:  arith.addf
// CHECK-COUNT-3:   layout.store
// CHECK-LABEL: func.func @same
// CHECK-SAME:    attributes {layout.scheduled = #layout.schedule<tile = [3], unroll = 8, workgroup = [2]>}
// CHECK-NOT:     scf.for
// CHECK-LABEL: func.func @longer
// CHECK-NOT:     layout.schedule
// CHECK:         scf.for

// BAD: apply-schedules: bad schedule '3x': expected TILE[/WORKGROUP][/uUNROLL]
// HEX: apply-schedules: bad schedule table entry 'not-hex=3': expected SIGNATURE=TILE[/WORKGROUP][/uN] with a hex signature
