"""Build script for luaguard's one compiled module (everything else is in pyproject.toml).

``luaguard.guard._walk`` is the decoding guard's mask walk in C (``server/luaguard/guard/
_walk.c``).  It is optional: where it cannot be compiled (no C compiler), the install goes
on and the guard uses the same walk in Python (``luaguard.guard.vocab``), slower.  The
constants it shares with the Python automaton are written into ``_walk_layout.h`` (in the
build's temporary folder) from their Python definitions first: ``luaguard/guard/
walk_layout.py``, loaded by its path (standard library only).
"""

import importlib.util
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

GUARD = Path(__file__).resolve().parent / "server" / "luaguard" / "guard"


class BuildExtWithLayout(build_ext):
    """``build_ext`` that first writes ``_walk_layout.h`` and puts its folder on the include path."""

    def run(self):
        spec = importlib.util.spec_from_file_location("luaguard_walk_layout", GUARD / "walk_layout.py")
        layout = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(layout)
        include = Path(self.build_temp) / "luaguard_walk_layout"
        include.mkdir(parents=True, exist_ok=True)
        (include / "_walk_layout.h").write_text(layout.header(GUARD), encoding="utf-8")
        for ext in self.extensions:
            ext.include_dirs.append(str(include))
        super().run()


setup(
    cmdclass={"build_ext": BuildExtWithLayout},
    ext_modules=[
        Extension(
            "luaguard.guard._walk",
            ["server/luaguard/guard/_walk.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ],
)
