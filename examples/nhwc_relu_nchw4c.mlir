// ReLU over a logical NHWC tensor, written once against logical buffers. The schedule is
// the output buffer's type: NCHW4c (channels split by 4, the lane innermost) with an axis
// separator after `h`, so the flattened output is 2-D: [n*C4*H + c4*H + h, w*4 + lane].
//
//   xdsl-opt -p apply-layout,flatten-buffers,lower-layout examples/nhwc_relu_nchw4c.mlir
//
// lowers it to upstream memref/affine IR; `@main` fills the input with (i mod 13) - 6
// (i = row-major NHWC index), runs the kernel and prints the output in its physical
// NCHW4c layout [1, 2, 4, 4, 4] (see README: run it with mlir-runner).

func.func @relu(%in: !layout.buffer<1x4x4x8xf32>, %out: !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c4 step %c1 {
      scf.for %w = %c0 to %c4 step %c1 {
        scf.for %c = %c0 to %c8 step %c1 {
          %x = layout.load %in[%n, %h, %w, %c] : !layout.buffer<1x4x4x8xf32>, f32
          %y = arith.maximumf %x, %zero : f32
          layout.store %y, %out[%n, %h, %w, %c] : !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>, f32
        }
      }
    }
  }
  func.return
}

// Test driver: allocates both buffers (the output's allocation follows its layout), fills
// the input, calls the kernel and prints the output. The cast hands the output buffer to
// memref code; lower-layout turns it into a `memref.cast` of the physical memref.
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c13 = arith.constant 13 : index
  %pin = layout.allocate [1, 4, 4, 8] : !layout.ptr<f32>
  %in = layout.decl_buffer %pin : !layout.ptr<f32> -> !layout.buffer<1x4x4x8xf32>
  %pout = layout.allocate [1, 4, 4, 8] : !layout.ptr<f32>
  %out = layout.decl_buffer %pout : !layout.ptr<f32> -> !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>
  scf.for %h = %c0 to %c4 step %c1 {
    scf.for %w = %c0 to %c4 step %c1 {
      scf.for %c = %c0 to %c8 step %c1 {
        %hw = arith.muli %h, %c4 : index
        %row = arith.addi %hw, %w : index
        %base = arith.muli %row, %c8 : index
        %i = arith.addi %base, %c : index
        %r = arith.remsi %i, %c13 : index
        %s = arith.subi %r, %c6 : index
        %s32 = arith.index_cast %s : index to i32
        %v = arith.sitofp %s32 : i32 to f32
        layout.store %v, %in[%c0, %h, %w, %c] : !layout.buffer<1x4x4x8xf32>, f32
      }
    }
  }
  func.call @relu(%in, %out) : (!layout.buffer<1x4x4x8xf32>, !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>>) -> ()
  %printed = builtin.unrealized_conversion_cast %out : !layout.buffer<1x4x4x8xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>> to memref<*xf32>
  func.call @printMemrefF32(%printed) : (memref<*xf32>) -> ()
  func.return
}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
