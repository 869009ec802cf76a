// REQUIRES: opencl
// `physlayout run` applies vectorize-texels itself, so a store of part of a texel that is left
// after it is one that pass could not vectorize: the diagnostic says so, instead of telling
// the user to run the pass (as `-t opencl` alone does, test/opencl/target-invalid.mlir).
// RUN: not physlayout run --texture-storage image %s 2>&1 | filecheck %s
// RUN: not physlayout-opt %s -p apply-layout,flatten-buffers -t opencl 2>&1 | filecheck %s --check-prefix=TARGET

// CHECK: {{^}}error: opencl: @one_lane: 'layout.store': texture store of f32 into %t would write part of a texel; a texture store writes all four channels (vectorize-texels, which ran, vectorizes only a loop `0 to 4 step 1` over the lanes of a texel: write all four lanes of each texel in such a loop, or store a vector<4xf32> texel){{$}}
// CHECK-NOT: after vectorize-texels
// TARGET: {{^}}error: opencl: @one_lane: 'layout.store': texture store of f32 into %t would write part of a texel; a texture store writes all four channels (store a vector<4xf32> texel, e.g. after vectorize-texels){{$}}
func.func @one_lane(%t: !layout.buffer<2x4x4xf32, scope = "global.texture">, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      layout.store %x, %t[%i, %j, %c0] : !layout.buffer<2x4x4xf32, scope = "global.texture">, f32
    }
  }
  func.return
}
