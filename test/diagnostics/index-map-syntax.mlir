// The invalid-input corpus, area index-map-syntax: malformed `#layout.index_map` attributes
// (one case per parser error), each with its exact message and source location.
// RUN: physlayout-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @missing_arrow() attributes {m = #layout.index_map<(i) (i)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:61: error: invalid index map: expected '->' at '(' (column 5) in '(i) (i)'
// CHECK-NEXT: func.func @missing_arrow() attributes {m = #layout.index_map<(i) (i)>} {

// -----
func.func @missing_paren() attributes {m = #layout.index_map<(i -> (i)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:71: error: invalid index map: unbalanced brackets (Unbalanced '>' in dialect symbol body): every '(' needs its ')' before the closing '>'
// CHECK-NEXT: func.func @missing_paren() attributes {m = #layout.index_map<(i -> (i)>} {

// -----
func.func @trailing_plus() attributes {m = #layout.index_map<(i) -> (i +)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:61: error: invalid index map: expected an expression at ')' (column 12) in '(i) -> (i +)'
// CHECK-NEXT: func.func @trailing_plus() attributes {m = #layout.index_map<(i) -> (i +)>} {

// -----
func.func @unknown_keyword() attributes {m = #layout.index_map<(i) -> (i div 2)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:63: error: invalid index map: expected ',', '|' or ')' after an output at 'div' (column 11) in '(i) -> (i div 2)'
// CHECK-NEXT: func.func @unknown_keyword() attributes {m = #layout.index_map<(i) -> (i div 2)>} {

// -----
func.func @floordiv_by_dim() attributes {m = #layout.index_map<(i, j) -> (i floordiv j)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:63: error: invalid index map: the divisor of floordiv must be an integer constant at 'j' (column 23) in '(i, j) -> (i floordiv j)'
// CHECK-NEXT: func.func @floordiv_by_dim() attributes {m = #layout.index_map<(i, j) -> (i floordiv j)>} {

// -----
func.func @mod_by_dim() attributes {m = #layout.index_map<(i, j) -> (i mod j)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:58: error: invalid index map: the divisor of mod must be an integer constant at 'j' (column 18) in '(i, j) -> (i mod j)'
// CHECK-NEXT: func.func @mod_by_dim() attributes {m = #layout.index_map<(i, j) -> (i mod j)>} {

// -----
func.func @ceildiv_zero() attributes {m = #layout.index_map<(i) -> (i ceildiv 0)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:60: error: invalid index map: divisor must be a positive constant, got 0 at '0' (column 19) in '(i) -> (i ceildiv 0)'
// CHECK-NEXT: func.func @ceildiv_zero() attributes {m = #layout.index_map<(i) -> (i ceildiv 0)>} {

// -----
func.func @ceildiv_negative() attributes {m = #layout.index_map<(i) -> (i ceildiv -2)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:64: error: invalid index map: divisor must be a positive constant, got -2 at '-' (column 19) in '(i) -> (i ceildiv -2)'
// CHECK-NEXT: func.func @ceildiv_negative() attributes {m = #layout.index_map<(i) -> (i ceildiv -2)>} {

// -----
func.func @square() attributes {m = #layout.index_map<(i) -> (i * i)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:54: error: invalid index map: expression 'i * i' is not quasi-affine: product of two non-constant terms at '*' (column 11) in '(i) -> (i * i)'
// CHECK-NEXT: func.func @square() attributes {m = #layout.index_map<(i) -> (i * i)>} {

// -----
func.func @float_constant() attributes {m = #layout.index_map<(i) -> (i * 2.5)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:62: error: invalid index map: unexpected character '.' at column 14 in '(i) -> (i * 2.5)'
// CHECK-NEXT: func.func @float_constant() attributes {m = #layout.index_map<(i) -> (i * 2.5)>} {

// -----
func.func @separator_last() attributes {m = #layout.index_map<(i, j) -> (i, j |)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:62: error: invalid index map: axis separator '|' must stand between two outputs at ')' (column 18) in '(i, j) -> (i, j |)'
// CHECK-NEXT: func.func @separator_last() attributes {m = #layout.index_map<(i, j) -> (i, j |)>} {

// -----
func.func @double_separator() attributes {m = #layout.index_map<(i, j) -> (i | | j)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:64: error: invalid index map: axis separator '|' must stand between two outputs at '|' (column 16) in '(i, j) -> (i | | j)'
// CHECK-NEXT: func.func @double_separator() attributes {m = #layout.index_map<(i, j) -> (i | | j)>} {

// -----
func.func @separator_in_inputs() attributes {m = #layout.index_map<(i | j) -> (i, j)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:67: error: invalid index map: expected ',' at '|' (column 4) in '(i | j) -> (i, j)'
// CHECK-NEXT: func.func @separator_in_inputs() attributes {m = #layout.index_map<(i | j) -> (i, j)>} {

// -----
func.func @numeric_dim_name() attributes {m = #layout.index_map<(1) -> (1)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:64: error: invalid index map: expected a dimension name at '1' (column 2) in '(1) -> (1)'
// CHECK-NEXT: func.func @numeric_dim_name() attributes {m = #layout.index_map<(1) -> (1)>} {

// -----
func.func @unbalanced() attributes {m = #layout.index_map<(i) -> ((i + 1)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:74: error: invalid index map: unbalanced brackets (Unbalanced '>' in dialect symbol body): every '(' needs its ')' before the closing '>'
// CHECK-NEXT: func.func @unbalanced() attributes {m = #layout.index_map<(i) -> ((i + 1)>} {

// -----
func.func @trailing_garbage() attributes {m = #layout.index_map<(i) -> (i) x>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:64: error: invalid index map: unexpected token after the index map at 'x' (column 12) in '(i) -> (i) x'
// CHECK-NEXT: func.func @trailing_garbage() attributes {m = #layout.index_map<(i) -> (i) x>} {

// -----
func.func @trailing_comma() attributes {m = #layout.index_map<(i,) -> (i)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:62: error: invalid index map: expected a dimension name at ')' (column 4) in '(i,) -> (i)'
// CHECK-NEXT: func.func @trailing_comma() attributes {m = #layout.index_map<(i,) -> (i)>} {

// -----
func.func @no_parens() attributes {m = #layout.index_map<i -> i>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:57: error: invalid index map: expected '(' at 'i' (column 1) in 'i -> i'
// CHECK-NEXT: func.func @no_parens() attributes {m = #layout.index_map<i -> i>} {

// -----
func.func @symbols() attributes {m = #layout.index_map<(i)[s] -> (i + s)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:55: error: invalid index map: unexpected character '[' at column 4 in '(i)[s] -> (i + s)'
// CHECK-NEXT: func.func @symbols() attributes {m = #layout.index_map<(i)[s] -> (i + s)>} {

// -----
func.func @empty() attributes {m = #layout.index_map<>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:53: error: invalid index map: expected '(' at end of input (column 1) in ''
// CHECK-NEXT: func.func @empty() attributes {m = #layout.index_map<>} {

// -----
func.func @string_map() attributes {m = #layout.index_map<"(i) -> (i)">} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:58: error: invalid index map: unexpected character '"' at column 1 in '"(i) -> (i)"'
// CHECK-NEXT: func.func @string_map() attributes {m = #layout.index_map<"(i) -> (i)">} {

// -----
func.func @power() attributes {m = #layout.index_map<(i) -> (i ** 2)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:53: error: invalid index map: expected an expression at '*' (column 12) in '(i) -> (i ** 2)'
// CHECK-NEXT: func.func @power() attributes {m = #layout.index_map<(i) -> (i ** 2)>} {

// -----
func.func @nested_zero_divisor() attributes {m = #layout.index_map<(i) -> ((i floordiv 2) mod 0)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:67: error: invalid index map: divisor must be a positive constant, got 0 at '0' (column 28) in '(i) -> ((i floordiv 2) mod 0)'
// CHECK-NEXT: func.func @nested_zero_divisor() attributes {m = #layout.index_map<(i) -> ((i floordiv 2) mod 0)>} {

// -----
func.func @product_of_quotients() attributes {m = #layout.index_map<(i, j) -> ((i floordiv 2) * (j mod 2))>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:68: error: invalid index map: expression '(i floordiv 2) * (j mod 2)' is not quasi-affine: product of two non-constant terms at '*' (column 27) in '(i, j) -> ((i floordiv 2) * (j mod 2))'
// CHECK-NEXT: func.func @product_of_quotients() attributes {m = #layout.index_map<(i, j) -> ((i floordiv 2) * (j mod 2))>} {

// -----
func.func @keyword_dim_name() attributes {m = #layout.index_map<(mod) -> (mod)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:64: error: invalid index map: expected a dimension name at 'mod' (column 2) in '(mod) -> (mod)'
// CHECK-NEXT: func.func @keyword_dim_name() attributes {m = #layout.index_map<(mod) -> (mod)>} {

// -----
func.func @empty_output() attributes {m = #layout.index_map<(i) -> (i, )>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:60: error: invalid index map: expected an output expression at ')' (column 12) in '(i) -> (i, )'
// CHECK-NEXT: func.func @empty_output() attributes {m = #layout.index_map<(i) -> (i, )>} {

// -----
func.func @symbol_factor() attributes {m = #layout.index_map<(i) -> (i * N)>} {
  func.return
}
// CHECK: index-map-syntax.mlir:[[# @LINE - 3]]:61: error: invalid index map: unknown dimension 'N' at 'N' (column 13) in '(i) -> (i * N)'
// CHECK-NEXT: func.func @symbol_factor() attributes {m = #layout.index_map<(i) -> (i * N)>} {
