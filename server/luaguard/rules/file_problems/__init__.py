"""Rules of the file problems family: one module per rule id."""
