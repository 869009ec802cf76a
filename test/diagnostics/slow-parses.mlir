// Inputs that once took exponential time to reject (issue 28): a string literal that does not
// close on its line made xDSL's lexer backtrack through every split of the rest of the line
// (`scope = "loca>` 54 s, `"local-1>` over 5 minutes). The first five are the issue's inputs;
// the others are the slowest token mutations of the lit inputs that test_parse_time.py found
// (a `"` put in place of a token). Each is rejected at once with a located ParseError.
// test/python/test_parse_time.py times every chunk of this file.
// RUN: physlayout-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// RUN: xdsl-opt %s --split-input-file --parsing-diagnostics | filecheck %s --check-prefix=STOCK

func.func @f(%p: !layout.ptr<f32, scope = "l> -> !layout.buffer<8xf32>
}
// CHECK: slow-parses.mlir:[[# @LINE - 2]]:43: error: string literal is not closed on its line (no closing '"' before the end of the line)
// STOCK: string literal is not closed on its line (no closing '"' before the end of the line)

// -----
func.func @f(%p: !layout.ptr<f32, scope = "lo> -> !layout.buffer<8xf32>
}
// CHECK: slow-parses.mlir:[[# @LINE - 2]]:43: error: string literal is not closed on its line (no closing '"' before the end of the line)
// STOCK: string literal is not closed on its line (no closing '"' before the end of the line)

// -----
func.func @f(%p: !layout.ptr<f32, scope = "loc> -> !layout.buffer<8xf32>
}
// CHECK: slow-parses.mlir:[[# @LINE - 2]]:43: error: string literal is not closed on its line (no closing '"' before the end of the line)
// STOCK: string literal is not closed on its line (no closing '"' before the end of the line)

// -----
func.func @f(%p: !layout.ptr<f32, scope = "loca> -> !layout.buffer<8xf32>
}
// CHECK: slow-parses.mlir:[[# @LINE - 2]]:43: error: string literal is not closed on its line (no closing '"' before the end of the line)
// STOCK: string literal is not closed on its line (no closing '"' before the end of the line)

// -----
func.func @f(%p: !layout.ptr<f32, scope = "local-1> -> !layout.buffer<8xf32>
}
// CHECK: slow-parses.mlir:[[# @LINE - 2]]:43: error: string literal is not closed on its line (no closing '"' before the end of the line)
// STOCK: string literal is not closed on its line (no closing '"' before the end of the line)

// -----
func.func @chain_second_not_injective(%a: !layout.buffer<8xf32, transform = [#layout.index_map"(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a, b) -> (a + b)>]>) {
  func.return
}
// CHECK: slow-parses.mlir:[[# @LINE - 3]]:95: error: string literal is not closed on its line
// STOCK: string literal is not closed on its line

// -----
func.func @i1_pad_value(%x: tensor<6xi1>) -> tensor<2x4xi1> {
  %r " layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32} : tensor<6xi1> -> tensor<2x4xi1>
  func.return %r : tensor<2x4xi1>
}
// CHECK: slow-parses.mlir:[[# @LINE - 3]]:6: error: string literal is not closed on its line
// STOCK: string literal is not closed on its line

// -----
func.func @outer_permuted(%s: tensor<10x6xf32>, %d: tensor<3x6x4xf32>, %p: f32) -> tensor<3x6x4xf32> {
  %0 = linalg.pack %s padding_value(%p : f32) outer_dims_perm = [1, 0] inner_dims_pos = "0] inner_tiles = [4] into %d : tensor<10x6xf32> -> tensor<3x6x4xf32>
  return %0 : tensor<3x6x4xf32>
}
// CHECK: slow-parses.mlir:[[# @LINE - 3]]:89: error: string literal is not closed on its line
// STOCK: string literal is not closed on its line

// -----
func.func @escape(%p: !layout.ptr<f32, scope = "global\q"> -> !layout.buffer<8xf32>
}
// CHECK: slow-parses.mlir:[[# @LINE - 2]]:55: error: invalid escape sequence in string literal (the escapes are \", \n, \t, \\ and two hex digits)
// STOCK: invalid escape sequence in string literal (the escapes are \", \n, \t, \\ and two hex digits)

// -----
func.func @store_type(%a: <!layout.buffer4x4xf32>, %i: index, %v: i32) {
  layout.store %v, %a[%i, %i] : !layout.buffer<4x4xf32>, i32
  func.return
}
// CHECK: slow-parses.mlir:[[# @LINE - 4]]:27: error: type expected
// STOCK: type expected
