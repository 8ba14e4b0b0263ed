"""Rules of the instances family: one module per rule id."""
