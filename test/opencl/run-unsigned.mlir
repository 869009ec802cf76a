// REQUIRES: opencl
// RUN: physlayout run --texture-storage image %s --entry ops --check --rtol 0 | filecheck %s
// RUN: physlayout run --texture-storage image %s --entry ops --print-opencl | filecheck %s --check-prefix=SOURCE

// Unsigned elements (ui8) are `uchar` in the kernel and numpy uint8 on the host; ops that
// read signed numbers cast them to `char` first. test/python/test_opencl_types.py runs this
// kernel on values 200..255 and compares every result with numpy.
// SOURCE: __global const uchar* a,
// SOURCE: uchar k) {
// SOURCE: float fu = (float)(uchar)v;
// SOURCE: float fs = (float)((char)v);
// SOURCE: int zs = (int)((char)v);
// SOURCE: uchar mx = max(((char)v), ((char)u));
// SOURCE: uchar dv = ((char)v) / ((char)k);
// SOURCE: bool lt = ((char)v) < ((char)u);
// SOURCE: bool ult = (uchar)v < (uchar)u;
// SOURCE: int l1 = (int)(bool)lt;
// SOURCE: int l5 = (int)(-(int)lt);
// CHECK-COUNT-9: shape [64] {{.*}} OK
// CHECK-NEXT: check: passed (rtol 0)

func.func @ops(%a: !layout.buffer<64xui8>, %b: !layout.buffer<64xui8>, %f: !layout.buffer<64xf32>, %g: !layout.buffer<64xf32>, %w: !layout.buffer<64xi32>, %s: !layout.buffer<64xi32>, %m: !layout.buffer<64xui8>, %d: !layout.buffer<64xui8>, %x: !layout.buffer<64xi32>, %k: ui8) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %v = layout.load %a[%i] : !layout.buffer<64xui8>, ui8
    %u = layout.load %b[%i] : !layout.buffer<64xui8>, ui8
    %sum = arith.addi %v, %k : ui8
    layout.store %sum, %b[%i] : !layout.buffer<64xui8>, ui8
    %fu = arith.uitofp %v : ui8 to f32
    layout.store %fu, %f[%i] : !layout.buffer<64xf32>, f32
    %fs = arith.sitofp %v : ui8 to f32
    layout.store %fs, %g[%i] : !layout.buffer<64xf32>, f32
    %zu = arith.extui %v : ui8 to i32
    layout.store %zu, %w[%i] : !layout.buffer<64xi32>, i32
    %zs = arith.extsi %v : ui8 to i32
    layout.store %zs, %s[%i] : !layout.buffer<64xi32>, i32
    %mx = arith.maxsi %v, %u : ui8
    layout.store %mx, %m[%i] : !layout.buffer<64xui8>, ui8
    %dv = arith.divsi %v, %k : ui8
    %du = arith.divui %v, %k : ui8
    %lt = arith.cmpi slt, %v, %u : ui8
    %ult = arith.cmpi ult, %v, %u : ui8
    %sel = arith.select %lt, %dv, %du : ui8
    layout.store %sel, %d[%i] : !layout.buffer<64xui8>, ui8
    %l1 = arith.extui %lt : i1 to i32
    %l2 = arith.extui %ult : i1 to i32
    %c2 = arith.constant 2 : i32
    %l3 = arith.muli %l2, %c2 : i32
    %l4 = arith.addi %l1, %l3 : i32
    %l5 = arith.extsi %lt : i1 to i32
    %l6 = arith.addi %l4, %l5 : i32
    layout.store %l6, %x[%i] : !layout.buffer<64xi32>, i32
  }
  func.return
}
