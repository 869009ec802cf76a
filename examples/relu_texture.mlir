// A logical NHWC relu whose output lives in NCHW4c texture memory (TVM RFC 0039 + the Adreno
// texture-scope RFC): the compute is written once against logical buffers; the output
// buffer's type carries the layout schedule.
//
//   xdsl-opt examples/relu_texture.mlir -p apply-layout,flatten-buffers
func.func @relu(%in: !layout.buffer<1x8x8x16xf32>,
                %out: !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c8 step %c1 {
      scf.for %w = %c0 to %c8 step %c1 {
        scf.for %c = %c0 to %c16 step %c1 {
          %v = layout.load %in[%n, %h, %w, %c] : !layout.buffer<1x8x8x16xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %out[%n, %h, %w, %c] : !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}
