"""The driver's fast line runs this file as a script: ``python -S .../fleet/merge/_run_driver.py
%O %A %B %P``. A script is compiled on every run (never cached as ``.pyc``), so it stays this
small and imports :mod:`fleet.merge.driver` (cached) for the work. The package root, not this
folder, goes first on the path: this folder's ``profile.py`` would shadow the standard library's.
"""

import os
import sys

__all__: list[str] = []  # a script: nothing to import from it

if __name__ == "__main__":
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from fleet.merge.driver import main

    raise SystemExit(main(sys.argv[1:]))
