// Buffers declared at an element offset (RFC DeclBuffer aliases) passed to calls, directly
// and through a host function that declares views at offsets of its own parameters. A
// callee addresses its parameter from the parameter's first element wherever the caller's
// view lies: @main runs b[3 .. 11) = a[7 .. 15) + 1 (through @rows), then
// b[0 .. 8) = a[8 .. 16) + 1 (@add1 directly).

func.func @add1(%x: !layout.buffer<2x4xf32>, %y: !layout.buffer<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = layout.load %x[%i, %j] : !layout.buffer<2x4xf32>, f32
      %r = arith.addf %v, %one : f32
      layout.store %r, %y[%i, %j] : !layout.buffer<2x4xf32>, f32
    }
  }
  func.return
}

func.func @rows(%x: !layout.buffer<12xf32>, %y: !layout.buffer<12xf32>) {
  %px = layout.data %x : !layout.buffer<12xf32> -> !layout.ptr<f32>
  %py = layout.data %y : !layout.buffer<12xf32> -> !layout.ptr<f32>
  %x2 = layout.decl_buffer %px offset 3 : !layout.ptr<f32> -> !layout.buffer<2x4xf32>
  %y2 = layout.decl_buffer %py offset 1 : !layout.ptr<f32> -> !layout.buffer<2x4xf32>
  func.call @add1(%x2, %y2) : (!layout.buffer<2x4xf32>, !layout.buffer<2x4xf32>) -> ()
  func.return
}

func.func @main(%a: !layout.buffer<16xf32>, %b: !layout.buffer<16xf32>) {
  %pa = layout.data %a : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %pb = layout.data %b : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %a1 = layout.decl_buffer %pa offset 4 : !layout.ptr<f32> -> !layout.buffer<12xf32>
  %b1 = layout.decl_buffer %pb offset 2 : !layout.ptr<f32> -> !layout.buffer<12xf32>
  func.call @rows(%a1, %b1) : (!layout.buffer<12xf32>, !layout.buffer<12xf32>) -> ()
  %a2 = layout.decl_buffer %pa offset 8 : !layout.ptr<f32> -> !layout.buffer<2x4xf32>
  %b2 = layout.decl_buffer %pb : !layout.ptr<f32> -> !layout.buffer<2x4xf32>
  func.call @add1(%a2, %b2) : (!layout.buffer<2x4xf32>, !layout.buffer<2x4xf32>) -> ()
  func.return
}
