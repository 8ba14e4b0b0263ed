"""luaguard's rules, one module per rule id (ruff's and selene's shape).

``luaguard/rules/<family>/<id>.py`` holds one :class:`~luaguard.rules.base.Rule` as
``RULE``; its docstring is the rule's documentation page (``luaguard rule ID``,
``docs/rules/ID.md``).  :mod:`~luaguard.rules.registry` finds them; :mod:`~luaguard.rules.wording`
holds the words and fix text they share; :mod:`~luaguard.rules.docs` makes the pages.
The checks that find the problems are in :mod:`luaguard.checks`.
"""
