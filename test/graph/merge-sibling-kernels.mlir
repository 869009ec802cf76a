// merge-sibling-kernels: two launches over the same grid that touch no common element one
// of them writes, or where the second reads only what the same work item of the first
// wrote, become one launch (the first's body, then the second's, per work item).
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
// CHECK-NEXT:      %[[V2:.*]] = layout.load %[[S2]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:      layout.store %[[V2]], %[[D]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:      %[[V:.*]] = layout.load %[[S]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:      %[[DD:.*]] = arith.addf %[[V]], %[[V]]
// CHECK-NEXT:      %[[HI:.*]] = arith.addi %[[C]], %{{.*}}
// CHECK-NEXT:      layout.store %[[DD]], %[[D]][%[[N]], %[[HI]], %[[H]], %[[W]]]
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

// A row's mean (over w) and its variance about that mean (as a layer norm computes them):
// the variance reads, in each work item, the mean the same work item of the first kernel
// stored (one unconditional scalar store, injective on the grid): forwarded, one launch.
!m = !layout.buffer<1x4x2xf32>
!mt = !layout.buffer<1x4x2xf32, scope = "global.texture">
func.func @row_mean(%src: !x, %mean: !m) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  scf.parallel (%n, %c, %h) = (%c0, %c0, %c0) to (%c1, %c4, %c2) step (%c1, %c1, %c1) {
    %sum = scf.for %w = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = layout.load %src[%n, %c, %h, %w] : !x, f32
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    %m = arith.mulf %sum, %half : f32
    layout.store %m, %mean[%n, %c, %h] : !m, f32
    scf.reduce
  }
  func.return
}
func.func @row_var(%src: !x, %mean: !m, %var: !m) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  scf.parallel (%n, %c, %h) = (%c0, %c0, %c0) to (%c1, %c4, %c2) step (%c1, %c1, %c1) {
    %sum = scf.for %w = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = layout.load %src[%n, %c, %h, %w] : !x, f32
      %m = layout.load %mean[%n, %c, %h] : !m, f32
      %d = arith.subf %v, %m : f32
      %s = arith.mulf %d, %d : f32
      %a = arith.addf %acc, %s : f32
      scf.yield %a : f32
    }
    %r = arith.mulf %sum, %half : f32
    layout.store %r, %var[%n, %c, %h] : !m, f32
    scf.reduce
  }
  func.return
}
// The variance about the other row's mean (h -> 1 - h: another work item's element).
func.func @row_var_other(%src: !x, %mean: !m, %var: !m) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%n, %c, %h) = (%c0, %c0, %c0) to (%c1, %c4, %c2) step (%c1, %c1, %c1) {
    %o = arith.subi %c1, %h : index
    %sum = scf.for %w = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = layout.load %src[%n, %c, %h, %w] : !x, f32
      %m = layout.load %mean[%n, %c, %o] : !m, f32
      %d = arith.subf %v, %m : f32
      %a = arith.addf %acc, %d : f32
      scf.yield %a : f32
    }
    layout.store %sum, %var[%n, %c, %h] : !m, f32
    scf.reduce
  }
  func.return
}
// Both rows of a channel store its first element at [n, c, 0] (equal values: not injective
// on the grid), and the reader of [n, c, 0].
func.func @channel_first(%src: !x, %mean: !m) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%n, %c, %h) = (%c0, %c0, %c0) to (%c1, %c4, %c2) step (%c1, %c1, %c1) {
    %v = layout.load %src[%n, %c, %c0, %c0] : !x, f32
    layout.store %v, %mean[%n, %c, %c0] : !m, f32
    scf.reduce
  }
  func.return
}
func.func @scale_by_first(%src: !x, %mean: !m, %var: !m) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%n, %c, %h) = (%c0, %c0, %c0) to (%c1, %c4, %c2) step (%c1, %c1, %c1) {
    %v = layout.load %src[%n, %c, %h, %c1] : !x, f32
    %m = layout.load %mean[%n, %c, %c0] : !m, f32
    %p = arith.mulf %v, %m : f32
    layout.store %p, %var[%n, %c, %h] : !m, f32
    scf.reduce
  }
  func.return
}
// The mean stored only in the rows h = 0 (under a condition).
func.func @row_mean_if(%src: !x, %mean: !m) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%n, %c, %h) = (%c0, %c0, %c0) to (%c1, %c4, %c2) step (%c1, %c1, %c1) {
    %first = arith.cmpi eq, %h, %c0 : index
    scf.if %first {
      %v = layout.load %src[%n, %c, %h, %c0] : !x, f32
      layout.store %v, %mean[%n, %c, %h] : !m, f32
    }
    scf.reduce
  }
  func.return
}
// The mean and the variance of a texture (an image a kernel cannot both write and read).
func.func @row_mean_tex(%src: !x, %mean: !mt) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%n, %c, %h) = (%c0, %c0, %c0) to (%c1, %c4, %c2) step (%c1, %c1, %c1) {
    %v = layout.load %src[%n, %c, %h, %c0] : !x, f32
    layout.store %v, %mean[%n, %c, %h] : !mt, f32
    scf.reduce
  }
  func.return
}
func.func @row_var_tex(%src: !x, %mean: !mt, %var: !m) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%n, %c, %h) = (%c0, %c0, %c0) to (%c1, %c4, %c2) step (%c1, %c1, %c1) {
    %v = layout.load %src[%n, %c, %h, %c1] : !x, f32
    %m = layout.load %mean[%n, %c, %h] : !mt, f32
    %d = arith.subf %v, %m : f32
    layout.store %d, %var[%n, %c, %h] : !m, f32
    scf.reduce
  }
  func.return
}

