# Single entry point. `make test` and `make demo` do all the set-up on a fresh
# machine with Python 3.11+: a virtual environment in .venv, torch first (CPU
# build: `pip install torch==2.13.0`), then the package with its test extras.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_SPEC ?= torch==2.13.0
THREADS := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
PYTEST_ARGS ?=
# the suite runs on this many worker processes (pytest-xdist): the machines
# have 2 cores and every test is single-threaded (OMP_NUM_THREADS=1)
TEST_WORKERS ?= 2

.PHONY: install install-docs install-bench test test-fast demo lint format docs bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install "$(TORCH_SPEC)"
	$(PY) -m pip install -e ".[tests,scale]" ruff
	touch $@

install: $(VENV)/.installed

install-docs: install
	$(PY) -m pip install -e ".[docs]"

install-bench: install
	$(PY) -m pip install -e ".[benchmarks]"

test: install
	$(THREADS) $(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

test-fast: install
	$(THREADS) $(PY) -m pytest -n $(TEST_WORKERS) -m "not slow" $(PYTEST_ARGS)

demo: install
	$(THREADS) $(PY) -m sklearn_iclr26.demo

lint: install
	$(VENV)/bin/ruff check sklearn_iclr26 tests examples benchmarks doc/conf.py
	$(VENV)/bin/ruff format --check sklearn_iclr26 tests examples benchmarks doc/conf.py

format: install
	$(VENV)/bin/ruff format sklearn_iclr26 tests examples benchmarks doc/conf.py
	$(VENV)/bin/ruff check --fix sklearn_iclr26 tests examples benchmarks doc/conf.py

docs: install-docs
	$(THREADS) $(MAKE) -C doc html SPHINXBUILD=$(abspath $(VENV))/bin/sphinx-build

bench: install-bench
	$(THREADS) $(PY) benchmarks/bench_socop.py

clean:
	rm -rf $(VENV) build dist *.egg-info doc/_build doc/auto_examples doc/generated
