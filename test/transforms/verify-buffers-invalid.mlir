// One case per verify-buffers rule, each with its exact message.
// RUN: xdsl-opt %s -p 'verify-buffers{allow-partial-texel-writes=false}' --split-input-file --verify-diagnostics | filecheck %s
//
// Not expressible in textual IR, so tested from Python (test/python/test_verify_buffers.py):
// a buffer used outside the region that declares it (the parser scopes names to regions).

// Rule 1, no implicit declaration: a buffer carried through scf.for is declared by nobody.
func.func @implicit_iter_arg(%A: !layout.buffer<16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %A) -> (!layout.buffer<16xf32>) {
    scf.yield %acc : !layout.buffer<16xf32>
  }
  func.return
}

// CHECK:      {{^}}verify-buffers: buffer %acc is implicitly declared as an argument of a block of 'scf.for'; a buffer must be a function parameter or the result of layout.decl_buffer{{$}}
// CHECK-NEXT: {{^}}verify-buffers: buffer %r is implicitly declared as a result of 'scf.for'; a buffer must be a function parameter or the result of layout.decl_buffer{{$}}

// -----

// Rule 1: a cast is not a declaration.
func.func @implicit_cast(%m: memref<16xf32>) {
  %b = builtin.unrealized_conversion_cast %m : memref<16xf32> to !layout.buffer<16xf32>
  func.return
}

// CHECK: {{^}}verify-buffers: buffer %b is implicitly declared as a result of 'builtin.unrealized_conversion_cast'; a buffer must be a function parameter or the result of layout.decl_buffer{{$}}

// -----

// Rule 1: a call returns a handle, not a buffer (declare the buffer over the handle).
func.func private @make() -> !layout.buffer<16xf32>
func.func @implicit_call_result() {
  %b = func.call @make() : () -> !layout.buffer<16xf32>
  func.return
}

// CHECK: {{^}}verify-buffers: buffer %b is implicitly declared as a result of 'func.call'; a buffer must be a function parameter or the result of layout.decl_buffer{{$}}

// -----

// Rule 2, no undefined buffer: a handle conjured by a cast.
func.func @undefined_handle(%addr: i64) {
  %p = builtin.unrealized_conversion_cast %addr : i64 to !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32>
  func.return
}

// CHECK: {{^}}verify-buffers: decl_buffer's data handle %p is not defined by a parameter, layout.allocate, layout.data or a call (it comes from 'builtin.unrealized_conversion_cast'){{$}}

// -----

// Rule 2: a handle carried through a loop is not a parameter of the function.
func.func @undefined_loop_handle(%p0: !layout.ptr<f32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%p = %p0) -> (!layout.ptr<f32>) {
    %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32>
    scf.yield %p : !layout.ptr<f32>
  }
  func.return
}

// CHECK: {{^}}verify-buffers: decl_buffer's data handle %p is not defined by a parameter, layout.allocate, layout.data or a call (it comes from an argument of a block of 'scf.for'){{$}}

// -----

// Rule 3, aliases fit: a vector view of 8 texels over a 16-element parameter (64 bytes).
func.func @alias_too_large(%A: !layout.buffer<16xf32>) {
  %d = layout.data %A : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %V = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<8xvector<4xf32>>
  func.return
}

// CHECK: {{^}}verify-buffers: buffer %V of 128 bytes at byte offset 0 does not fit in its storage (parameter %A) of 64 bytes{{$}}

// -----

// Rule 3: an offset alias that runs past the end of the parameter's 256 bytes.
func.func @alias_offset_past_end(%A: !layout.buffer<8x8xf32>) {
  %d = layout.data %A : !layout.buffer<8x8xf32> -> !layout.ptr<f32>
  %tail = layout.decl_buffer %d offset 61 : !layout.ptr<f32> -> !layout.buffer<4xf32>
  func.return
}

// CHECK: {{^}}verify-buffers: buffer %tail of 16 bytes at byte offset 244 does not fit in its storage (parameter %A) of 256 bytes{{$}}

// -----

// Rule 3: an alias of an alias is checked against the allocation at the root (the direct
// declaration over the allocation is checked by the dialect verifier already).
func.func @alias_of_alias_too_large() {
  %p = layout.allocate [64] : !layout.ptr<f32>
  %b = layout.decl_buffer %p offset 32 : !layout.ptr<f32> -> !layout.buffer<32xf32>
  %h = layout.data %b : !layout.buffer<32xf32> -> !layout.ptr<f32>
  %big = layout.decl_buffer %h offset 8 : !layout.ptr<f32> -> !layout.buffer<16x4xf32>
  func.return
}

// CHECK: {{^}}verify-buffers: buffer %big of 256 bytes at byte offset 32 does not fit in its storage (allocation %p) of 256 bytes{{$}}

// -----

// Rule 3: element types must have the same scalars (no implicit reinterpretation).
func.func @alias_element_type(%A: !layout.buffer<16xf32>) {
  %d = layout.data %A : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %I = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<16xi32>
  func.return
}

// CHECK: {{^}}verify-buffers: buffer %I has element type i32, which is not compatible with its data handle's element type f32{{$}}

// -----

// Rule 3: scopes agree. The dialect verifier already ties a declaration's scope to its
// handle's and `layout.data`'s handle to its buffer's, so this is where it is reported.
func.func @alias_scope(%A: !layout.buffer<16xf32>) {
  %d = layout.data %A : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %S = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<16xf32, scope = "shared">
  func.return
}

// CHECK: {{^}}buffer scope 'shared' does not match the data handle's scope 'global'{{$}}

// -----

