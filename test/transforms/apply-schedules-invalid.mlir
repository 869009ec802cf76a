// RUN: xdsl-opt %s -p apply-schedules --split-input-file --verify-diagnostics | filecheck %s

// A schedule names one tile extent per axis of the kernel's scf.parallel.
func.func @rank(%b: !layout.buffer<4x4xf32>) attributes {layout.schedule = #layout.schedule<tile = [2]>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    layout.store %f, %b[%i, %j] : !layout.buffer<4x4xf32>, f32
    scf.reduce
  }
  func.return
}
// CHECK: apply-schedules: @rank: the schedule tiles 1 axes, the scf.parallel has 2

// -----

// A scheduled kernel is one top-level scf.parallel.
func.func @no_loop(%b: !layout.buffer<4xf32>) attributes {layout.schedule = #layout.schedule<tile = [2]>} {
  func.return
}
// CHECK: apply-schedules: @no_loop: a scheduled kernel needs exactly one top-level scf.parallel

// -----

// Bounds must be constants.
func.func @dynamic(%b: !layout.buffer<4xf32>, %n: index) attributes {layout.schedule = #layout.schedule<tile = [2]>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    layout.store %f, %b[%i] : !layout.buffer<4xf32>, f32
    scf.reduce
  }
  func.return
}
// CHECK: apply-schedules: @dynamic: the scf.parallel has non-constant bounds or steps

// -----

// A tile is cut to each axis's trip count (64 x 64 here), then at most 1024 elements remain.
func.func @huge(%b: !layout.buffer<64x64xf32>) attributes {layout.schedule = #layout.schedule<tile = [64, 17]>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
    layout.store %f, %b[%i, %j] : !layout.buffer<64x64xf32>, f32
    scf.reduce
  }
  func.return
}
// CHECK: apply-schedules: @huge: the schedule's tile [64, 17] computes 1088 iterations per work-item (at most 1024: each keeps its accumulators in registers)

// -----

// The attribute itself.
func.func @zero() attributes {layout.schedule = #layout.schedule<tile = [0, 1]>} {
  func.return
}
// CHECK: #layout.schedule: tile [0, 1] and workgroup [] must be positive

// -----

func.func @mismatch() attributes {layout.schedule = #layout.schedule<tile = [1, 2], workgroup = [4]>} {
  func.return
}
// CHECK: #layout.schedule: workgroup has 1 axes, tile 2

// -----

func.func @not_a_schedule() attributes {layout.schedule = 3 : i32} {
  %c0 = arith.constant 0 : index
  func.return
}
// CHECK: apply-schedules: @not_a_schedule: layout.schedule must be a #layout.schedule, got 3 : i32
