// RUN: xdsl-opt %s -t opencl | filecheck %s
// RUN: xdsl-opt %s -t 'opencl{fp16=true}' | filecheck %s --check-prefix=HALF

// Where f16 values are rounded to half, for both kinds of device. Without half arithmetic
// (the default: any device) an f16 value is a float holding a half value: an op whose
// result may not be one is rounded by px_half_rte (arithmetic, math functions, truncf,
// sitofp, add reductions), an op whose result always is one is not (max/min, negf,
// select, broadcast, max reductions); a truncf used only by stores to global buffers is
// rounded by the store (vstore_half_rte). With half arithmetic (fp16=true, cl_khr_fp16)
// the values are `half` and the hardware rounds each op.

// CHECK-NOT:   cl_khr_fp16
// CHECK:       static inline float px_half_rte(float x) {
// CHECK-NEXT:    float a = fabs(x);
// CHECK-NEXT:    uint u = as_uint(a);
// CHECK-NEXT:    float normal = as_float((u + 0x0FFFu + ((u >> 13) & 1u)) & 0xFFFFE000u);
// CHECK-NEXT:    float r = select(normal, (a + 0.75f) - 0.75f, a < 6.103515625e-05f);
// CHECK-NEXT:    r = select(r, (float)(INFINITY), a >= 65520.0f);
// CHECK-NEXT:    return select(copysign(r, x), x, isnan(x));
// CHECK-NEXT:  }
// CHECK:       static inline float4 px_half_rte4(float4 x) {
// CHECK:         uint4 u = as_uint4(a);
// HALF:        #pragma OPENCL EXTENSION cl_khr_fp16 : enable
// HALF-NOT:    px_half_rte

// CHECK-LABEL: __kernel void scalars(__global const half* a, __global half* b, __global float* c, float s) {
// CHECK:         float [[X:x]] = vload_half(i, a);
// CHECK-NEXT:    float [[SUM:sum]] = px_half_rte([[X]] + s);
// CHECK-NEXT:    float [[MAX:m]] = ([[SUM]] >= 0.5f || [[SUM]] != [[SUM]]) ? [[SUM]] : 0.5f;
// CHECK-NEXT:    float [[NEG:n]] = -[[MAX]];
// CHECK-NEXT:    float [[EXP:e]] = px_half_rte(exp([[NEG]]));
// CHECK-NEXT:    float [[W:w]] = (float)[[EXP]];
// CHECK-NEXT:    float [[P:p]] = [[W]] * 3.0f;
// CHECK-NEXT:    float [[T:t]] = (float)[[P]];
// CHECK-NEXT:    float [[U:u]] = px_half_rte((float)[[P]]);
// CHECK-NEXT:    float [[V:v]] = (float)[[U]];
// CHECK-NEXT:    int [[K:k]] = (int)i;
// CHECK-NEXT:    float [[F:f]] = px_half_rte((float)[[K]]);
// CHECK-NEXT:    vstore_half_rte([[T]], i, b);
// CHECK-NEXT:    vstore_half_rte([[F]], i + 16, b);
// CHECK-NEXT:    vstore_half_rte([[U]], i + 32, b);
// CHECK-NEXT:    c[i] = [[V]];
// HALF-LABEL:  __kernel void scalars(__global const half* a, __global half* b, __global float* c, half s) {
// HALF:          half [[X:x]] = a[i];
// HALF-NEXT:     half [[SUM:sum]] = [[X]] + s;
// HALF-NEXT:     half {{m}} = ([[SUM]] >= ((half)0.5f) || [[SUM]] != [[SUM]]) ? [[SUM]] : ((half)0.5f);
// HALF:          half {{e}} = exp({{n}});
// HALF:          half [[T:t]] = (half){{p}};
// HALF:          half {{f}} = (half){{k}};
// HALF-NEXT:     b[i] = [[T]];
func.func @scalars(%a: !layout.buffer<16xf16>, %b: !layout.buffer<48xf16>, %c: !layout.buffer<16xf32>, %s: f16) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %half = arith.constant 0.5 : f16
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %x = layout.load %a[%i] : !layout.buffer<16xf16>, f16
    %sum = arith.addf %x, %s : f16
    %m = arith.maximumf %sum, %half : f16
    %n = arith.negf %m : f16
    %e = math.exp %n : f16
    %w = arith.extf %e : f16 to f32
    %p = arith.mulf %w, %three : f32
    %t = arith.truncf %p : f32 to f16
    %u = arith.truncf %p : f32 to f16
    %v = arith.extf %u : f16 to f32
    %k = arith.index_cast %i : index to i32
    %f = arith.sitofp %k : i32 to f16
    %i16 = arith.addi %i, %c16 : index
    %i32 = arith.addi %i, %c32 : index
    layout.store %t, %b[%i] : !layout.buffer<48xf16>, f16
    layout.store %f, %b[%i16] : !layout.buffer<48xf16>, f16
    layout.store %u, %b[%i32] : !layout.buffer<48xf16>, f16
    layout.store %v, %c[%i] : !layout.buffer<16xf32>, f32
  }
  func.return
}

