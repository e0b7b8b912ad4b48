# Two commands for a new machine: `make demo` runs the main job on the simulated fleet, `make test` runs the tests.
# Both create the virtualenv .venv at the repository root and install what they need into it.
# `make demo DEMO_ARGS=--approve` answers the approval gate itself (an unattended demo).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: install test demo clean

$(INSTALLED): requirements.txt constraints.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip==25.3"
	$(PY) -m pip install --quiet -r requirements.txt -c constraints.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

install: $(INSTALLED)

test: $(INSTALLED)
	$(PY) -m pytest

demo: $(INSTALLED)
	$(VENV)/bin/mqjournal demo --fleet docker/fleet.example.yaml $(DEMO_ARGS)

clean:
	rm -rf $(VENV) .sim .airflow
