// verify-buffers accepts legal declarations, aliases and texture buffers, and changes nothing.
// RUN: xdsl-opt %s -p verify-buffers | filecheck %s
// RUN: xdsl-opt %s > %t.before.mlir
// RUN: xdsl-opt %s -p verify-buffers > %t.after.mlir
// RUN: diff %t.before.mlir %t.after.mlir
// RUN: physlayout-opt %s -p 'verify-buffers{max-image-width=64 max-image-height=64}' | filecheck %s

// RFC DeclBuffer: a vector view over a parameter (`A_vector = T.decl_buffer([4], "float32x4",
// data=A.data)`): 16 f32 seen as 4 vector<4xf32>, the same 64 bytes.
// CHECK-LABEL: func.func @vector_view_of_parameter
// CHECK-NEXT:    %[[D:.*]] = layout.data %{{.*}} : !layout.buffer<16xf32> -> !layout.ptr<f32>
// CHECK-NEXT:    %[[V:.*]] = layout.decl_buffer %[[D]] : !layout.ptr<f32> -> !layout.buffer<4xvector<4xf32>>
// CHECK-NEXT:    layout.load %[[V]][%{{.*}}] : !layout.buffer<4xvector<4xf32>>, vector<4xf32>
func.func @vector_view_of_parameter(%A: !layout.buffer<16xf32>, %i: index) -> vector<4xf32> {
  %d = layout.data %A : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %A_vector = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<4xvector<4xf32>>
  %v = layout.load %A_vector[%i] : !layout.buffer<4xvector<4xf32>>, vector<4xf32>
  func.return %v : vector<4xf32>
}

// RFC DeclBuffer "Replace preflattened_buffer_map": parameters keep their logical shape and
// the body uses flattened aliases over their handles (what flatten-buffers produces).
// CHECK-LABEL: func.func @flattened_aliases_of_parameters
// CHECK:         layout.decl_buffer %{{.*}} : !layout.ptr<f32> -> !layout.buffer<256xf32>
// CHECK:         layout.decl_buffer %{{.*}} : !layout.ptr<f32> -> !layout.buffer<256xf32>
func.func @flattened_aliases_of_parameters(%A: !layout.buffer<16x16xf32>, %C: !layout.buffer<16x16xf32>) {
  %a = layout.data %A : !layout.buffer<16x16xf32> -> !layout.ptr<f32>
  %A_flat = layout.decl_buffer %a : !layout.ptr<f32> -> !layout.buffer<256xf32>
  %c = layout.data %C : !layout.buffer<16x16xf32> -> !layout.ptr<f32>
  %C_flat = layout.decl_buffer %c : !layout.ptr<f32> -> !layout.buffer<256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %k = %c0 to %c256 step %c1 {
    %v = layout.load %A_flat[%k] : !layout.buffer<256xf32>, f32
    layout.store %v, %C_flat[%k] : !layout.buffer<256xf32>, f32
  }
  func.return
}

// Sub-allocation views: two disjoint buffers and a vector view over one allocation, and an
// alias of an alias (layout.data of a declared buffer is the allocation's handle).
// CHECK-LABEL: func.func @sub_allocation_views
// CHECK:         %[[P:.*]] = layout.allocate [128] : !layout.ptr<f32>
// CHECK-NEXT:    layout.decl_buffer %[[P]] : !layout.ptr<f32> -> !layout.buffer<8x8xf32>
// CHECK-NEXT:    layout.decl_buffer %[[P]] offset 64 : !layout.ptr<f32> -> !layout.buffer<64xf32>
// CHECK-NEXT:    layout.decl_buffer %[[P]] offset 16 : !layout.ptr<f32> -> !layout.buffer<28xvector<4xf32>>
func.func @sub_allocation_views(%i: index) -> f32 {
  %p = layout.allocate [128] : !layout.ptr<f32>
  %lo = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<8x8xf32>
  %hi = layout.decl_buffer %p offset 64 : !layout.ptr<f32> -> !layout.buffer<64xf32>
  %vec = layout.decl_buffer %p offset 16 : !layout.ptr<f32> -> !layout.buffer<28xvector<4xf32>>
  %h = layout.data %hi : !layout.buffer<64xf32> -> !layout.ptr<f32>
  %whole = layout.decl_buffer %h : !layout.ptr<f32> -> !layout.buffer<2x64xf32>
  %v = layout.load %lo[%i, %i] : !layout.buffer<8x8xf32>, f32
  layout.store %v, %hi[%i] : !layout.buffer<64xf32>, f32
  %w = layout.load %whole[%i, %i] : !layout.buffer<2x64xf32>, f32
  func.return %w : f32
}

// Handles from a pointer parameter and from a call (the RFC's `device_specific_malloc`);
// their sizes are unknown, so any declaration fits.
// CHECK-LABEL: func.func @handles_from_parameters_and_calls
// CHECK:         %[[H:.*]] = func.call @device_malloc() : () -> !layout.ptr<f32, scope = "shared">
// CHECK-NEXT:    layout.decl_buffer %[[H]] : !layout.ptr<f32, scope = "shared"> -> !layout.buffer<1024xf32, scope = "shared">
func.func private @device_malloc() -> !layout.ptr<f32, scope = "shared">
func.func @handles_from_parameters_and_calls(%p: !layout.ptr<f32>, %i: index) -> f32 {
  %b = layout.decl_buffer %p offset 100 : !layout.ptr<f32> -> !layout.buffer<4x4xf32>
  %h = func.call @device_malloc() : () -> !layout.ptr<f32, scope = "shared">
  %s = layout.decl_buffer %h : !layout.ptr<f32, scope = "shared"> -> !layout.buffer<1024xf32, scope = "shared">
  %v = layout.load %b[%i, %i] : !layout.buffer<4x4xf32>, f32
  layout.store %v, %s[%i] : !layout.buffer<1024xf32, scope = "shared">, f32
  func.return %v : f32
}

