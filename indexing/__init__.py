"""The IndexMap engine, independent of any IR (like MLIR's Analysis/Presburger).

- quasi-affine algebra: `quasi_affine` (expressions, operators, printer), `expr_parser`,
  `expr_range` (interval analysis), `simplify` (canonical forms);
- index maps: `index_map` (the `IndexMap` value), `map_constructors` (text, layout strings,
  Python functions), `shapes` (separators, flattening), `extents` (structural extents,
  padding), `proofs` (exact isl decisions), `inverse` (exact inverses);
- `bridges`: conversions between expressions and affine exprs, IR, C text and isl.
"""
