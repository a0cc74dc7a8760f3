# The two commands README.md promises:
#   make demo   install lspmux and run it on the bundled example project
#   make test   install every tool the tests use, then run the whole suite
.PHONY: demo test setup lint bench

setup:
	scripts/setup-tests

demo: setup
	.venv/bin/python scripts/demo.py

test: setup
	.venv/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

lint:
	.venv/bin/ruff check lspmux tests scripts
	.venv/bin/ruff format --check lspmux tests scripts
	.venv/bin/mypy

bench: setup
	.venv/bin/python scripts/bench.py
	.venv/bin/python scripts/bench_start.py --write
	.venv/bin/python scripts/bench_edits.py
	.venv/bin/python scripts/bench_agent.py --write
	.venv/bin/python scripts/bench_sharing.py --server rust-analyzer --clients 4 --requests 200
	.venv/bin/python scripts/bench_remote.py --write
