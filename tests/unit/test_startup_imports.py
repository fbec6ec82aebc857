"""fleet_pipelines._startup: start-up imports without the cyclic collector, then frozen."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fleet.graph import SymbolGraph
from fleet_pipelines._startup import heavy_imports


def test_the_collector_is_off_inside_and_restored_after_with_everything_frozen() -> None:
    script = (
        "import gc\n"
        "from fleet_pipelines._startup import heavy_imports, own_process\n"
        "assert gc.isenabled() and gc.get_freeze_count() == 0\n"
        "with heavy_imports():  # not yet fleet's own process: nothing frozen\n"
        "    assert not gc.isenabled()\n"
        "    import json\n"
        "assert gc.isenabled() and gc.get_freeze_count() == 0\n"
        "own_process()\n"
        "with heavy_imports():\n"
        "    assert not gc.isenabled()\n"
        "    import decimal, email.parser  # made while the collector is off\n"
        "assert gc.isenabled()\n"
        "frozen = gc.get_freeze_count()\n"
        "assert frozen > 1000, frozen\n"
        "gc.disable()\n"
        "with heavy_imports():\n"
        "    pass\n"
        "assert not gc.isenabled()  # off before: left off\n"
        "print('ok', frozen)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr


def test_an_exception_inside_still_turns_the_collector_back_on_and_freezes_nothing_here(
        ) -> None:
    was_on, frozen = gc.isenabled(), gc.get_freeze_count()
    try:
        with heavy_imports():
            raise ImportError("no such module")
    except ImportError:
        pass
    assert gc.isenabled() == was_on
    assert gc.get_freeze_count() == frozen  # a test process is not fleet's own


def test_main_called_as_a_function_leaves_the_callers_objects_unfrozen() -> None:
    from fleet_pipelines.cli import main

    frozen = gc.get_freeze_count()
    assert main(["version"]) == 0
    assert gc.get_freeze_count() == frozen and gc.isenabled()


def test_the_dagster_entry_runs_dagsters_command_and_refuses_an_unknown_one() -> None:
    entry = [sys.executable, "-m", "fleet_pipelines._dagster_entry"]
    unknown = subprocess.run([*entry, "dagit"], capture_output=True, text=True, timeout=60,
                             check=False)
    assert unknown.returncode == 2
    assert "usage: python -m fleet_pipelines._dagster_entry {dagster-daemon|dagster}" in (
        unknown.stderr)
    helped = subprocess.run([*entry, "dagster-daemon", "run", "--help"], capture_output=True,
                            text=True, timeout=120, check=False)
    assert helped.returncode == 0, helped.stderr
    assert "Usage: dagster-daemon run" in helped.stdout, helped.stdout


def test_the_entry_passes_what_dagsters_console_scripts_pass() -> None:
    import dagster._cli

    from fleet_pipelines._dagster_entry import ENTRIES

    assert ENTRIES["dagster"][2] == {"auto_envvar_prefix": dagster._cli.ENV_PREFIX}
    assert ENTRIES["dagster-daemon"][2] == {"obj": {}}


def test_main_called_again_reuses_one_command_and_reads_the_environment_each_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A caller's ``main(argv)`` builds typer's click command once per process; every call
    still sees the environment of its moment (the commands read it when they run)."""
    from fleet_pipelines import cli

    assert cli.main(["version"]) == 0
    command = cli._embedded_command()
    for name in ("one", "two"):
        monkeypatch.setenv("FLEET_STORE_URL", f"sqlite:///{tmp_path / name}.db")
        capsys.readouterr()
        assert cli.main(["ledger", "verify"]) == 2  # no store there: the error names it
        assert f"no fleet store at sqlite:///{tmp_path / name}.db" in \
            "".join(capsys.readouterr()), name
    assert cli._embedded_command() is command


