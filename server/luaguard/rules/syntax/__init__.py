"""Rules of the syntax family: one module per rule id."""
