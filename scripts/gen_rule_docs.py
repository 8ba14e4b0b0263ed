"""Write ``docs/rules/ID.md`` and the README's rule table from the rule modules of
``server/luaguard/rules`` (:mod:`luaguard.rules.docs`); ``--check`` only lists what is stale
and exits 1 if anything is.  Usage: ``python scripts/gen_rule_docs.py [--check]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="list stale files, write nothing")
    args = ap.parse_args(argv)
    from luaguard.rules.docs import stale_files, write_files

    paths = stale_files(ROOT) if args.check else write_files(ROOT)
    for p in paths:
        print(f"{'stale' if args.check else 'written'}: {p.relative_to(ROOT)}")
    return 1 if args.check and paths else 0


if __name__ == "__main__":
    sys.exit(main())