// A buffer declared inside a loop body is used in nested regions of that body; parameters
// are used anywhere in the function; a declaration in the entry block dominates every block.
// CHECK-LABEL: func.func @scoped_uses
// CHECK:         scf.for
// CHECK-NEXT:      layout.allocate [4] : !layout.ptr<f32, scope = "local">
// CHECK-LABEL: func.func @cfg_dominance
func.func @scoped_uses(%A: !layout.buffer<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %p = layout.allocate [4] : !layout.ptr<f32, scope = "local">
    %t = layout.decl_buffer %p : !layout.ptr<f32, scope = "local"> -> !layout.buffer<4xf32, scope = "local">
    scf.for %j = %c0 to %c4 step %c1 {
      %v = layout.load %A[%i, %j] : !layout.buffer<8x4xf32>, f32
      layout.store %v, %t[%j] : !layout.buffer<4xf32, scope = "local">, f32
    }
  }
  func.return
}
func.func @cfg_dominance(%c: i1, %i: index) -> f32 {
  %p = layout.allocate [16] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32>
  cf.cond_br %c, ^then, ^else
^then:
  %one = arith.constant 1.0 : f32
  layout.store %one, %b[%i] : !layout.buffer<16xf32>, f32
  cf.br ^done
^else:
  cf.br ^done
^done:
  %v = layout.load %b[%i] : !layout.buffer<16xf32>, f32
  func.return %v : f32
}

// Textures before flattening: a pending NHWC -> NCHW4c transform (checked on its transformed
// layout [1, 4, 8 | 8, 4]) and the transformed buffer written element-wise by a kernel.
// CHECK-LABEL: func.func @texture_before_flattening
// CHECK:         layout.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : !layout.buffer<1x4x8x8x4xf32, axis_separators = [3], scope = "global.texture">, f32
func.func @texture_before_flattening(
    %pending: !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, scope = "global.texture">,
    %out: !layout.buffer<1x4x8x8x4xf32, axis_separators = [3], scope = "global.texture">,
    %weights: !layout.buffer<4x3x3x4x4xf16, scope = "global.texture-weight">,
    %v: f32, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %lane = %c0 to %c4 step %c1 {
    layout.store %v, %out[%c0, %i, %i, %i, %lane] : !layout.buffer<1x4x8x8x4xf32, axis_separators = [3], scope = "global.texture">, f32
  }
  func.return
}

// Flat textures (2-D, separators [1]): columns are texels (x * 4 + channel); stores write
// whole texels at a multiple of 4 (here: a loop stepping by 4), loads read texels or lanes.
// CHECK-LABEL: func.func @flat_texture_texel_accesses
// CHECK:         layout.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<32x64xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
func.func @flat_texture_texel_accesses(%img: !layout.buffer<32x64xf32, axis_separators = [1], scope = "global.texture">, %row: index, %x: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.0> : vector<4xf32>
  scf.for %col = %c0 to %c64 step %c4 {
    layout.store %zero, %img[%row, %col] : !layout.buffer<32x64xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
  }
  %x4 = arith.muli %x, %c4 : index
  %texel = layout.load %img[%row, %x4] : !layout.buffer<32x64xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
  %lane2 = arith.addi %x4, %c2 : index
  %pair = layout.load %img[%row, %lane2] : !layout.buffer<32x64xf32, axis_separators = [1], scope = "global.texture">, vector<2xf32>
  %one = layout.load %img[%row, %x] : !layout.buffer<32x64xf32, axis_separators = [1], scope = "global.texture">, f32
  func.return %one : f32
}

// A texel-typed texture (one vector<4xf32> per element): every access is a whole texel; its
// 2-D image is 16 x 8 texels. The image limits of the option RUN line (64 x 64) hold.
// CHECK-LABEL: func.func @texel_typed_texture
func.func @texel_typed_texture(%t: !layout.buffer<8x16xvector<4xf32>, axis_separators = [1], scope = "global.texture-nhwc">, %v: vector<4xf32>, %i: index) {
  layout.store %v, %t[%i, %i] : !layout.buffer<8x16xvector<4xf32>, axis_separators = [1], scope = "global.texture-nhwc">, vector<4xf32>
  func.return
}

// Storage is physical: a parameter with a pending padded transform occupies its transformed
// box (2x4 = 8 elements for 6 logical ones), so an 8-element flat view of it fits.
// CHECK-LABEL: func.func @physical_view_of_transformed_parameter
func.func @physical_view_of_transformed_parameter(%t: !layout.buffer<6xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32>) {
  %d = layout.data %t : !layout.buffer<6xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32> -> !layout.ptr<f32>
  // CHECK: layout.decl_buffer %{{.*}} : !layout.ptr<f32> -> !layout.buffer<8xf32>
  %flat = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<8xf32>
  func.return
}

// An unreachable block branching to ^bb2 does not hide that the entry block dominates it.
// CHECK-LABEL: func.func @cfg_unreachable_predecessor
func.func @cfg_unreachable_predecessor(%p: !layout.ptr<f32>, %v: f32) {
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<4xf32>
  cf.br ^bb2
^bb1:
  cf.br ^bb2
^bb2:
  %c0 = arith.constant 0 : index
  // CHECK: layout.store %{{.*}}, %b[%{{.*}}]
  layout.store %v, %b[%c0] : !layout.buffer<4xf32>, f32
  func.return
}
