"""Build script for luaguard's one compiled module (everything else is in pyproject.toml).

``luaguard.guard._walk`` is the decoding guard's mask walk in C (``server/luaguard/guard/
_walk.c``).  It is optional: where it cannot be compiled (no C compiler), the install goes
on and the guard uses the same walk in Python (``luaguard.guard.vocab``), slower.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "luaguard.guard._walk",
            ["server/luaguard/guard/_walk.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
