// REQUIRES: mlir-runner
// The RFC 0039 examples (inputs/rfc0039_examples.mlir) lowered by physlayout, then by
// mlir-opt to LLVM, run by mlir-runner; custom and generic output run alike. The printed
// buffers are the physical layouts the RFC derives (numpy reference: test_lower_layout.py).
// RUN: xdsl-opt %S/inputs/rfc0039_examples.mlir -p apply-layout,flatten-buffers,lower-layout | %python -m physlayout.runtime.mlir_runner | filecheck %s
// RUN: xdsl-opt %S/inputs/rfc0039_examples.mlir -p physlayout-memref --print-op-generic | %python -m physlayout.runtime.mlir_runner | filecheck %s
// RUN: xdsl-opt %S/inputs/rfc0039_examples.mlir -p physlayout-memref | %python -m physlayout.runtime.mlir_runner --harness vector_views --entry harness | filecheck %s --check-prefix=VEC

// Example 1: row-major flat 1-D; x[2, 3] = 7 lands at 2*6 + 3 = 15.
// CHECK:      rank = 1 offset = 0 sizes = [24] strides = [1] data =
// CHECK-NEXT: [0,  1,  2,  3,  4,  5,  10,  11,  12,  13,  14,  15,  20,  21,  22,  7,  24,  25,  30,  31,  32,  33,  34,  35]

// Example 2: transposed; x[i, j] is at [j, i], so column i holds logical row i.
// CHECK:      rank = 2 offset = 0 sizes = [6, 4] strides = [4, 1] data =
// CHECK-NEXT: {{\[}}[0,   10,   20,   30],
// CHECK-NEXT:  [1,   11,   21,   31],
// CHECK-NEXT:  [2,   12,   22,   32],
// CHECK-NEXT:  [3,   13,   7,   33],
// CHECK-NEXT:  [4,   14,   24,   34],
// CHECK-NEXT:  [5,   15,   25,   35]]

// Example 3: NCHWc [2, 2, 4, 4, 4]: channels 0-3 of every pixel first, then 4-7.
// CHECK:      rank = 5 offset = 0 sizes = [2, 2, 4, 4, 4] strides = [128, 64, 16, 4, 1] data =
// CHECK-NEXT: {{\[}}[{{\[}}[{{\[}}0,      1,      2,      3],
// CHECK-NEXT:     [10,      11,      12,      13],
// CHECK:        [{{\[}}[4,      5,      6,      7],
// CHECK:          [1334,      1335,      1336,      1337]]]]]

// Example 4: the separator after h makes it 2-D [n*C4*H + c4*H + h, w*4 + c mod 4];
// x[1, 3, 2, 5] = 1325 sits at [1*8 + 1*4 + 3, 2*4 + 1] = [15, 9].
// CHECK:      rank = 2 offset = 0 sizes = [16, 16] strides = [16, 1] data =
// CHECK-NEXT: {{\[}}[0,   1,   2,   3,   10,   11,   12,   13,   20,   21,   22,   23,   30,   31,   32,   33],
// CHECK-NEXT:  [100,   101,   102,   103,   110,
// CHECK:       [1304,   1305,   1306,   1307,   1314,   1315,   1316,   1317,   1324,   1325,   1326,   1327,   1334,   1335,   1336,   1337]]

// The probes: x[1, 5] = 15 in the 2-D examples, x[1, 3, 2, 5] = 1325 in the NHWC ones.
// CHECK:      rank = 1 offset = 0 sizes = [4] strides = [1] data =
// CHECK-NEXT: [15,  15,  1325,  1325]

// The vector accesses (RFC 0039 option 1) under the generated harness: the input
// (7*i mod 23) - 11, then the output, doubled through the vector<4xf32> alias.
// VEC:      sizes = [16] strides = [1] data =
// VEC-NEXT: [-11,  -4,  3,  10,  -6,  1,  8,  -8,  -1,  6,  -10,  -3,  4,  11,  -5,  2]
// VEC:      sizes = [16] strides = [1] data =
// VEC-NEXT: [-22,  -8,  6,  20,  -12,  2,  16,  -16,  -2,  12,  -20,  -6,  8,  22,  -10,  4]
