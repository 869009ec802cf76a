// RUN: xdsl-opt %s -t 'opencl{max-image-width=64 max-image-height=32}' --split-input-file --verify-diagnostics | filecheck %s

// Texture rule: the element type is f32 or f16 (RGBA FLOAT or HALF_FLOAT texels).
func.func @texture_f64(%t: !layout.buffer<4x16xf64, axis_separators = [1], scope = "global.texture">) {
  func.return
}
// CHECK: opencl: @texture_f64: parameter %t: texture element type must be f32 or f16 (image2d_t with RGBA FLOAT or HALF_FLOAT texels), got f64

// -----
// Texture rule: the innermost physical extent is one texel.
func.func @texture_lanes(%t: !layout.buffer<2x4x8x3xf32, scope = "global.texture">) {
  func.return
}
// CHECK: opencl: @texture_lanes: parameter %t: the texture has innermost extent 3; the innermost axis of a texture holds one RGBA texel (extent 4)

// -----
// Texture rule: the image width (texels) fits the device limit (here 64).
func.func @texture_too_wide(%t: !layout.buffer<2x65x4xf32, scope = "global.texture">) {
  func.return
}
// CHECK: opencl: @texture_too_wide: parameter %t: the texture needs a 65 x 2 image (width x height in texels), beyond the image limit 64 x 32

// -----
// Texture rule: the image height fits the device limit (here 32): [n, c4, h | w, lane]
// has 2 * 4 * 5 = 40 rows.
func.func @texture_too_tall(%t: !layout.buffer<2x4x5x8x4xf32, scope = "global.texture">) {
  func.return
}
// CHECK: opencl: @texture_too_tall: parameter %t: the texture needs a 8 x 40 image (width x height in texels), beyond the image limit 64 x 32

// -----
// Texture rule: a texture is a 2-D image.
func.func @texture_1d(%t: !layout.buffer<16xf32, scope = "global.texture">) {
  func.return
}
// CHECK: opencl: @texture_1d: parameter %t: the texture has rank 1; a 2-D image needs rank >= 2

// -----
// Texture rule: a rank-2 (flat) texture has whole texels per row.
func.func @texture_columns(%t: !layout.buffer<4x6xf32, axis_separators = [1], scope = "global.texture">) {
  func.return
}
// CHECK: opencl: @texture_columns: parameter %t: the texture has 6 columns, not a whole number of RGBA texels (a multiple of 4)

// -----
// Texture rule: a store writes all four channels, so a scalar store is refused.
func.func @partial_texel_store(%t: !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, %v: f32) {
  %c0 = arith.constant 0 : index
  layout.store %v, %t[%c0, %c0] : !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, f32
  func.return
}
// CHECK: opencl: @partial_texel_store: 'layout.store': texture store of f32 into %t would write part of a texel; a texture store writes all four channels (store a vector<4xf32> texel, e.g. after vectorize-texels)

// -----
// Texture rule: a vector<4xf32> store must cover exactly one texel.
func.func @misaligned_texel_store(%t: !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, %s: f32) {
  %v = vector.broadcast %s : f32 to vector<4xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  layout.store %v, %t[%c0, %c2] : !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
  func.return
}
// CHECK: opencl: @misaligned_texel_store: 'layout.store': texture store into %t must write one whole texel, but its column is not provably a multiple of 4 (lane 2)

// -----
// Texture rule: a narrower vector store writes part of a texel.
func.func @half_texel_store(%t: !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, %s: f32) {
  %v = vector.broadcast %s : f32 to vector<2xf32>
  %c0 = arith.constant 0 : index
  layout.store %v, %t[%c0, %c0] : !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, vector<2xf32>
  func.return
}
// CHECK: opencl: @half_texel_store: 'layout.store': texture store of vector<2xf32> into %t would write part of a texel; a texture store writes all four channels (store a vector<4xf32> texel, e.g. after vectorize-texels)

// -----
// Texture rule: a vector<4xf32> load reads one whole texel.
func.func @misaligned_texel_load(%t: !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, %o: !layout.buffer<4xf32>, %j: index) {
  %c0 = arith.constant 0 : index
  %v = layout.load %t[%c0, %j] : !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
  layout.store %v, %o[%c0] : !layout.buffer<4xf32>, vector<4xf32>
  func.return
}
// CHECK: opencl: @misaligned_texel_load: 'layout.load': a vector<4xf32> texture load must read one whole texel, but its column is not provably a multiple of 4 (lane j mod 4)