_ENDING = (
    "import atexit, sys, threading\n"
    "from fleet_pipelines._startup import end_process, own_process, skip_teardown\n"
    "class Freed:\n"
    "    def __del__(self):\n"
    "        sys.stderr.write('freed\\n')\n"
    "kept = Freed()  # its __del__ runs only if the interpreter tears the module down\n"
    "atexit.register(lambda: sys.stderr.write('exit handler\\n'))\n"
    "sys.stdout.write('buffered, no newline')  # to a pipe: still in the buffer\n"
    "{setup}\n"
    "sys.exit(end_process(3))\n"
)


def _end(setup: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _ENDING.format(setup=setup)],
                          capture_output=True, text=True, timeout=60, check=False)


def test_a_command_that_allows_it_ends_without_the_teardown_but_with_its_output_and_handlers(
        ) -> None:
    done = _end("own_process(); skip_teardown()")
    assert done.returncode == 3
    assert done.stdout == "buffered, no newline"  # flushed before the end
    assert done.stderr == "exit handler\n"  # the handlers ran, nothing was freed


@pytest.mark.parametrize("setup", [
    "skip_teardown()",  # not fleet's own process (a test, a server calling main)
    "own_process()",  # fleet's own, but the command did not allow it
    # another thread alive: the interpreter waits for it at exit
    "own_process(); skip_teardown()\n"
    "threading.Thread(target=threading.Event().wait, args=(0.5,)).start()",
])
def test_otherwise_the_process_ends_as_usual(setup: str) -> None:
    done = _end(setup)
    assert done.returncode == 3
    assert done.stdout == "buffered, no newline"
    assert done.stderr.splitlines() == ["exit handler", "freed"]


def _fleet_verbose(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``fleet ARGS`` run as the console script on a one-file repository (``{repo}`` in
    ``args``) under ``PYTHONVERBOSE``, which prints "# cleanup[...]" as the interpreter tears its
    modules down."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def f():\n    return g()\n\ndef g():\n    return 1\n")
    fleet = Path(sys.executable).with_name("fleet")
    done = subprocess.run([str(fleet), *(a.format(repo=repo) for a in args)],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONVERBOSE": "1"})
    assert done.returncode == 0, done.stderr
    return done


def test_fleet_index_ends_without_the_teardown_and_its_summary_and_snapshot_are_whole(
        tmp_path: Path) -> None:
    snapshot = tmp_path / "graph.pickle"
    done = _fleet_verbose(tmp_path, "index", "{repo}", "-o", str(snapshot), "--json", "-q")
    stats = json.loads(done.stdout)  # the whole summary reached the pipe
    assert stats["files"] == 1 and stats["snapshot"] == str(snapshot)
    assert "# cleanup" not in done.stderr
    assert "a.py::f" in SymbolGraph.load(snapshot).symbols


def test_fleet_graph_edges_ends_without_the_teardown_and_prints_every_edge(
        tmp_path: Path) -> None:
    done = _fleet_verbose(tmp_path, "graph", "edges", "{repo}", "--json")
    assert {"src": "a.py::f", "dst": "a.py::g", "line": 2, "kind": "calls"} in json.loads(
        done.stdout)
    assert "# cleanup" not in done.stderr


def test_fleet_index_of_a_path_loads_neither_the_agents_nor_the_remote_forge(
        tmp_path: Path) -> None:
    """Every ``fleet`` process registers every command; ``index`` of a local path needs neither
    the Anthropic agent (an option default read its model name: ``fleet.types`` with it) nor
    ``fleet.forge.remote`` (only a URL is mirrored): ~30 ms of each start on this machine."""
    (tmp_path / "a.py").write_text("def f():\n    return g()\n")
    script = (
        "import sys\n"
        "from fleet_pipelines.cli import main\n"
        f"code = main(['index', {str(tmp_path)!r}, '-q'])\n"
        "print(code, sorted(m for m in sys.modules if m in {'fleet.types', "
        "'fleet.agents.anthropic_model', 'fleet.forge.remote', 'anthropic'}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 []", done.stdout
