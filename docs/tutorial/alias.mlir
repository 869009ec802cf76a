// RFC DeclBuffer: several buffers over one storage. %flat sees the 4x4 parameter %a as 16
// elements, %low its last two rows (element offset 8) as a 2x4 buffer. The kernel doubles
// every element through %flat, then adds 1 to rows 2 and 3 through %low.
func.func @alias(%a: !layout.buffer<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  %d = layout.data %a : !layout.buffer<4x4xf32> -> !layout.ptr<f32>
  %flat = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<16xf32>
  %low = layout.decl_buffer %d offset 8 : !layout.ptr<f32> -> !layout.buffer<2x4xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %flat[%i] : !layout.buffer<16xf32>, f32
    %w = arith.addf %v, %v : f32
    layout.store %w, %flat[%i] : !layout.buffer<16xf32>, f32
  }
  scf.for %r = %c0 to %c2 step %c1 {
    scf.for %c = %c0 to %c4 step %c1 {
      %v = layout.load %low[%r, %c] : !layout.buffer<2x4xf32>, f32
      %w = arith.addf %v, %one : f32
      layout.store %w, %low[%r, %c] : !layout.buffer<2x4xf32>, f32
    }
  }
  func.return
}
