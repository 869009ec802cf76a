// examples/relu_texture.mlir with 3 channels: NHWC [1, 4, 4, 3] in NCHW4c texture memory.
// Each pixel is one RGBA texel whose alpha lane is padding (pad_value 0.0).
func.func @relu(%in: !layout.buffer<1x4x4x3xf32>,
                %out: !layout.buffer<1x4x4x3xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c4 step %c1 {
      scf.for %w = %c0 to %c4 step %c1 {
        scf.for %c = %c0 to %c3 step %c1 {
          %v = layout.load %in[%n, %h, %w, %c] : !layout.buffer<1x4x4x3xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %out[%n, %h, %w, %c] : !layout.buffer<1x4x4x3xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">, f32
        }
      }
    }
  }
  func.return
}
