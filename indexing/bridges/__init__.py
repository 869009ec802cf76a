"""Bridges between quasi-affine expressions (`physlayout.indexing.quasi_affine.Expr`) and
every other form, one module per form:

* `affine`: xDSL `AffineExpr` in both directions (`affine_to_expr`, `expr_to_affine`);
  `IndexMap.from_affine_map`/`to_affine_map` use them.
* `arith`: IR index arithmetic; `IndexAnalysis` reads `arith`/`affine.apply` index values
  as expressions over leaf values, `ExprEmitter` writes expressions back as `arith` ops
  with exact floor semantics.
* `c_text`: C text (`expr_to_c`), used by the OpenCL C target.
* `isl`: islpy maps, sets, affs and constraints (`build_map`, `expr_to_isl`,
  `aff_to_expr`, `set_to_disjuncts`, ...), used by the exact proofs of `IndexMap`.

The package re-exports nothing: import the module of the form you need.
"""
