"""Type stub of the C extension built from fleet/graph/_c/pyextract.c."""

from typing import Any

def init(language: object, threaded: bool = False, /) -> None: ...
def parse(src: bytes, /) -> bool: ...
def extract(
    src: bytes, path: str, module_id: str, rawref_type: type, symbol_type: type,
    want_params: bool, /
) -> tuple[bool, list[Any], list[tuple[int, int, str]], dict[str, tuple[str, ...]], list[Any],
           dict[str, frozenset[str]], dict[str, dict[str, str]], list[tuple[Any, ...]]]: ...
