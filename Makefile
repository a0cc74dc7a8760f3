# The two commands README.md promises:
#   make demo   install lspmux and run it on the bundled example project
#   make test   install every tool the tests use, then run the whole suite
# and the one CI runs (.ci/run; README.md, "Tests"):
#   make test-matrix   the suite on Python 3.11, 3.12 and 3.13, with and without uvloop
.PHONY: demo test test-unit test-matrix setup lint bench

setup:
	scripts/setup-tests

# Needs only Python >= 3.11: a venv with lspmux, basedpyright and ruff from PyPI, installed by
# scripts/demo.py in one pass (uv from PyPI when it installs, else pip), then the demo. The venv
# starts without pip (installing it costs 3 s of CPU): the script runs the pip wheel Python
# bundles, and installs pip into the venv with the rest.
PYTHON ?= python3
demo:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "make demo: lspmux needs Python >= 3.11; $(PYTHON) is $$($(PYTHON) --version 2>&1)." \
	    "Name another: make demo PYTHON=python3.12"; exit 1; }
	@test -x .venv/bin/python || $(PYTHON) -m venv --without-pip .venv
	@.venv/bin/python scripts/demo.py --install

test: setup
	.venv/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

# The unit suite alone, on two workers (pytest-xdist): what a developer runs between changes.
# It needs what scripts/setup-tests installed (`make setup`, once). PYTHONPATH makes the
# workers import this checkout's lspmux even when .venv's editable install points elsewhere;
# bytecode is written (__pycache__, ignored by git) because with PYTHONDONTWRITEBYTECODE set
# every run recompiles lspmux and re-rewrites every test's asserts: ~5 s CPU per worker.
UNIT_WORKERS ?= 2
test-unit:
	env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=$(CURDIR) .venv/bin/python -m pytest -q -p no:cacheprovider -n $(UNIT_WORKERS) tests/unit $(PYTEST_ARGS)

lint:
	.venv/bin/ruff check lspmux tests scripts
	.venv/bin/ruff format --check lspmux tests scripts
	.venv/bin/mypy

# Every step runs even when one before it failed (a missing interpreter stops only its cells);
# the target fails when any did.
test-matrix: setup
	@status=0; \
	for version in $(MATRIX_PYTHONS); do scripts/setup-tests --python $$version || status=1; done; \
	scripts/test-matrix $(MATRIX_CELLS) || status=1; \
	exit $$status

MATRIX_PYTHONS = 3.12 3.13

bench: setup
	.venv/bin/python scripts/bench.py --peers
	.venv/bin/python scripts/bench_floor.py --write
	.venv/bin/python scripts/bench_start.py --real-rounds 8 --write
	.venv/bin/python scripts/bench_edits.py
	.venv/bin/python scripts/bench_agent.py --write
	.venv/bin/python scripts/bench_sharing.py --server rust-analyzer --clients 4 --requests 200
	.venv/bin/python scripts/bench_remote.py --write
