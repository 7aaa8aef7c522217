"""The catalogue of reproduction cases: one plain-JAX module per case (see docs/cases.md)."""