// -----
// Texture rule: loads read one lane or one texel.
func.func @two_lane_load(%t: !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, %o: !layout.buffer<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = layout.load %t[%c0, %c0] : !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, vector<2xf32>
  layout.store %v, %o[%c0] : !layout.buffer<4xf32>, vector<2xf32>
  func.return
}
// CHECK: opencl: @two_lane_load: 'layout.load': texture loads read one lane or one whole texel (vector<4xf32>), not vector<2xf32>

// -----
// OpenCL 1.2 images are read-only or write-only within one kernel.
func.func @read_and_write(%t: !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %v = layout.load %t[%c0, %c0] : !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
  %c4 = arith.constant 4 : index
  layout.store %v, %t[%c0, %c4] : !layout.buffer<4x16xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
  func.return
}
// CHECK: opencl: @read_and_write: texture %t is both read and written by kernel 'read_and_write'; an OpenCL 1.2 image is read-only or write-only in a kernel

// -----
// The target needs the layouts applied.
func.func @pending(%a: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  func.return
}
// CHECK: opencl: @pending: parameter %a: !layout.buffer<16xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>> still has a pending transform; run apply-layout

// -----
// Storage is allocated by host functions, not inside kernels.
func.func @kernel_allocation(%v: f32) {
  %c0 = arith.constant 0 : index
  %p = layout.allocate [4] : !layout.ptr<f32>
  %b = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<4xf32>
  layout.store %v, %b[%c0] : !layout.buffer<4xf32>, f32
  func.return
}
// CHECK: opencl: @kernel_allocation: 'layout.allocate': allocations inside kernels are not supported; allocate in the host function and pass the buffer

// -----
// Launches share buffers, not SSA values.
func.func @value_across_launches(%a: !layout.buffer<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = layout.load %a[%i] : !layout.buffer<4xf32>, f32
    %t = arith.addf %acc, %v : f32
    scf.yield %t : f32
  }
  layout.store %s, %a[%c0] : !layout.buffer<4xf32>, f32
  func.return
}
// CHECK: opencl: @value_across_launches: 'scf.for': its result is used by 'layout.store' outside the kernel launch that computes it; launches only share buffers

// -----
// A top-level load is re-read by later launches only when nothing stores to its storage
// after it (here the launch that uses it writes %y: its work-items would race).
func.func @invariant_load_then_written(%x: !layout.buffer<8xf32>, %y: !layout.buffer<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %s = layout.load %y[%c0] : !layout.buffer<8xf32>, f32
  scf.for %i = %c0 to %c8 step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<8xf32>, f32
    %r = arith.mulf %v, %s : f32
    layout.store %r, %y[%i] : !layout.buffer<8xf32>, f32
  }
  func.return
}
// CHECK: opencl: @invariant_load_then_written: 'layout.load': its result is used by 'arith.mulf' outside the kernel launch that computes it; a top-level load is re-read by the launches that use it only when no store to its storage follows it

// -----
// Kernels return nothing.
func.func @returns_value(%a: !layout.buffer<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = layout.load %a[%c0] : !layout.buffer<4xf32>, f32
  func.return %v : f32
}
// CHECK: opencl: @returns_value: 'func.return': kernels return nothing (write results to buffers)

// -----
// Vector kernel parameters are not supported.
func.func @vector_param(%a: !layout.buffer<4xf32>, %v: vector<4xf32>) {
  func.return
}
// CHECK: opencl: @vector_param: parameter %v: unsupported kernel parameter type vector<4xf32>

// -----
// Kernels do not call other functions.
func.func private @callee() -> ()
func.func @calls() {
  %c0 = arith.constant 0 : index
  func.return
}
func.func @calls_other() {
  func.call @calls() : () -> ()
  func.return
}
// CHECK: // host function @calls_other launches: calls

// -----
// f16 needs no extension (storage only, computed in float: target-f16-storage.mlir), but
// without half arithmetic a bitcast of f16 has no bits to read: refused.
func.func @half_bitcast(%a: !layout.buffer<4xf16>, %b: !layout.buffer<4xi16>) {
  %c0 = arith.constant 0 : index
  %v = layout.load %a[%c0] : !layout.buffer<4xf16>, f16
  %i = arith.bitcast %v : f16 to i16
  layout.store %i, %b[%c0] : !layout.buffer<4xi16>, i16
  func.return
}
// CHECK: opencl: @half_bitcast: 'arith.bitcast': arith.bitcast of f16 values needs half arithmetic (target option fp16=true, cl_khr_fp16): without it f16 values are float in registers

