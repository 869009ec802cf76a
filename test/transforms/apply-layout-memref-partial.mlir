// apply-layout leaves a memref it cannot normalize soundly as it is, with a warning naming the
// type and the reason, and normalizes the rest (as upstream -normalize-memrefs does; cases in
// the style of MLIR's test/Transforms/normalize-memrefs.mlir). Nothing connected to a memref
// that is left (through calls and returns) is rewritten. With strict=true the module is refused.
// test/python/test_normalize_memrefs.py checks that upstream gives the same types for every
// memref it normalizes here.
// RUN: xdsl-opt %s -p apply-layout --allow-unregistered-dialect -o %t.mlir 2> %t.err
// RUN: filecheck %s < %t.mlir
// RUN: filecheck %s --check-prefix=WARN < %t.err
// physlayout-opt locates each warning at the op where its reason was found.
// RUN: physlayout-opt %s -p apply-layout --allow-unregistered-dialect -o %t.loc.mlir 2> %t.loc.err
// RUN: filecheck %s --check-prefix=LOC < %t.loc.err
// A second run changes nothing (and repeats the warnings).
// RUN: xdsl-opt %t.mlir -p apply-layout --allow-unregistered-dialect -o %t.twice.mlir 2> %t.twice.err
// RUN: diff %t.mlir %t.twice.mlir
// RUN: diff %t.err %t.twice.err
// RUN: not xdsl-opt %s -p 'apply-layout{strict=true}' --allow-unregistered-dialect 2>&1 | filecheck %s --check-prefix=STRICT

#tile = affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>
#neg = affine_map<(d0, d1) -> (d0, d1 - 100)>

// A result that can be negative has no storage: the memref is left. The tiled one in the same
// function is normalized.
// CHECK-LABEL: func.func @negative_result
// CHECK-SAME:    -> memref<2x3xf32, affine_map<(d0, d1) -> (d0, (d1 + -100))>>
// CHECK:         %[[N:.*]] = memref.alloc() : memref<2x3xf32, affine_map<(d0, d1) -> (d0, (d1 + -100))>>
// CHECK:         %[[T:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK:         affine.store %{{.*}}, %[[T]][%[[I:.*]] floordiv 4, %[[I]] mod 4] : memref<2x4xf32>
// CHECK:         func.return %[[N]]
// WARN: warning: apply-layout: left memref<2x3xf32, affine_map<(d0, d1) -> (d0, (d1 + -100))>> unnormalized: layout result d1 - 100 has the negative minimum -100 on shape [2, 3] (at index [0, 0])
// LOC: apply-layout-memref-partial.mlir:[[# @LINE + 2]]:1: warning: apply-layout: left memref<2x3xf32, affine_map<(d0, d1) -> (d0, (d1 + -100))>> unnormalized: layout result d1 - 100
// LOC-NEXT: func.func @negative_result
func.func @negative_result(%v: f32) -> memref<2x3xf32, #neg> {
  %0 = memref.alloc() : memref<2x3xf32, #neg>
  %1 = memref.alloc() : memref<8xf32, #tile>
  affine.for %i = 0 to 8 {
    "affine.store"(%v, %1, %i) <{map = affine_map<(d0) -> (d0)>}> : (f32, memref<8xf32, #tile>, index) -> ()
  }
  func.return %0 : memref<2x3xf32, #neg>
}

// A symbol the map does not use: normalized, and the allocation loses its symbol operand.
// CHECK-LABEL: func.func @unused_symbol
// CHECK:         %[[A:.*]] = memref.alloc() : memref<100xf32>
// CHECK:         affine.load %[[A]][%{{.*}} * 10 + %{{.*}}] : memref<100xf32>
func.func @unused_symbol(%s: index) {
  %A = memref.alloc()[%s] : memref<10x10xf32, affine_map<(d0, d1)[s0] -> (10 * d0 + d1)>>
  affine.for %i = 0 to 10 {
    affine.for %j = 0 to 10 {
      %v = "affine.load"(%A, %i, %j) <{map = affine_map<(d0, d1) -> (d0, d1)>}> : (memref<10x10xf32, affine_map<(d0, d1)[s0] -> (10 * d0 + d1)>>, index, index) -> f32
      "prevent.dce"(%v) : (f32) -> ()
    }
  }
  func.return
}

// A symbol the map uses: its extent is not known, the memref is left.
// CHECK-LABEL: func.func @used_symbol
// CHECK:         memref.alloc()[%{{.*}}] : memref<2x3xf32, affine_map<(d0, d1)[s0] -> ((((d0 * 3) + s0) + d1))>>
// WARN: warning: apply-layout: left memref<2x3xf32, affine_map<(d0, d1)[s0] -> ((((d0 * 3) + s0) + d1))>> unnormalized: its layout map has symbols (it uses s0)
func.func @used_symbol(%s: index) -> memref<2x3xf32, affine_map<(d0, d1)[s0] -> (d0 * 3 + s0 + d1)>> {
  %0 = memref.alloc()[%s] : memref<2x3xf32, affine_map<(d0, d1)[s0] -> (d0 * 3 + s0 + d1)>>
  func.return %0 : memref<2x3xf32, affine_map<(d0, d1)[s0] -> (d0 * 3 + s0 + d1)>>
}

