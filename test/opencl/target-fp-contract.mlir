// RUN: xdsl-opt %s -p 'apply-schedules,physlayout-opencl{fp-contract=true}' -t 'opencl{texture-storage=buffer}' | filecheck %s
// RUN: xdsl-opt %s -p 'apply-schedules,physlayout-opencl' -t 'opencl{texture-storage=buffer}' | filecheck %s --check-prefix=OFF

// physlayout-opencl{fp-contract=true} (`--fp-contract`, `OpenCLRuntime.fp_contract`): each
// accumulator update `acc + x * w` of a scheduled conv (2 channel blocks x 4 columns: 8
// accumulators) is one `fma(x, w, acc)`; the order of the additions is unchanged. Off (the
// default) the products are rounded on their own, `FP_CONTRACT OFF` keeping the OpenCL C
// compiler from fusing them, bit-exact with the evaluator.

// 2 input channel blocks x 4 lanes x 3 x 3 window positions x 8 accumulators: 288 updates.
// CHECK-LABEL:   __kernel void conv(
// CHECK-NOT:       {{ xb[_0-9]* \* }}
// CHECK-COUNT-288: float4 {{e[_0-9]*}} = fma({{xb[_0-9]*}}, {{wv[_0-9]*}}, {{v[0-9]+|e[_0-9]*}});
// CHECK-NOT:       {{ xb[_0-9]* \* |fma\(}}
// CHECK:           y[o * 20 + h * 5 + q] =

// OFF-LABEL:     __kernel void conv(
// OFF-NOT:         fma(
// OFF-COUNT-8:     float4 {{m[_0-9]*}} = {{xb[_0-9]*}} * {{wv[_0-9]*}};
// OFF-COUNT-8:     float4 {{e[_0-9]*}} = {{m[_0-9]*}} + {{v[0-9]+|e[_0-9]*}};
// OFF-NOT:         fma(
// OFF:             y[o * 20 + h * 5 + q] =

func.func @conv(%x: !layout.buffer<1x2x6x7x4xf32, scope = "global.texture">, %w: !layout.buffer<3x8x3x3x4xf32, scope = "global.texture-weight">, %y: !layout.buffer<1x3x4x5x4xf32, scope = "global.texture">) attributes {layout.schedule = #layout.schedule<tile = [1, 2, 1, 4], workgroup = [1, 1, 4, 2]>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant dense<0.0> : vector<4xf32>
  scf.parallel (%n, %o, %h, %q) = (%c0, %c0, %c0, %c0) to (%c1, %c3, %c4, %c5) step (%c1, %c1, %c1, %c1) {
    %acc = scf.for %c = %c0 to %c8 step %c1 iter_args(%a = %zero) -> (vector<4xf32>) {
      %r = scf.for %kh = %c0 to %c3 step %c1 iter_args(%b = %a) -> (vector<4xf32>) {
        %s = scf.for %kw = %c0 to %c3 step %c1 iter_args(%d = %b) -> (vector<4xf32>) {
          %ih = arith.addi %h, %kh : index
          %iw = arith.addi %q, %kw : index
          %cb = arith.divui %c, %c4 : index
          %cl = arith.remui %c, %c4 : index
          %xv = layout.load %x[%n, %cb, %ih, %iw, %cl] : !layout.buffer<1x2x6x7x4xf32, scope = "global.texture">, f32
          %wv = layout.load %w[%o, %c, %kh, %kw, %c0] : !layout.buffer<3x8x3x3x4xf32, scope = "global.texture-weight">, vector<4xf32>
          %xb = vector.broadcast %xv : f32 to vector<4xf32>
          %m = arith.mulf %xb, %wv : vector<4xf32>
          %e = arith.addf %m, %d : vector<4xf32>
          scf.yield %e : vector<4xf32>
        }
        scf.yield %s : vector<4xf32>
      }
      scf.yield %r : vector<4xf32>
    }
    layout.store %acc, %y[%n, %o, %h, %q, %c0] : !layout.buffer<1x3x4x5x4xf32, scope = "global.texture">, vector<4xf32>
    scf.reduce
  }
  func.return
}
