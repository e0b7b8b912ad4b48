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
from tests.safety import scenario as sc

_UNENUMERATED: dict[str, str] = {}


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        params = []
        for path in sc.PATHS:
            try:
                params += [pytest.param(c, id=c.id) for c in matrix.cases(paths=(path,))]
            except Exception as exc:
                _UNENUMERATED[path] = f"{type(exc).__name__}: {exc}"
                params.append(pytest.param(path, id=f"{path}-fault-free-run"))
        metafunc.parametrize("case", params)


def test_fault(case, matrix_case_root, matrix_setups, matrix_outcomes):
    if isinstance(case, str):
        pytest.fail(
            f"the fault-free run of the {case} path, which names the matrix's cases, failed: {_UNENUMERATED[case]}"
        )
    # Each case starts from a copy of its path's set-up, made once per process: the set-up is deterministic, and
    # done for every case it was most of the matrix's CPU (tests below hold a copy to be the set-up itself).
    outcome = matrix.run_case(case, matrix_case_root, matrix_setups)
    matrix_outcomes(outcome)
    assert outcome.held, outcome.explain()


# --- the copies of a set-up the cases start from ----------------------------------------------------------------------


@pytest.mark.parametrize("path", list(sc.PATHS))
def test_a_copied_set_up_is_the_set_up(path, matrix_case_root, tmp_path):
    """A scenario started from a copy of the set-up has the partition the set-up left (through the simulator's JSON
    state file), the commands the host received during it, and the same step argument; the step, run on it without
    faults, sends exactly the commands the matrix enumerated from a set-up of its own (its case names its commands)."""
    setups = sc.SetUps(tmp_path / "setups")
    s, arg = setups.start(path, matrix_case_root)
    try:
        setup = setups.of(path, matrix_case_root)
        with s.host.lock:
            restored = s.host.partition.model_copy(deep=True)
        received = s.received()
    finally:
        s.close()
    assert restored.model_dump_json() == setup.partition.model_dump_json()
    assert restored == setup.partition
    assert [(e.seq, e.command, e.state, e.exit_status, e.answered) for e in received] == [
        (e.seq, e.command, e.state, e.exit_status, e.answered) for e in setup.received
    ]
    assert repr(arg) == repr(setup.arg)
    assert matrix.step_commands(path, matrix_case_root, setups) == matrix.commands_of(path)


# --- the same steps under the DAG's per-host SSH session lease (kept in the catalog database) ----------------------


def test_a_locked_catalog_is_named_when_the_step_runs_under_its_ssh_lease(case_root):
    """The DAG runs each step inside `host_session_slot`, whose lease rows live in the catalog database: with that
    database locked, the step must still stop with the error that names it, not a raw SQL error from the lease."""
    s = sc.Scenario(case_root)
    try:
        arg = sc.PATHS["delete"].setup(s)
        dltjrnrcv = next(i for i, c in enumerate(matrix.commands_of("delete")) if "DLTJRNRCV" in c)
        problems = []
        for lock_after in (0, dltjrnrcv + 1):  # before the lease is taken; before the second DLTJRNRCV
            done = matrix.run_with_fault(
                s, "delete", arg, matrix.Fault("catalog_unavailable", lock_after=lock_after), lease_slots=2
            )
            if done.error is None or s.db_path.name not in str(done.error):
                problems.append(f"locked before command {lock_after}: the step ended with {done.error}")
            problems += [f"locked before command {lock_after}: {v}" for v in done.report.violations]
        assert not problems, "\n".join(problems)
    finally:
        s.close()


def test_a_killed_workers_ssh_lease_frees_its_slot(case_root):
    """A task SIGKILLed while DLTJRNRCV runs leaves its lease row; with one session per host allowed, the rerun must
    get the slot once the lease's time to live has passed, not hours later."""
    from mqjournal.airflow.leases import host_session_slot
    from tests.safety import worker

    s = sc.Scenario(case_root)
    try:
        arg = sc.PATHS["delete"].setup(s)
        done = matrix.run_with_fault(s, "delete", arg, matrix.Fault("sigkill", r"DLTJRNRCV"), lease_slots=1)
        assert done.reached
        options = worker.lease_options(wait=3 * worker.LEASE_TTL.total_seconds() + 2)
        with host_session_slot(s.catalog_url, sc.HOST, slots=1, **options) as slot:
            assert slot == 0
    finally:
        s.close()
