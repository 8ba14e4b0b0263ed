"""Rules about luaguard's own suppression comments (:mod:`luaguard.suppressions`)."""
