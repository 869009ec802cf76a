// RUN: xdsl-opt %s -p flatten-buffers --split-input-file --verify-diagnostics | filecheck %s

// Flattening needs the layout applied first.
func.func @pending(%a: !layout.buffer<4x4xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, %i: index) -> f32 {
  %v = layout.load %a[%i, %i] : !layout.buffer<4x4xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, f32
  func.return %v : f32
}
// CHECK: flatten-buffers: !layout.buffer<4x4xf32, transform = #layout.index_map<(i, j) -> (j, i)>> still has a pending transform; run apply-layout first
