# The README's commands. Everything installs into .venv on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 3000
export DAGSTER_HOME ?= $(CURDIR)/.fleet/dagster

.PHONY: install bytecode deps-demo deps-test test lint typecheck layers pytest demo ui bench clean

$(STAMP): pyproject.toml setup.py $(wildcard fleet/graph/_c/*.c) $(wildcard third_party/tree-sitter/src/*.c third_party/tree-sitter/src/*.h)
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Bytecode for our packages and the tests' helpers (not the fixtures: corpora of other projects,
# some Python 2), written for the sources changed since the last time. With PYTHONDONTWRITEBYTECODE
# set (this project's machines set it) no process writes it, so every process that loads the
# definitions (each daemon, code server, run worker and `fleet` command of a sweep) compiled our
# ~230 modules again: `import fleet_pipelines.definitions` after `dagster` took 0.63-0.69 CPU-s
# without it and 0.49-0.53 with it (5 interleaved runs each). Up to date it takes ~0.2 s.
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q -j 0 -x /fixtures/ fleet fleet_pipelines assets sandbox tests

# The Debian packages a target needs, before the venv and before any run: installed when root
# with apt-get, else one line naming the command and a stop (scripts/ensure-deps).
deps-demo deps-test:
	$(eval DEPS_ERROR := $(shell PY=$(PY) sh scripts/ensure-deps --make $(@:deps-%=%)))
	$(if $(DEPS_ERROR),$(error $(DEPS_ERROR)))
	@:

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

layers: $(STAMP)
	$(BIN)/lint-imports

# Four workers on two cores (each with its own PostgreSQL cluster and DAGSTER_HOME:
# tests/conftest.py): with two, the reaped CPU filled ~55% of the cores' time (quiet: 1,262
# CPU-s in 19 min 01 s, 1,098 in 16 min 57 s, 4 Dec 2026), the long tests waiting on daemons,
# TTLs and sandboxes booting; with four, quiet, the cores were 96.8% busy (/proc/stat: 1,557 of
# 1,608 CPU-s; 1,802 passed in 13 min 22 s at 98ea142, 5 Dec 2026). loadgroup hands
# each idle worker the next test (the longest ones first: LONG_FIRST in tests/conftest.py) and
# keeps an xdist_group on one worker (the deployment tests/distributed starts once per group).
# Earlier -n 3 runs failed on load-sensitive races, each fixed since (a daemon restarted on a
# dying code server, two pushes of one identical commit both "won", a test that needed a sweep
# before it, git commands listing worktrees while another process removed one: acfd662). The
# slowest 30 at the end.
PYTEST_ARGS ?= -n 4 --dist loadgroup --durations=30
# The tests' temporary files (tmp_path, the Dagster instances' SQLite files, the gates' scratch
# trees) on a tmpfs when /dev/shm has room (8 GB free): SQLite syncs each commit, ~13 ms on this
# machine's disk against ~0.25 ms on tmpfs (300 connect+commit+close: 3.6-3.9 s vs 0.06-0.09 s),
# and a sweep writes thousands. TEST_TMPDIR= (empty) keeps $$TMPDIR.
TEST_TMPDIR ?= $(shell df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 && $$4 > 8388608 {print "/dev/shm"}')

# pytest's assertion-rewritten test modules, written before the workers start (each collects
# every module at the same moment, so none found another's cache: tests/_rewrite_cache.py).
pytest: $(STAMP) bytecode
	$(BIN)/python tests/_rewrite_cache.py
	$(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR) )$(BIN)/pytest $(PYTEST_ARGS)

test: deps-test lint typecheck layers pytest

demo: deps-demo $(STAMP) bytecode
	$(BIN)/fleet demo

ui: $(STAMP) bytecode
	$(BIN)/python -c 'import sys; from pathlib import Path; from fleet_pipelines.storage import ensure_instance_config; ensure_instance_config(Path(sys.argv[1]))' $(DAGSTER_HOME)
	$(BIN)/dg dev -w workspace.yaml -h $(HOST) -p $(PORT)

bench: $(STAMP)
	@set -e; for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b; done

clean:
	rm -rf .fleet .pytest_cache .mypy_cache .ruff_cache