// Rule 4: a buffer used before its declaration (textual IR does not check dominance).
func.func @use_before_declaration(%p: !layout.ptr<f32>, %i: index) -> f32 {
  %v = layout.load %b[%i] : !layout.buffer<4xf32>, f32
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<4xf32>
  func.return %v : f32
}

// CHECK: {{^}}verify-buffers: buffer %b is used before its declaration (by 'layout.load'){{$}}

// -----

// Rule 4: a declaration in one branch does not dominate the join block.
func.func @use_not_dominated(%c: i1, %i: index) -> f32 {
  %p = layout.allocate [16] : !layout.ptr<f32>
  cf.cond_br %c, ^declare, ^done
^declare:
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32>
  cf.br ^done
^done:
  %v = layout.load %b[%i] : !layout.buffer<16xf32>, f32
  func.return %v : f32
}

// CHECK: {{^}}verify-buffers: buffer %b is used before its declaration (by 'layout.load'){{$}}

// -----

// Rule 5: textures hold float channels.
func.func @texture_element_type(%t: !layout.buffer<8x8x4xi32, scope = "global.texture">) {
  func.return
}

// CHECK: {{^}}verify-buffers: texture buffer %t has element type i32; textures hold f32 or f16 channels (or vector<4xf32> / vector<4xf16> texels){{$}}

// -----

// Rule 6: a 1-D buffer is no image.
func.func @texture_rank_1(%t: !layout.buffer<64xf32, scope = "global.texture">) {
  func.return
}

// CHECK: {{^}}verify-buffers: texture buffer %t has rank 1; a 2-D image needs rank >= 2{{$}}

// -----

// Rule 6: two separators make a 3-D physical buffer.
func.func @texture_two_separators(%t: !layout.buffer<2x4x8x4xf32, axis_separators = [1, 2], scope = "global.texture">) {
  func.return
}

// CHECK: {{^}}verify-buffers: texture buffer %t has 2 axis separators [1, 2]; a 2-D image allows at most one{{$}}

// -----

// Rule 7: the innermost axis of an N-d texture buffer is one texel (4 channels); here the
// pending transform keeps 16 channels innermost.
func.func @texture_innermost_extent(%t: !layout.buffer<1x8x8x16xf32, transform = #layout.index_map<(n, h, w, c) -> (n, h | w, c)>, scope = "global.texture">) {
  func.return
}

// CHECK: {{^}}verify-buffers: texture buffer %t has innermost extent 16; the innermost axis of a texture holds one RGBA texel (extent 4){{$}}

// -----

// Rule 7: a 2-D texture's columns are whole texels.
func.func @texture_columns(%t: !layout.buffer<8x30xf32, axis_separators = [1], scope = "global.texture">) {
  func.return
}

// CHECK: {{^}}verify-buffers: texture buffer %t has 30 columns, not a whole number of RGBA texels (a multiple of 4){{$}}

// -----

// Rule 8: the default image limit is 16384 x 16384 texels ([2 | 8, 2049, 4] is 16392 x 2).
func.func @texture_too_wide(%t: !layout.buffer<2x8x2049x4xf32, axis_separators = [1], scope = "global.texture">) {
  func.return
}

// CHECK: {{^}}verify-buffers: texture buffer %t needs a 16392 x 2 image (width x height in texels), beyond the image limit 16384 x 16384{{$}}

// -----

// Rule 10: a scalar store to a flat texture is a partial-texel write.
func.func @partial_texel_store(%img: !layout.buffer<8x32xf32, axis_separators = [1], scope = "global.texture">, %v: f32, %i: index) {
  layout.store %v, %img[%i, %i] : !layout.buffer<8x32xf32, axis_separators = [1], scope = "global.texture">, f32
  func.return
}

// CHECK: {{^}}verify-buffers: store of 1 lane to flat texture buffer %img is a partial-texel write; image writes set whole RGBA texels (store a vector<4xf32> at a multiple of 4){{$}}

// -----

// Rule 10: a texel store whose column is not proven to be a multiple of 4.
func.func @unaligned_texel_store(%img: !layout.buffer<8x32xf32, axis_separators = [1], scope = "global.texture">, %v: vector<4xf32>, %i: index, %x: index) {
  layout.store %v, %img[%i, %x] : !layout.buffer<8x32xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
  func.return
}

// CHECK: {{^}}verify-buffers: store to flat texture buffer %img is not proven to start at a texel boundary (its column index mod 4 lies in [0, 3]){{$}}

// -----

// Rule 9: a vector load may not straddle two texels (lanes 2..5 of texel x).
func.func @load_across_texels(%img: !layout.buffer<8x32xf32, axis_separators = [1], scope = "global.texture">, %i: index, %x: index) -> vector<4xf32> {
  %c4 = arith.constant 4 : index
  %c2 = arith.constant 2 : index
  %x4 = arith.muli %x, %c4 : index
  %col = arith.addi %x4, %c2 : index
  %v = layout.load %img[%i, %col] : !layout.buffer<8x32xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
  func.return %v : vector<4xf32>
}

// CHECK: {{^}}verify-buffers: vector<4xf32> load from texture buffer %img may cross a texel boundary (its innermost index mod 4 lies in [2, 2]){{$}}

// -----

// Rule 3: a transformed parameter occupies its transformed box (2x4 = 8 elements, 32 bytes),
// not one element more.
func.func @view_past_transformed_parameter(%t: !layout.buffer<6xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32>) {
  %d = layout.data %t : !layout.buffer<6xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32> -> !layout.ptr<f32>
  %flat = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<9xf32>
  func.return
}

// CHECK: {{^}}verify-buffers: buffer %flat of 36 bytes at byte offset 0 does not fit in its storage (parameter %t) of 32 bytes{{$}}
