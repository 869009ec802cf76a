// merge-sibling-kernels: two launches over the same grid that touch no common element one
// of them writes become one launch (the first's body, then the second's, per work item).
// RUN: xdsl-opt %s -p merge-sibling-kernels | filecheck %s
// RUN: xdsl-opt %s -p merge-sibling-kernels,merge-sibling-kernels | filecheck %s

!x = !layout.buffer<1x4x2x2xf32>
!cat = !layout.buffer<1x8x2x2xf32>

// Kernels (as legalize-layout writes them): a copy into the low window of a concat, a
// doubling into its high window, a doubling into the low window, one into channels 2..5,
// the channels reversed, a scaling in place, and a copy over a different grid.
func.func @copy_lo(%src: !x, %dst: !cat) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%n, %c, %h, %w) = (%c0, %c0, %c0, %c0) to (%c1, %c4, %c2, %c2) step (%c1, %c1, %c1, %c1) {
    %v = layout.load %src[%n, %c, %h, %w] : !x, f32
    layout.store %v, %dst[%n, %c, %h, %w] : !cat, f32
    scf.reduce
  }
  func.return
}
func.func @double_hi(%src: !x, %dst: !cat) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%n, %c, %h, %w) = (%c0, %c0, %c0, %c0) to (%c1, %c4, %c2, %c2) step (%c1, %c1, %c1, %c1) {
    %v = layout.load %src[%n, %c, %h, %w] : !x, f32
    %d = arith.addf %v, %v : f32
    %hi = arith.addi %c, %c4 : index
    layout.store %d, %dst[%n, %hi, %h, %w] : !cat, f32
    scf.reduce
  }
  func.return
}
func.func @double_mid(%src: !x, %dst: !cat) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%n, %c, %h, %w) = (%c0, %c0, %c0, %c0) to (%c1, %c4, %c2, %c2) step (%c1, %c1, %c1, %c1) {
    %v = layout.load %src[%n, %c, %h, %w] : !x, f32
    %d = arith.addf %v, %v : f32
    %mid = arith.addi %c, %c2 : index
    layout.store %d, %dst[%n, %mid, %h, %w] : !cat, f32
    scf.reduce
  }
  func.return
}
func.func @double(%src: !x, %dst: !x) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%n, %c, %h, %w) = (%c0, %c0, %c0, %c0) to (%c1, %c4, %c2, %c2) step (%c1, %c1, %c1, %c1) {
    %v = layout.load %src[%n, %c, %h, %w] : !x, f32
    %d = arith.addf %v, %v : f32
    layout.store %d, %dst[%n, %c, %h, %w] : !x, f32
    scf.reduce
  }
  func.return
}
func.func @reverse(%src: !x, %dst: !x) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%n, %c, %h, %w) = (%c0, %c0, %c0, %c0) to (%c1, %c4, %c2, %c2) step (%c1, %c1, %c1, %c1) {
    %r = arith.subi %c3, %c : index
    %v = layout.load %src[%n, %r, %h, %w] : !x, f32
    layout.store %v, %dst[%n, %c, %h, %w] : !x, f32
    scf.reduce
  }
  func.return
}
func.func @scale_in_place(%buf: !x) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %k = arith.constant 3.0 : f32
  scf.parallel (%n, %c, %h) = (%c0, %c0, %c0) to (%c1, %c4, %c2) step (%c1, %c1, %c1) {
    scf.for %w = %c0 to %c2 step %c1 {
      %v = layout.load %buf[%n, %c, %h, %w] : !x, f32
      %d = arith.mulf %v, %k : f32
      layout.store %d, %buf[%n, %c, %h, %w] : !x, f32
    }
    scf.reduce
  }
  func.return
}
func.func @copy_other_grid(%src: !x, %dst: !x) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%n, %c, %h) = (%c0, %c0, %c0) to (%c1, %c4, %c2) step (%c1, %c1, %c1) {
    scf.for %w = %c0 to %c2 step %c1 {
      %v = layout.load %src[%n, %c, %h, %w] : !x, f32
      layout.store %v, %dst[%n, %c, %h, %w] : !x, f32
    }
    scf.reduce
  }
  func.return
}

