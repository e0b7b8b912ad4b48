# Two commands for a new machine: `make demo` runs the main job on the simulated fleet, `make test` runs the tests.
# Both create the virtualenv .venv at the repository root and install what they need into it.
# `make demo DEMO_ARGS=--approve` answers the approval gate itself (an unattended demo).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: install check test test-fast safety-long cluster-test demo clean demo-packages fast-packages test-packages cluster-packages

$(INSTALLED): requirements.txt constraints.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip==25.3"
	$(PY) -m pip install --quiet -r requirements.txt -c constraints.txt
	$(PY) -m pip install --quiet --no-deps -e .
	# Bytecode for our own modules, which an editable install leaves uncompiled: where PYTHONDONTWRITEBYTECODE is set
	# (as on the CI machines) every process (each Airflow task, each CLI call, each test worker) would compile them
	# again, some 0.2 s of CPU a task. Python reads these files whatever that variable says; an edit recompiles.
	$(PY) -m compileall -q plugins dags tests bench
	touch $@

install: $(INSTALLED)

# What each target needs from Debian besides the virtualenv. scripts/system-packages.sh knows how each is found and
# which package brings it; as root it installs what is missing, as another user it stops at once with the command to
# run. Listed first in each target, so a missing package is found in seconds, before the install and the tests.
demo-packages:
	@sh scripts/system-packages.sh java ssh
fast-packages:
	@sh scripts/system-packages.sh java ssh postgresql
test-packages:
	@sh scripts/system-packages.sh java ssh postgresql chromium
cluster-packages:
	@sh scripts/system-packages.sh java ssh postgresql redis

# Lint, format and types (pyproject's [tool.ruff] and [tool.mypy]); .ci/run makes these before the tests and the
# pre-commit hooks (.pre-commit-config.yaml) make them on each commit.
check: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The whole suite in one queue over TEST_WORKERS processes (pytest-xdist), more than a small machine has cores: the
# end-to-end units mostly wait on gates, schedulers and timers while the others work. Three, not four, on 2 cores: the
# CPU is busy throughout, and each worker collects (imports, assertion rewriting) the whole suite again; from fresh
# clones on 2026-11-28 (the same code, a README line and one test's refactor apart), 3 workers took 22 min 02 s and 4
# took 23 min 32 s. --dist loadgroup keeps each unit of work in one process (an end-to-end module's tests share one
# driver run or Spark job; the tests that share one PostgreSQL server; the two `airflow standalone` tests take turns),
# and tests/conftest.py puts the longest units first in the queue (hence --no-loadscope-reorder), so that the short
# tests fill in around them.
TEST_WORKERS ?= 3
XDIST := -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

# --durations: the suite must stay under 20 minutes on CI's 2 cores; the slowest units are where to look first.
test: test-packages $(INSTALLED)
	$(PY) -m pytest $(XDIST) --durations=30

# The inner loop: everything but the end-to-end tests, and the stateful safety test as a smoke run. `make test` (and
# CI) runs it all.
test-fast: fast-packages $(INSTALLED)
	MQJ_STATEFUL=fast $(PY) -m pytest -m "not e2e" -q $(XDIST)

# The safety proof's stateful tests with their long hypothesis profile (300 examples of up to 40 steps: some 20
# minutes for the IBM i one, a few for the Linux paths').
safety-long: $(INSTALLED)
	MQJ_STATEFUL=long $(PY) -m pytest tests/safety/test_stateful.py::test_maintenance_under_host_events_and_faults_keeps_every_receiver_and_records_every_command tests/safety/test_linux_stateful.py::test_linux_log_maintenance_under_host_events_and_faults_keeps_every_extent_mq_needs_and_records_every_command

# The deployment's topology without a Docker engine (docs/cluster-test.md): PostgreSQL, Redis, a Spark standalone
# master and worker, Airflow's components with the CeleryExecutor, as local processes on loopback; the maintenance DAG
# end to end on the simulated fleet; and the plan on a Spark Connect server whose executors are the worker's. Some
# 4-5 minutes on 2 cores; run it alone. `make test` leaves it out.
cluster-test: cluster-packages $(INSTALLED)
	$(PY) -m pytest -m cluster tests/cluster -x -s

demo: demo-packages $(INSTALLED)
	$(VENV)/bin/mqjournal demo --fleet docker/fleet.example.yaml $(DEMO_ARGS)

clean:
	rm -rf $(VENV) .sim .airflow
