"""The IndexMap engine: quasi-affine algebra, exact proofs with isl, and bridges to IR forms."""
