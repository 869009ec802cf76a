// The invalid-input corpus, area pass-order: one texture kernel run through pipelines whose
// passes are missing or out of order; each RUN line is one case and exits 1 with the
// diagnostic that names the pass to run (or to run first) and nothing else.
// RUN: not physlayout-opt %s -t opencl 2>&1 | filecheck %s --check-prefix=TARGET-PENDING
// RUN: not physlayout-opt %s -p flatten-buffers 2>&1 | filecheck %s --check-prefix=FLATTEN-PENDING
// RUN: not physlayout-opt %s -p apply-layout,flatten-buffers -t opencl 2>&1 | filecheck %s --check-prefix=NO-VECTORIZE
// RUN: not physlayout-opt %s -p 'apply-layout,flatten-buffers,verify-buffers{allow-partial-texel-writes=false}' 2>&1 | filecheck %s --check-prefix=VERIFY-PARTIAL
// RUN: not physlayout-opt %s -p apply-layout,flatten-buffers,lower-layout -t opencl 2>&1 | filecheck %s --check-prefix=TARGET-AFTER-LOWER

// TARGET-PENDING: {{^}}error: opencl: @relu: parameter %b: !layout.buffer<1x8x2x4xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture"> still has a pending transform; run apply-layout{{$}}
// TARGET-PENDING-NOT: {{.}}
// FLATTEN-PENDING: {{^.*}}pass-order.mlir:[[# @LINE + 11]]:1: error: flatten-buffers: !layout.buffer<1x8x2x4xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture"> still has a pending transform; run apply-layout first{{$}}
// FLATTEN-PENDING-NEXT: {{^}}func.func @relu(
// FLATTEN-PENDING-NEXT: {{^}}^^^^^^^^^{{$}}
// FLATTEN-PENDING-NOT: {{.}}
// NO-VECTORIZE: {{^}}error: opencl: @relu: 'layout.store': texture store of f32 into %b would write part of a texel; a texture store writes all four channels (store a vector<4xf32> texel, e.g. after vectorize-texels){{$}}
// NO-VECTORIZE-NOT: {{.}}
// VERIFY-PARTIAL: {{^}}error: verify-buffers: store of 1 lane to flat texture buffer of type !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture"> is a partial-texel write; image writes set whole RGBA texels (store a vector<4xf32> at a multiple of 4){{$}}
// VERIFY-PARTIAL-NOT: {{.}}
// TARGET-AFTER-LOWER: {{^}}error: opencl: @relu: parameter %a: memref<1x8x2x4xf32>: the OpenCL target takes buffer-level IR (!layout.buffer), so use it instead of lower-layout, not after it{{$}}
// TARGET-AFTER-LOWER-NOT: {{.}}

func.func @relu(%a: !layout.buffer<1x8x2x4xf32>, %b: !layout.buffer<1x8x2x4xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  scf.for %c = %c0 to %c8 step %c1 {
    scf.for %h = %c0 to %c2 step %c1 {
      scf.for %w = %c0 to %c4 step %c1 {
        %x = layout.load %a[%c0, %c, %h, %w] : !layout.buffer<1x8x2x4xf32>, f32
        %y = arith.maximumf %x, %z : f32
        layout.store %y, %b[%c0, %c, %h, %w] : !layout.buffer<1x8x2x4xf32, transform = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">, f32
      }
    }
  }
  func.return
}
