"""Imported first by the run launcher's fork server (``PRELOAD`` in engine/run_launcher.py): the
cyclic garbage collector off from here, through Dagster's and the definitions' imports, until
``engine._preload`` has imported the rest and frozen it all (``fleet_pipelines._startup``). The
fork server keeps it off (it only forks); a forked run worker turns it on first thing
(``run_launcher._run``)."""

import gc

from fleet_pipelines._startup import own_process

__all__: list[str] = []  # imported for what it does, it exports nothing

own_process()
gc.disable()
