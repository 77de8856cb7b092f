# `make demo` and `make test` work on a fresh machine: they create .venv and install as needed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-rllib lint bench clean

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

# The Ray RLlib backend in its own venv: ray pins an older gymnasium than .venv has.
RLLIB_VENV := .venv-rllib
RLLIB_PY := $(RLLIB_VENV)/bin/python
RLLIB_STAMP := $(RLLIB_VENV)/.installed

$(RLLIB_STAMP): pyproject.toml constraints.txt
	test -x $(RLLIB_PY) || $(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_PY) -m pip install --quiet --upgrade pip
	$(RLLIB_PY) -m pip install --quiet -c constraints.txt -e ".[train,dev,rllib]"
	touch $(RLLIB_STAMP)

test-rllib: $(RLLIB_STAMP)
	$(RLLIB_PY) -m pytest -q tests/test_rllib.py tests/test_rllib_agent.py tests/test_conformance.py -m "not slow"

bench: $(STAMP)
	$(PY) -m pip install --quiet -c constraints.txt -e ".[train,dev,bench]"
	$(PY) scripts/tables/env_speed.py

lint: $(STAMP)
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) runs .pytest_cache
