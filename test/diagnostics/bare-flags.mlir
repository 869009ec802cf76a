// A bare boolean option means true, as in mlir-opt: `{rewrite-loops}` is `{rewrite-loops=true}`,
// in physlayout-opt and in stock xdsl-opt (physlayout's passes read their own options).
// RUN: physlayout-opt %s -p 'apply-layout{rewrite-loops}' | filecheck %s
// RUN: xdsl-opt %s -p 'apply-layout{rewrite-loops}' | filecheck %s
// RUN: physlayout-opt %s -p 'apply-layout{rewrite-loops=true}' | filecheck %s
// RUN: physlayout-opt %s -p 'apply-layout{rewrite-loops remarks}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: xdsl-opt %s -p 'apply-layout{remarks rewrite-loops}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// The nest is re-iterated in physical order (2 x 4) only with rewrite-loops=true, and the
// remark is printed only with remarks=true: the bare flags took effect.
// REMARK: remark: apply-layout: re-iterated the loop nest over %i in the physical order of %a
// CHECK-LABEL: func.func @fill
// CHECK-SAME: !layout.buffer<2x4xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[TWO:.*]] step
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[FOUR:.*]] step
// CHECK: layout.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !layout.buffer<2x4xf32>, f32
func.func @fill(%a: !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %v = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    layout.store %v, %a[%i] : !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>, f32
  }
  func.return
}
