// REQUIRES: mlir
// Interop for apply-layout-memref.mlir: upstream `mlir-opt` verifies what apply-layout
// produces, and upstream `-normalize-memrefs` gives the same memref types on every case there
// (all of them injective; both outputs are printed by mlir-opt, so one set of TYPES checks
// reads both).
// RUN: xdsl-opt %S/apply-layout-memref.mlir -p apply-layout --print-op-generic | %mlir-opt --verify-each | filecheck %s --check-prefixes=TYPES,OURS
// RUN: xdsl-opt %S/apply-layout-memref.mlir --print-op-generic | %mlir-opt -normalize-memrefs | filecheck %s --check-prefixes=TYPES,UPSTREAM

// TYPES-LABEL: func.func @permute
// TYPES-SAME:    memref<64x256xf32>
// TYPES:         memref.alloc() : memref<256x64xf32>
// TYPES:         affine.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<256x64xf32>
// TYPES:         memref.dealloc %{{.*}} : memref<256x64xf32>

// TYPES-LABEL: func.func @tiled_2d
// TYPES:         memref.alloc() : memref<16x32x4x4xf32>
// TYPES:         affine.store %{{.*}}, %{{.*}}[%[[I:.*]] floordiv 4, %[[J:.*]] floordiv 4, %[[I]] mod 4, %[[J]] mod 4] : memref<16x32x4x4xf32>

// TYPES-LABEL: func.func @padded_1d
// TYPES:         memref.alloc() : memref<3x4xf32>
// TYPES:         memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<3x4xf32>

// TYPES-LABEL: func.func @strided_by_map
// TYPES:         memref.alloca() : memref<31x9xf32>

// TYPES-LABEL: func.func @composed_access
// TYPES-SAME:    memref<8x4xf32>

// TYPES-LABEL: func.func @memref_accesses_in_scf
// TYPES-SAME:    memref<8x8xf32>

// TYPES-LABEL: func.func @callee
// TYPES-SAME:    (%{{.*}}: memref<4x4xf32>) -> memref<4x4xf32>
// TYPES-LABEL: func.func @caller
// TYPES:         call @callee(%{{.*}}) : (memref<4x4xf32>) -> memref<4x4xf32>

// TYPES-LABEL: func.func private @external(memref<4x4xf32>) -> memref<4x4xf32>
// TYPES-LABEL: func.func @uses_external
// TYPES-SAME:    memref<4x4xf32>

// TYPES-LABEL: func.func @memory_space
// TYPES:         memref.alloc() : memref<2x4xf32, 1>

// Upstream also rewrites strided layouts; apply-layout leaves them (they are already
// normalized: they lower to LLVM as they are).
// TYPES-LABEL:   func.func @already_normalized
// OURS-SAME:     memref<4x4xf32, strided<[1, 4]>>
// UPSTREAM-SAME: memref<16xf32>
// TYPES-SAME:    memref<8xf32>
