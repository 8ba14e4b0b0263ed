"""``python -m luaguard``: the same as the ``luaguard`` command."""

import sys

from .cli import main

sys.exit(main())