// CHECK-LABEL: func.func @row_var_row_mean(
// CHECK-SAME:      %[[SRC:[^:]*]]: !layout.buffer<1x4x2x2xf32>, %[[MEAN:[^:]*]]: !layout.buffer<1x4x2xf32>, %[[VAR:[^:]*]]: !layout.buffer<1x4x2xf32>)
// CHECK:         scf.parallel (%[[N:[^,]*]], %[[C:[^,]*]], %[[H:[^)]*]]) =
// CHECK:           layout.store %{{.*}}, %[[MEAN]][%[[N]], %[[C]], %[[H]]]
// CHECK:           scf.for
// CHECK:             layout.load %[[MEAN]][%[[N]], %[[C]], %[[H]]]
// CHECK:           layout.store %{{.*}}, %[[VAR]][%[[N]], %[[C]], %[[H]]]
// CHECK-NEXT:      scf.reduce
// CHECK-LABEL: func.func @layer_norm_stats(
// CHECK-SAME:      %[[X:[^:]*]]: !layout.buffer<1x4x2x2xf32>, %[[V:[^:]*]]: !layout.buffer<1x4x2xf32>)
// CHECK:         %[[M:.*]] = layout.decl_buffer
// CHECK-NEXT:    func.call @row_var_row_mean(%[[X]], %[[M]], %[[V]])
// CHECK-NEXT:    func.return
func.func @layer_norm_stats(%x: !x, %var: !m) {
  %p = layout.allocate [8] : !layout.ptr<f32>
  %mean = layout.decl_buffer %p : !layout.ptr<f32> -> !m
  func.call @row_mean(%x, %mean) : (!x, !m) -> ()
  func.call @row_var(%x, %mean, %var) : (!x, !m, !m) -> ()
  func.return
}

// Refused: the second reads the other row's mean (written by another work item).
// CHECK-LABEL: func.func @other_row(
// CHECK:         func.call @row_mean(
// CHECK-NEXT:    func.call @row_var_other(
// CHECK-NEXT:    func.return
func.func @other_row(%x: !x, %var: !m) {
  %p = layout.allocate [8] : !layout.ptr<f32>
  %mean = layout.decl_buffer %p : !layout.ptr<f32> -> !m
  func.call @row_mean(%x, %mean) : (!x, !m) -> ()
  func.call @row_var_other(%x, %mean, %var) : (!x, !m, !m) -> ()
  func.return
}

// Refused: two work items store the element the second reads (equal values here, but the
// proof asks for a store injective on the grid).
// CHECK-LABEL: func.func @not_injective(
// CHECK:         func.call @channel_first(
// CHECK-NEXT:    func.call @scale_by_first(
// CHECK-NEXT:    func.return
func.func @not_injective(%x: !x, %var: !m) {
  %p = layout.allocate [8] : !layout.ptr<f32>
  %mean = layout.decl_buffer %p : !layout.ptr<f32> -> !m
  func.call @channel_first(%x, %mean) : (!x, !m) -> ()
  func.call @scale_by_first(%x, %mean, %var) : (!x, !m, !m) -> ()
  func.return
}

// Refused: the store the second would read is under a condition.
// CHECK-LABEL: func.func @conditional_store(
// CHECK:         func.call @row_mean_if(
// CHECK-NEXT:    func.call @row_var(
// CHECK-NEXT:    func.return
func.func @conditional_store(%x: !x, %var: !m) {
  %p = layout.allocate [8] : !layout.ptr<f32>
  %mean = layout.decl_buffer %p : !layout.ptr<f32> -> !m
  func.call @row_mean_if(%x, %mean) : (!x, !m) -> ()
  func.call @row_var(%x, %mean, %var) : (!x, !m, !m) -> ()
  func.return
}

// Refused: the forwarded storage is a texture.
// CHECK-LABEL: func.func @texture_stats(
// CHECK:         func.call @row_mean_tex(
// CHECK-NEXT:    func.call @row_var_tex(
// CHECK-NEXT:    func.return
func.func @texture_stats(%x: !x, %var: !m) {
  %p = layout.allocate [8] : !layout.ptr<f32, scope = "global.texture">
  %mean = layout.decl_buffer %p : !layout.ptr<f32, scope = "global.texture"> -> !mt
  func.call @row_mean_tex(%x, %mean) : (!x, !mt) -> ()
  func.call @row_var_tex(%x, %mean, %var) : (!x, !mt, !m) -> ()
  func.return
}

// Refused: the second writes the storage the first wrote and it reads (the mean, scaled).
// CHECK-LABEL: func.func @reader_writes(
// CHECK:         func.call @row_mean(
// CHECK-NEXT:    func.call @row_var(
// CHECK-NEXT:    func.return
func.func @reader_writes(%x: !x) {
  %p = layout.allocate [8] : !layout.ptr<f32>
  %mean = layout.decl_buffer %p : !layout.ptr<f32> -> !m
  func.call @row_mean(%x, %mean) : (!x, !m) -> ()
  func.call @row_var(%x, %mean, %mean) : (!x, !m, !m) -> ()
  func.return
}

// Refused: the storage is a parameter of the host (its interface: a launch that reads one
// takes it as an input of the run).
// CHECK-LABEL: func.func @parameter_stats(
// CHECK-NEXT:    func.call @row_mean(
// CHECK-NEXT:    func.call @row_var(
// CHECK-NEXT:    func.return
func.func @parameter_stats(%x: !x, %mean: !m, %var: !m) {
  func.call @row_mean(%x, %mean) : (!x, !m) -> ()
  func.call @row_var(%x, %mean, %var) : (!x, !m, !m) -> ()
  func.return
}
