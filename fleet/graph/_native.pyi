"""Type stub of the C extension built from fleet/graph/_c/pyextract.c."""

from typing import Any

def init(language: object, threaded: bool = False, /) -> None: ...
def fanout(
    scopes: tuple[str, ...], names: tuple[str, ...], kinds: bytes, kind_names: tuple[str, ...],
    local: set[str], python: bool, classes: dict[str, str | None], enclosing: Any,
    cache: dict[Any, Any], miss: Any, /
) -> tuple[list[str | None], bytes]: ...
def parse(src: bytes, /) -> bool: ...
def condense(offsets: Any, targets: Any, /) -> tuple[bytes, bytes]: ...
def extract(
    src: bytes, path: str, module_id: str, symbol_type: type, want_params: bool, /
) -> tuple[bool, list[Any], list[tuple[int, int, str]], dict[str, tuple[str, ...]],
           tuple[list[str], list[str], bytes, bytes, bytes, bytes, bytes],
           dict[str, frozenset[str]], dict[str, dict[str, str]], list[tuple[Any, ...]]]: ...
