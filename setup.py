"""Build of the one C extension, ``fleet.graph._native`` (everything else is in pyproject.toml).

It compiles the vendored tree-sitter runtime (third_party/tree-sitter, MIT, unmodified: see its
VENDORED.md) through fleet/graph/_c/runtime.c (the runtime's lib.c without the Wasm store)
together with the Python extractor (fleet/graph/_c/pyextract.c, one translation unit that
includes pyextract_visit.c, pyextract_walk.c and pyextract_extract.c), the SCC condensation
(fleet/graph/_c/condense.c), the graph build's loops over the reference columns
(fleet/graph/_c/edges.c), the resolver's per-reference loop and scope lookup
(fleet/graph/_c/fanout.c), its key filter and re-interning (fleet/graph/_c/keys.c) and
the type facts' scan for calls on a call's result (fleet/graph/_c/facts.c).

With gcc the build is profile-guided: an instrumented build extracts a quarter of this
interpreter's stdlib (fleet/graph/_c/train.py, a few seconds), then the final build uses that
profile (the parse runs ~15% faster). ``FLEET_NATIVE_PGO=0`` builds without it; any failure of
that path falls back to the plain build. When no C compiler is present at all, the install
continues without the extension and ``fleet.graph`` uses the query path (same results, slower);
``FLEET_REQUIRE_NATIVE=1`` (CI) makes that an error instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

_C = os.path.join("fleet", "graph", "_c")
_TS = os.path.join("third_party", "tree-sitter")
_FLAGS = ["-std=c11", "-fvisibility=hidden", "-Wno-unused-parameter"]


class NativeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        if self.compiler.compiler_type != "msvc":
            ext.extra_compile_args = list(_FLAGS)
        try:
            if self.compiler.compiler_type == "unix" and os.environ.get(
                    "FLEET_NATIVE_PGO", "1") != "0":
                try:
                    self._build_profile_guided(ext)
                    return
                except Exception as exc:
                    print(f"note: profile-guided build of {ext.name} failed ({exc}); "
                          "building without a profile")
            super().build_extension(ext)
        except Exception as exc:  # no compiler: the pure-Python path still works
            if os.environ.get("FLEET_REQUIRE_NATIVE"):
                raise
            print(f"warning: {ext.name} not built ({exc}); fleet.graph uses the query path")

    def _build_profile_guided(self, ext: Extension) -> None:
        work = os.path.join(self.build_temp, "pgo")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)

        def compile_with(flags: list[str]) -> list[str]:
            # the same object paths both times: that is where gcc keeps the profile (.gcda)
            return self.compiler.compile(
                ext.sources, output_dir=work, macros=ext.define_macros,
                include_dirs=ext.include_dirs, extra_postargs=ext.extra_compile_args + flags)

        instrumented = os.path.join(work, "_native_instrumented.so")
        self.compiler.link_shared_object(compile_with(["-fprofile-generate"]), instrumented,
                                         extra_postargs=["-fprofile-generate"])
        subprocess.run([sys.executable, os.path.join(_C, "train.py"), instrumented],
                       check=True, timeout=600)
        objects = compile_with(["-fprofile-use", "-fprofile-partial-training",
                                "-Wno-missing-profile"])
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        self.compiler.link_shared_object(
            objects, target, libraries=self.get_libraries(ext), library_dirs=ext.library_dirs,
            runtime_library_dirs=ext.runtime_library_dirs,
            export_symbols=self.get_export_symbols(ext), build_temp=self.build_temp,
            target_lang="c")


setup(
    ext_modules=[
        Extension(
            "fleet.graph._native",
            sources=[os.path.join(_C, "pyextract.c"), os.path.join(_C, "condense.c"),
                     os.path.join(_C, "edges.c"), os.path.join(_C, "fanout.c"),
                     os.path.join(_C, "keys.c"), os.path.join(_C, "facts.c"),
                     os.path.join(_C, "runtime.c")],
            # the parts pyextract.c and fanout.c include: a change to one rebuilds the extension
            depends=[*(os.path.join(_C, f"pyextract_{part}.c")
                       for part in ("visit", "walk", "extract")),
                     *(os.path.join(_C, f"fanout_{part}.c")
                       for part in ("miss", "walk", "chain", "mro"))],
            include_dirs=[os.path.join(_TS, "include"), os.path.join(_TS, "src")],
            define_macros=[("_DEFAULT_SOURCE", None), ("TREE_SITTER_HIDE_SYMBOLS", None)],
        )
    ],
    cmdclass={"build_ext": NativeBuild},
)