// -----
// A truncf from f64 to f16 computed in float would round twice: refused without half
// arithmetic.
func.func @half_from_double(%a: !layout.buffer<4xf64>, %b: !layout.buffer<4xf16>) {
  %c0 = arith.constant 0 : index
  %v = layout.load %a[%c0] : !layout.buffer<4xf64>, f64
  %h = arith.truncf %v : f64 to f16
  layout.store %h, %b[%c0] : !layout.buffer<4xf16>, f16
  func.return
}
// CHECK: opencl: @half_from_double: 'arith.truncf': arith.truncf from f64 to f16 needs half arithmetic (target option fp16=true, cl_khr_fp16): in float it would round twice (truncf to f32 first makes that explicit)

// -----
// An image starts at its first texel: a texture parameter that a call binds to a view at
// an element offset cannot be a kernel argument.
func.func @texture_kernel(%t: !layout.buffer<2x8xf32, axis_separators = [1], scope = "global.texture">) {
  func.return
}
func.func @texture_host() {
  %p = layout.allocate [32] : !layout.ptr<f32, scope = "global.texture">
  %t = layout.decl_buffer %p offset 16 : !layout.ptr<f32, scope = "global.texture"> -> !layout.buffer<2x8xf32, axis_separators = [1], scope = "global.texture">
  func.call @texture_kernel(%t) : (!layout.buffer<2x8xf32, axis_separators = [1], scope = "global.texture">) -> ()
  func.return
}
// CHECK: opencl: @texture_kernel: parameter %t: a call may bind this texture to a buffer at an element offset, but an image2d_t starts at its first texel (declare texture views at offset 0)

// -----
// Texture rule: unsigned texels (CL_UNSIGNED_INT8 images, read_imageui) are not supported.
func.func @texture_ui8(%t: !layout.buffer<4x16xui8, axis_separators = [1], scope = "global.texture">) {
  func.return
}
// CHECK: opencl: @texture_ui8: parameter %t: texture element type must be f32 or f16 (image2d_t with RGBA FLOAT or HALF_FLOAT texels), got ui8

// -----
// An index element holds a 64-bit value (a `long`), but kernels compute index values as
// 32-bit int: loading one is refused rather than truncated.
func.func @load_index(%a: !layout.buffer<8xindex>, %b: !layout.buffer<8xi32>) {
  %c0 = arith.constant 0 : index
  %v = layout.load %a[%c0] : !layout.buffer<8xindex>, index
  %w = arith.index_cast %v : index to i32
  layout.store %w, %b[%c0] : !layout.buffer<8xi32>, i32
  func.return
}
// CHECK: opencl: @load_index: 'layout.load': loads of index elements (!layout.buffer<8xindex>) are not supported: an element holds a 64-bit index, but kernels compute index values as 32-bit int (store i32 elements and arith.index_cast them)

// -----
// Kernels compute index values as 32-bit int: an i64 cast to index could be truncated, so it
// is refused (an i32 cast to index is exact).
func.func @index_cast_i64(%a: !layout.buffer<8xf32>, %n: i64) {
  %i = arith.index_cast %n : i64 to index
  %x = arith.constant 1.0 : f32
  layout.store %x, %a[%i] : !layout.buffer<8xf32>, f32
  func.return
}
// CHECK: opencl: @index_cast_i64: 'arith.index_cast': arith.index_cast of i64 to index is not supported: kernels compute index values as 32-bit int, so a value beyond 2^31 - 1 would be truncated (arith.trunci to i32 first makes the wrap-around explicit)

// -----
// An i32 (or narrower) cast to index is exact.
func.func @index_cast_i32(%a: !layout.buffer<8xf32>, %n: i32, %m: i16) {
  %i = arith.index_cast %n : i32 to index
  %j = arith.index_cast %m : i16 to index
  %x = arith.constant 1.0 : f32
  layout.store %x, %a[%i] : !layout.buffer<8xf32>, f32
  layout.store %x, %a[%j] : !layout.buffer<8xf32>, f32
  func.return
}
// CHECK: __kernel void index_cast_i32(
// CHECK: (int)n
// CHECK: (int)m
