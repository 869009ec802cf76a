// Kernels of test_opencl_fp16.py: f16 storage (half buffers, HALF_FLOAT images) on any
// OpenCL device, and where values are rounded to half.

// f32 -> f16 buffer: the truncf feeds only the store, which rounds (vstore_half_rte).
func.func @store_half(%x: !layout.buffer<1024xf32>, %y: !layout.buffer<1024xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1024 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<1024xf32>, f32
    %h = arith.truncf %v : f32 to f16
    layout.store %h, %y[%i] : !layout.buffer<1024xf16>, f16
  }
  func.return
}

// f32 -> f16 -> f32 inside the kernel: the truncf rounds in float (px_half_rte).
func.func @round_trip(%x: !layout.buffer<1024xf32>, %y: !layout.buffer<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1024 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<1024xf32>, f32
    %h = arith.truncf %v : f32 to f16
    %e = arith.extf %h : f16 to f32
    layout.store %e, %y[%i] : !layout.buffer<1024xf32>, f32
  }
  func.return
}

// f32 texels -> an f16 texture (a HALF_FLOAT image written with write_imagef; the truncf
// rounds first, px_half_rte4).
func.func @to_texture(%x: !layout.buffer<64x16xf32>, %t: !layout.buffer<64x16xf16, axis_separators = [1], scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.for %r = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %c = arith.muli %j, %c4 : index
      %v = layout.load %x[%r, %c] : !layout.buffer<64x16xf32>, vector<4xf32>
      %h = arith.truncf %v : vector<4xf32> to vector<4xf16>
      layout.store %h, %t[%r, %c] : !layout.buffer<64x16xf16, axis_separators = [1], scope = "global.texture">, vector<4xf16>
    }
  }
  func.return
}

// An f16 texture read with read_imagef, widened to f32.
func.func @from_texture(%t: !layout.buffer<64x16xf16, axis_separators = [1], scope = "global.texture">, %y: !layout.buffer<64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.for %r = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %c = arith.muli %j, %c4 : index
      %h = layout.load %t[%r, %c] : !layout.buffer<64x16xf16, axis_separators = [1], scope = "global.texture">, vector<4xf16>
      %v = arith.extf %h : vector<4xf16> to vector<4xf32>
      layout.store %v, %y[%r, %c] : !layout.buffer<64x16xf32>, vector<4xf32>
    }
  }
  func.return
}

// f16 arithmetic: each op's result is rounded to half (in float without half arithmetic).
func.func @half_ops(%a: !layout.buffer<1024xf16>, %b: !layout.buffer<1024xf16>, %s: !layout.buffer<1024xf16>, %p: !layout.buffer<1024xf16>, %q: !layout.buffer<1024xf16>, %f: !layout.buffer<1024xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1024 : index
  %k = arith.constant 3 : i32
  scf.for %i = %c0 to %n step %c1 {
    %x = layout.load %a[%i] : !layout.buffer<1024xf16>, f16
    %y = layout.load %b[%i] : !layout.buffer<1024xf16>, f16
    %sum = arith.addf %x, %y : f16
    %prod = arith.mulf %x, %y : f16
    %quot = arith.divf %x, %y : f16
    %ii = arith.index_cast %i : index to i32
    %m = arith.muli %ii, %k : i32
    %fi = arith.sitofp %m : i32 to f16
    %g = arith.addf %fi, %x : f16
    layout.store %sum, %s[%i] : !layout.buffer<1024xf16>, f16
    layout.store %prod, %p[%i] : !layout.buffer<1024xf16>, f16
    layout.store %quot, %q[%i] : !layout.buffer<1024xf16>, f16
    layout.store %g, %f[%i] : !layout.buffer<1024xf16>, f16
  }
  func.return
}

// A row sum of f16 values with an f32 accumulator, rounded to f16 once at the end (what
// to-mixed-precision makes of a reduction).
func.func @sum_f32_accumulator(%x: !layout.buffer<5x3000xf16>, %y: !layout.buffer<5xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %n = arith.constant 3000 : index
  %zero = arith.constant 0.0 : f32
  scf.for %r = %c0 to %c5 step %c1 {
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %h = layout.load %x[%r, %i] : !layout.buffer<5x3000xf16>, f16
      %v = arith.extf %h : f16 to f32
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    %t = arith.truncf %s : f32 to f16
    layout.store %t, %y[%r] : !layout.buffer<5xf16>, f16
  }
  func.return
}

// The same sum with an f16 accumulator: every partial sum is rounded to half.
func.func @sum_f16_accumulator(%x: !layout.buffer<5x3000xf16>, %y: !layout.buffer<5xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %n = arith.constant 3000 : index
  %zero = arith.constant 0.0 : f16
  scf.for %r = %c0 to %c5 step %c1 {
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f16) {
      %h = layout.load %x[%r, %i] : !layout.buffer<5x3000xf16>, f16
      %a = arith.addf %acc, %h : f16
      scf.yield %a : f16
    }
    layout.store %s, %y[%r] : !layout.buffer<5xf16>, f16
  }
  func.return
}
