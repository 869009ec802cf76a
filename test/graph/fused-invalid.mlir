// layout.fused: verifier errors, and legalize-layout refusing a group one kernel cannot
// compute (a hand-written group fuse-elementwise would never make).
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: xdsl-opt %s -p legalize-layout --split-input-file --verify-diagnostics | filecheck %s --check-prefix=LEGALIZE

func.func @arg_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = layout.fused ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<5xf32>):
    layout.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
// CHECK: 'layout.fused' block arguments (tensor<5xf32>) must have the types of its inputs (tensor<4xf32>)
// LEGALIZE: 'layout.fused' block arguments

// -----
func.func @yield_type(%x: tensor<4xf32>) -> tensor<5xf32> {
  %r = layout.fused ins(%x : tensor<4xf32>) -> tensor<5xf32> {
  ^bb0(%a: tensor<4xf32>):
    layout.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<5xf32>
}
// CHECK: 'layout.fused' yields tensor<4xf32> but its result is tensor<5xf32>

// -----
// The stage reads a neighbour (i + 1) of the root's result: not one kernel's element.
func.func @neighbour_in_group(%x: tensor<4xf32>) -> tensor<3xf32> {
  %r = layout.fused ins(%x : tensor<4xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %n = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %m = arith.negf %v : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    %e3 = tensor.empty() : tensor<3xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i + 1)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%n : tensor<4xf32>) outs(%e3 : tensor<3xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    } -> tensor<3xf32>
    layout.yield %s : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
// LEGALIZE: legalize-layout: 'layout.fused' %n is read at (d0 + 1) by a consumer that writes (d0): not the element the producer writes there (a neighbour, broadcast or transposed read)
