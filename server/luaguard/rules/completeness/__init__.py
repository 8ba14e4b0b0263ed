"""Rules of the completeness family: one module per rule id."""
