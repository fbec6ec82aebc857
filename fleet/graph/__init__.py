"""Symbol graph: a tree-sitter index of a repository into a networkx ``SymbolGraph``.

The public API (the seam other stages code against):

``index(repo, previous=None, *, languages=None, max_file_bytes=1_000_000, progress=None)
-> SymbolGraph``
    Parse every source file with tree-sitter (Python first-class; JavaScript/TypeScript and Go
    through per-language query files). With ``previous``, re-parse only changed files and
    re-resolve only the files whose recorded lookups an interface change touched.

``Symbol`` (frozen): ``id`` (``path::Qualified.name``; module code is ``path::<module>``),
``path``, ``qualname``, ``name``, ``kind`` (``module`` | ``class`` | ``function`` | ``method`` |
``variable``), ``language``, ``start_byte``, ``end_byte``, ``start_line``, ``end_line`` (1-based,
inclusive), ``sig_start_byte``, ``sig_end_byte``, ``body_hash``, ``parent`` (id or ``None``).

``Reference`` (frozen): ``src`` (the innermost symbol containing it), ``path``, ``name`` (dotted,
as written: ``dt.datetime.utcnow``), ``target`` (a symbol id when it resolves inside the repo,
else the fully-qualified dotted name of an external such as ``datetime.datetime.utcnow``, else
``None``), ``kind`` (``call`` | ``attribute`` | ``name`` | ``import`` | ``inherit``), ``line``,
``col``, ``start_byte``, ``end_byte``, ``resolved``.

``SymbolGraph``: ``root``, ``symbols`` (id -> Symbol), ``files`` (path -> ``FileRecord`` with
``language``, ``sha256``, ``lines``, ``status`` ``ok``|``partial``|``skipped`` and ``reason``),
``references``, ``imports`` (path -> local name -> dotted target: module-level imports only; an
import inside a function or class body binds in that scope, as in Python), ``graph``
(``nx.DiGraph``; edge ``u -> v`` means *u depends on v*, attribute ``kinds``), and ``symbol(id)``,
``symbols_in(path)``, ``enclosing(path, byte)``, ``dotted(id)``, ``resolve_dotted(name)``,
``dependencies(id)``, ``dependents(ids)`` (transitive closure), ``scc(id)``, ``lock_rank(id)``
(topological order of the SCC condensation, dependencies first, ties by id),
``tests_reaching(ids)``, ``resolved_share()``, ``stats()``, ``save(path)``, ``load(path)``.

``python_extractor() -> str``: ``"native"`` when Python files take the C walk
(``fleet.graph._native``, built at install), ``"query"`` when they take the query path (no C
compiler at install, or ``FLEET_GRAPH_NATIVE=0``). Both give the same graph.
"""

from fleet.graph._extract_native import available as _native_available
from fleet.graph._graph import SymbolGraph, is_test_file
from fleet.graph._index import (
    MAX_FILE_BYTES,
    IndexingError,
    Progress,
    index,
    read_source,
    source_files,
)
from fleet.graph._lang import LANGUAGE_NAMES
from fleet.graph._model import FileRecord, Reference, Symbol
from fleet.graph._persist import ForeignSnapshot, SnapshotError
from fleet.graph._save_fork import PendingSave, check_writable, save_started

load = SymbolGraph.load


def python_extractor() -> str:
    """Which extractor Python files take: ``native`` (the C walk) or ``query``."""
    return "native" if _native_available() else "query"


__all__ = [
    "LANGUAGE_NAMES",
    "MAX_FILE_BYTES",
    "FileRecord",
    "ForeignSnapshot",
    "IndexingError",
    "PendingSave",
    "Progress",
    "Reference",
    "SnapshotError",
    "Symbol",
    "SymbolGraph",
    "check_writable",
    "index",
    "is_test_file",
    "load",
    "python_extractor",
    "read_source",
    "save_started",
    "source_files",
]
