"""Profile-guided build of fleet.graph._native: the training run (see setup.py).

Run by setup.py as ``python train.py EXTENSION.so``: loads the instrumented extension from that
path and extracts every fourth Python file of this interpreter's stdlib, so that gcc's
``-fprofile-use`` build lays out the parser's and the walk's hot paths (parse ~15% faster).
"""

from __future__ import annotations

import collections
import importlib.util
import sys
import sysconfig
from pathlib import Path


def main(so_path: str) -> int:
    spec = importlib.util.spec_from_file_location("fleet.graph._native", so_path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {so_path}")
    native = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(native)
    import tree_sitter_python

    native.init(tree_sitter_python.language())
    symbol = collections.namedtuple(
        "symbol", "id path qualname name kind language start_byte end_byte start_line end_line "
        "sig_start_byte sig_end_byte body_hash parent")
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)[::4]
    done = 0
    for path in files:
        try:
            src = path.read_bytes()
        except OSError:
            continue
        if len(src) > 1_000_000:
            continue
        rel = path.relative_to(root).as_posix()
        native.extract(src, rel, f"{rel}::<module>", symbol,
                       path.name.startswith("test_"))
        done += 1
    print(f"trained on {done} stdlib files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