// ShuffleNet's unit: the copy of the passed-through half and the producer of the other half
// write disjoint windows of one concat: one launch. The same pair in another function
// calls the same merged kernel.
// CHECK-LABEL: func.func @double_hi_copy_lo(
// CHECK-SAME:      %[[S:[^:]*]]: !layout.buffer<1x4x2x2xf32>, %[[D:[^:]*]]: !layout.buffer<1x8x2x2xf32>, %[[S2:[^:]*]]: !layout.buffer<1x4x2x2xf32>)
// CHECK:         scf.parallel (%[[N:[^,]*]], %[[C:[^,]*]], %[[H:[^,]*]], %[[W:[^)]*]]) =
// CHECK-NEXT:      %[[V:.*]] = layout.load %[[S]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:      %[[DD:.*]] = arith.addf %[[V]], %[[V]]
// CHECK-NEXT:      %[[HI:.*]] = arith.addi %[[C]], %{{.*}}
// CHECK-NEXT:      layout.store %[[DD]], %[[D]][%[[N]], %[[HI]], %[[H]], %[[W]]]
// CHECK-NEXT:      %[[V2:.*]] = layout.load %[[S2]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:      layout.store %[[V2]], %[[D]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:      scf.reduce
// CHECK-LABEL: func.func @concat_windows(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<1x4x2x2xf32>, %[[Y:[^:]*]]: !layout.buffer<1x4x2x2xf32>, %[[OUT:[^:]*]]: !layout.buffer<1x8x2x2xf32>)
// CHECK-NEXT:    func.call @double_hi_copy_lo(%[[Y]], %[[OUT]], %[[X]])
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @concat_windows_again(
// CHECK-NEXT:    func.call @double_hi_copy_lo(
// CHECK-NEXT:    func.return
func.func @concat_windows(%x: !x, %y: !x, %out: !cat) {
  func.call @copy_lo(%x, %out) : (!x, !cat) -> ()
  func.call @double_hi(%y, %out) : (!x, !cat) -> ()
  func.return
}
func.func @concat_windows_again(%x: !x, %y: !x, %out: !cat) {
  func.call @copy_lo(%y, %out) : (!x, !cat) -> ()
  func.call @double_hi(%x, %out) : (!x, !cat) -> ()
  func.return
}

// Refused: the second reads what the first writes (%t; another work item's element).
// CHECK-LABEL: func.func @read_after_write(
// CHECK-NEXT:    func.call @double(
// CHECK-NEXT:    func.call @reverse(
// CHECK-NEXT:    func.return
func.func @read_after_write(%y: !x, %t: !x, %u: !x) {
  func.call @double(%y, %t) : (!x, !x) -> ()
  func.call @reverse(%t, %u) : (!x, !x) -> ()
  func.return
}

// Refused: the second writes what the first reads (%x).
// CHECK-LABEL: func.func @write_after_read(
// CHECK-NEXT:    func.call @double(
// CHECK-NEXT:    func.call @double(
// CHECK-NEXT:    func.return
func.func @write_after_read(%x: !x, %y: !x, %u: !x) {
  func.call @double(%x, %u) : (!x, !x) -> ()
  func.call @double(%y, %x) : (!x, !x) -> ()
  func.return
}

// Refused: both write channels 2 and 3 of %out.
// CHECK-LABEL: func.func @overlapping_windows(
// CHECK-NEXT:    func.call @copy_lo(
// CHECK-NEXT:    func.call @double_mid(
// CHECK-NEXT:    func.return
func.func @overlapping_windows(%y: !x, %u: !x, %out: !cat) {
  func.call @copy_lo(%y, %out) : (!x, !cat) -> ()
  func.call @double_mid(%u, %out) : (!x, !cat) -> ()
  func.return
}

// Refused: the grids differ (the same work items, in another shape).
// CHECK-LABEL: func.func @other_grid(
// CHECK-NEXT:    func.call @double(
// CHECK-NEXT:    func.call @copy_other_grid(
// CHECK-NEXT:    func.return
func.func @other_grid(%x: !x, %y: !x, %t: !x, %u: !x) {
  func.call @double(%x, %t) : (!x, !x) -> ()
  func.call @copy_other_grid(%y, %u) : (!x, !x) -> ()
  func.return
}

// The first launch cannot move down past one that writes what it reads (%x, scaled in
// place) or one that reads what it writes (%t).
// CHECK-LABEL: func.func @blocked_by_writer(
// CHECK-NEXT:    func.call @double(
// CHECK-NEXT:    func.call @scale_in_place(
// CHECK-NEXT:    func.call @double(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @blocked_by_reader(
// CHECK-NEXT:    func.call @double(
// CHECK-NEXT:    func.call @copy_other_grid(
// CHECK-NEXT:    func.call @double(
// CHECK-NEXT:    func.return
func.func @blocked_by_writer(%x: !x, %y: !x, %t: !x, %u: !x) {
  func.call @double(%x, %t) : (!x, !x) -> ()
  func.call @scale_in_place(%x) : (!x) -> ()
  func.call @double(%y, %u) : (!x, !x) -> ()
  func.return
}
func.func @blocked_by_reader(%x: !x, %y: !x, %t: !x, %u: !x, %v: !x) {
  func.call @double(%x, %t) : (!x, !x) -> ()
  func.call @copy_other_grid(%t, %v) : (!x, !x) -> ()
  func.call @double(%y, %u) : (!x, !x) -> ()
  func.return
}

// Past a launch that touches neither, it moves, and the pair merges at the second's place.
// CHECK-LABEL: func.func @moves_down(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<1x4x2x2xf32>, %[[Y:[^:]*]]: !layout.buffer<1x4x2x2xf32>, %[[T:[^:]*]]: !layout.buffer<1x4x2x2xf32>, %[[U:[^:]*]]: !layout.buffer<1x4x2x2xf32>, %[[W:[^:]*]]: !layout.buffer<1x4x2x2xf32>)
// CHECK-NEXT:    func.call @copy_other_grid(%[[Y]], %[[W]])
// CHECK-NEXT:    func.call @double_double(%[[Y]], %[[U]], %[[X]], %[[T]])
// CHECK-NEXT:    func.return
func.func @moves_down(%x: !x, %y: !x, %t: !x, %u: !x, %w: !x) {
  func.call @double(%x, %t) : (!x, !x) -> ()
  func.call @copy_other_grid(%y, %w) : (!x, !x) -> ()
  func.call @double(%y, %u) : (!x, !x) -> ()
  func.return
}

// Two views of one allocation may alias: refused, whatever their element ranges.
// CHECK-LABEL: func.func @aliased_views(
// CHECK:         func.call @double(
// CHECK-NEXT:    func.call @double(
// CHECK-NEXT:    func.return
func.func @aliased_views(%x: !x, %y: !x) {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %a = layout.decl_buffer %p : !layout.ptr<f32> -> !x
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !x
  func.call @double(%x, %a) : (!x, !x) -> ()
  func.call @double(%b, %y) : (!x, !x) -> ()
  func.return
}
