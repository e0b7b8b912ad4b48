"""Every command the save, delete and recovery paths send, under every fault kind; then a rerun, and the invariants.

The cases come from a fault-free run of each step (its audit log), so a command added to a path is covered without
touching this file. Kinds (tests/safety/matrix.py):

- ``drop_before`` / ``drop_after``: the SSH connection drops before the host runs the command, or after it ran and
  before its answer;
- ``fails``: the command fails with its documented message (a CL escape message, or a CLI error for SQL);
- ``timeout``: the command hangs on the host past the session's command timeout, and lands once the step gave up;
- ``catalog_unavailable``: the catalog's database is locked from right before the command is sent: no command the
  catalog must record first may be sent, and the error names the database;
- ``sigkill``: the worker process running the step is SIGKILLed after the host ran the command, before its answer.

The session prints one line at the end: ``fault matrix: N cases, N held, 0 receivers lost, 0 unrecorded commands``.
"""

from __future__ import annotations

import pytest

from tests.safety import matrix


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        found = matrix.cases()
        metafunc.parametrize("case", found, ids=[c.id for c in found])


def test_fault(case: matrix.Case, case_root, matrix_outcomes):
    outcome = matrix.run_case(case, case_root)
    matrix_outcomes.append(outcome)
    assert outcome.held, outcome.explain()
