"""The random-program checker (issue 12): generators of buffer-level and graph-level
modules (`programs` with `layouts` and `emitter`, `graphs`, and the models of `models` and
`vision_models`; `features` switches the known-bug features, `choices` records every
decision), the differential checker (`checker`, on `steps` and `values`; `model_checker`
for models) and the long campaign behind `make fuzz` (`campaign`). Test code, not part of
the `physlayout` package."""
