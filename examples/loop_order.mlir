// Two in-place updates of a buffer stored column-major in 4x4 tiles (logical i lies at
// physical [i mod 4, i floordiv 4]). `apply-layout{rewrite-loops=true}` re-iterates the
// elementwise update in physical order; the reversal keeps its logical order, because its
// iterations communicate through the buffer (run with `remarks=true` to see why).

!T = !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>>

func.func @scale(%y: !T) {
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

func.func @reverse(%y: !T) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %j = arith.subi %c15, %i : index
    %v = layout.load %y[%j] : !T, f32
    layout.store %v, %y[%i] : !T, f32
  }
  func.return
}

func.func @main(%a: !T, %b: !T) {
  func.call @scale(%a) : (!T) -> ()
  func.call @reverse(%b) : (!T) -> ()
  func.return
}