// Vectors of f16: vload_half4 / vstore_half4_rte on global buffers; a truncf stored to a
// texture is rounded first (write_imagef's conversion to half is then exact on any
// device); an add reduction is rounded once, a max reduction not at all.
// CHECK-LABEL: __kernel void vectors(__global const half* a, __write_only image2d_t t, __global half* r) {
// CHECK:         float4 [[X:x]] = vload_half4(0, a + j * 4);
// CHECK-NEXT:    float4 [[W:w]] = convert_float4([[X]]);
// CHECK-NEXT:    float4 [[D:d]] = [[W]] + [[W]];
// CHECK-NEXT:    float4 [[H:h]] = px_half_rte4(convert_float4([[D]]));
// CHECK-NEXT:    float [[S:s]] = px_half_rte([[X]].s0 + [[X]].s1 + [[X]].s2 + [[X]].s3);
// CHECK-NEXT:    float [[M:m]] = fmax(fmax(fmax([[X]].s0, [[X]].s1), [[X]].s2), [[X]].s3);
// CHECK-NEXT:    float4 [[B:bs]] = (float4)([[S]]);
// CHECK-NEXT:    float4 [[BM:bm]] = [[B]];
// CHECK-NEXT:    [[BM]].s1 = [[M]];
// CHECK-NEXT:    write_imagef(t, (int2)(j, 0), [[H]]);
// CHECK-NEXT:    vstore_half4_rte([[BM]], 0, r + j * 4);
// HALF-LABEL:  __kernel void vectors(__global const half* a, __write_only image2d_t t, __global half* r) {
// HALF:          half4 [[X:x]] = *(__global const half4*)(a + j * 4);
// HALF-NEXT:     float4 [[W:w]] = convert_float4([[X]]);
// HALF-NEXT:     float4 [[D:d]] = [[W]] + [[W]];
// HALF-NEXT:     half4 {{h}} = convert_half4([[D]]);
// HALF:          write_imageh(t, (int2)(j, 0), {{h}});
// HALF-NEXT:     *(__global half4*)(r + j * 4) = {{bm}};
func.func @vectors(%a: !layout.buffer<16xf16>, %t: !layout.buffer<1x16xf16, axis_separators = [1], scope = "global.texture">, %r: !layout.buffer<16xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %j = %c0 to %c4 step %c1 {
    %o = arith.muli %j, %c4 : index
    %x = layout.load %a[%o] : !layout.buffer<16xf16>, vector<4xf16>
    %w = arith.extf %x : vector<4xf16> to vector<4xf32>
    %d = arith.addf %w, %w : vector<4xf32>
    %h = arith.truncf %d : vector<4xf32> to vector<4xf16>
    %s = vector.reduction <add>, %x : vector<4xf16> into f16
    %m = vector.reduction <maxnumf>, %x : vector<4xf16> into f16
    %bs = vector.broadcast %s : f16 to vector<4xf16>
    %bm = vector.insert %m, %bs [1] : f16 into vector<4xf16>
    layout.store %h, %t[%c0, %o] : !layout.buffer<1x16xf16, axis_separators = [1], scope = "global.texture">, vector<4xf16>
    layout.store %bm, %r[%o] : !layout.buffer<16xf16>, vector<4xf16>
  }
  func.return
}
