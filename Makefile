# `make demo` and `make test` work on a fresh machine: they create .venv and install as needed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e ".[train,dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m training.demo

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q -m "not slow"

bench: $(STAMP)
	$(PY) -m pip install --quiet -c constraints.txt -e ".[train,dev,bench]"
	$(PY) scripts/benchmark.py

lint: $(STAMP)
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) runs .pytest_cache
