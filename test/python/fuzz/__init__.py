"""The random-program checker (issue 12): generators of buffer-level and graph-level
modules (`programs`, `graphs`), the differential checker (`checker`) and the long campaign
behind `make fuzz` (`campaign`). Test code, not part of the `physlayout` package."""