// Not injective: upstream lets elements 2k and 2k+1 share storage; here it is left.
// CHECK-LABEL: func.func @not_injective
// CHECK:         memref.alloc() : memref<10xf32, affine_map<(d0) -> ((d0 floordiv 2))>>
// WARN: warning: apply-layout: left memref<10xf32, affine_map<(d0) -> ((d0 floordiv 2))>> unnormalized: its layout map is not injective on shape [10]: indices [0] and [1] both map to [0]
func.func @not_injective(%v: f32) {
  %A = memref.alloc() : memref<10xf32, affine_map<(d0) -> (d0 floordiv 2)>>
  %c0 = arith.constant 0 : index
  memref.store %v, %A[%c0] : memref<10xf32, affine_map<(d0) -> (d0 floordiv 2)>>
  func.return
}

// A -> B -> C where B hands its argument to an op that cannot be rewritten: the memref that
// flows through the calls is left in all three functions (and in D, which calls C); the
// allocation in C that is connected to nothing else is normalized.
// CHECK-LABEL: func.func @chain_a
// CHECK-SAME:    (%{{.*}}: memref<8xf64, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>)
// CHECK:         func.call @chain_b(%{{.*}}) : (memref<8xf64, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>) -> ()
// CHECK-LABEL: func.func @chain_b
// CHECK-SAME:    (%{{.*}}: memref<8xf64, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>)
// CHECK:         func.call @chain_c(%{{.*}}) : (memref<8xf64, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>) -> ()
// CHECK-LABEL: func.func @chain_c
// CHECK-SAME:    (%{{.*}}: memref<8xf64, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>)
// CHECK:         memref.alloc() : memref<2x4xf64>
// CHECK-LABEL: func.func @chain_d
// CHECK-SAME:    (%{{.*}}: memref<8xf64, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>)
// WARN: warning: apply-layout: left memref<8xf64, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>> unnormalized: it is used by 'test.opaque', which cannot be rewritten to the normalized layout (in @chain_b); so are the memrefs connected to it through calls and returns in @chain_a, @chain_c, @chain_d
// LOC: apply-layout-memref-partial.mlir:[[# @LINE + 7]]:3: warning: apply-layout: left memref<8xf64, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>> unnormalized: it is used by 'test.opaque'
// LOC-NEXT: "test.opaque"(%A)
func.func @chain_a(%A: memref<8xf64, #tile>) {
  func.call @chain_b(%A) : (memref<8xf64, #tile>) -> ()
  func.return
}
func.func @chain_b(%A: memref<8xf64, #tile>) {
  "test.opaque"(%A) : (memref<8xf64, #tile>) -> ()
  func.call @chain_c(%A) : (memref<8xf64, #tile>) -> ()
  func.return
}
func.func @chain_c(%A: memref<8xf64, #tile>) {
  %B = memref.alloc() : memref<8xf64, #tile>
  memref.dealloc %B : memref<8xf64, #tile>
  func.return
}
func.func @chain_d(%A: memref<8xf64, #tile>) {
  func.call @chain_c(%A) : (memref<8xf64, #tile>) -> ()
  func.return
}

// Returned memrefs: the result of @make is connected with the result of every call to it, so
// the alloca's memref is left everywhere it flows once one use cannot be rewritten.
// CHECK-LABEL: func.func @make
// CHECK-SAME:    -> memref<16xf32, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>>
// CHECK-LABEL: func.func @use_made
// CHECK:         memref.copy
// WARN: warning: apply-layout: left memref<16xf32, affine_map<(d0) -> ((d0 floordiv 4), (d0 mod 4))>> unnormalized: it is used by 'memref.copy', which cannot be rewritten to the normalized layout (in @use_made); so are the memrefs connected to it through calls and returns in @make
func.func @make() -> memref<16xf32, #tile> {
  %A = memref.alloca() : memref<16xf32, #tile>
  func.return %A : memref<16xf32, #tile>
}
func.func @use_made(%out: memref<16xf32>) {
  %A = func.call @make() : () -> memref<16xf32, #tile>
  "memref.copy"(%A, %out) : (memref<16xf32, #tile>, memref<16xf32>) -> ()
  func.return
}

// Declarations and their callers are normalized together (as upstream).
// CHECK-LABEL: func.func private @external(memref<4x4xf64>, f64) -> memref<2x4xf64>
// CHECK-LABEL: func.func @call_external
// CHECK-SAME:    (%{{.*}}: memref<4x4xf64>, %{{.*}}: f64) -> memref<2x4xf64>
// CHECK:         %[[R:.*]] = func.call @external(%{{.*}}, %{{.*}}) : (memref<4x4xf64>, f64) -> memref<2x4xf64>
// CHECK:         func.return %[[R]] : memref<2x4xf64>
func.func private @external(memref<16xf64, #tile>, f64) -> memref<8xf64, #tile>
func.func @call_external(%A: memref<16xf64, #tile>, %x: f64) -> memref<8xf64, #tile> {
  %r = func.call @external(%A, %x) : (memref<16xf64, #tile>, f64) -> memref<8xf64, #tile>
  func.return %r : memref<8xf64, #tile>
}

// The first problem in walk order is the strict-mode error.
// STRICT: apply-layout: cannot normalize memref<2x3xf32, affine_map<(d0, d1) -> (d0, (d1 + -100))>>: layout result d1 - 100 has the negative minimum -100 on shape [2, 3] (at index [0, 0])
