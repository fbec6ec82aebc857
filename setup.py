"""Build of the one C extension, ``fleet.graph._native`` (everything else is in pyproject.toml).

It compiles the tree-sitter runtime bundled in fleet/graph/_c/tree-sitter (MIT, the core that
py-tree-sitter 0.26.1 ships) together with the Python extractor. When no C compiler is present,
the build continues without it and ``fleet.graph`` uses the query path (same results, slower);
``fleet index`` says which path ran.
"""

from __future__ import annotations

import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

_C = os.path.join("fleet", "graph", "_c")
_TS = os.path.join(_C, "tree-sitter")


class OptionalBuildExt(build_ext):
    def build_extension(self, ext: Extension) -> None:
        if self.compiler.compiler_type != "msvc":
            ext.extra_compile_args = ["-std=c11", "-fvisibility=hidden",
                                      "-Wno-unused-parameter"]
        try:
            super().build_extension(ext)
        except Exception as exc:  # no compiler: the pure-Python path still works
            if os.environ.get("FLEET_REQUIRE_NATIVE"):
                raise
            print(f"warning: fleet.graph._native not built ({exc}); using the query path")


setup(
    ext_modules=[
        Extension(
            "fleet.graph._native",
            sources=[os.path.join(_C, "pyextract.c"), os.path.join(_TS, "src", "lib.c")],
            include_dirs=[os.path.join(_TS, "include"), os.path.join(_TS, "src")],
            define_macros=[("_DEFAULT_SOURCE", None), ("TREE_SITTER_HIDE_SYMBOLS", None)],
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
