"""Every command and SFTP transfer of the Linux collect, archive, release and recovery steps, in Archive and Manual
mode, under every fault kind that makes sense for it; then a rerun, and the invariants (tests/safety/linux_matrix.py
says which kinds, steps and checks).

The cases come from a fault-free run of each step (its audit log), so a command added to a path is covered without
touching this file. The session prints one line at the end:
``linux fault matrix: N cases, N held, 0 extents lost, 0 unrecorded commands``.
"""

from __future__ import annotations

import shutil

import paramiko
import pytest

from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxsim import logger
from tests.conftest import LINUX_FAULT_MATRIX_PROPERTY
from tests.safety import linux_matrix as lm

_UNENUMERATED: dict[str, str] = {}


def pytest_generate_tests(metafunc):
    if "linux_case" in metafunc.fixturenames:
        params = []
        for path in lm.PATHS:
            try:
                params += [pytest.param(c, id=c.id) for c in lm.cases(paths=(path,))]
            except Exception as exc:
                _UNENUMERATED[path] = f"{type(exc).__name__}: {exc}"
                params.append(pytest.param(path, id=f"{path}-fault-free-run"))
        metafunc.parametrize("linux_case", params)


@pytest.fixture(scope="module")
def rig():
    """One simulated Linux host per process; each path set up once, every case started from a copy of it."""
    folder = lm.scratch_folder()
    rig = lm.Rig(folder)
    try:
        yield rig
    finally:
        rig.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_linux_fault(linux_case, rig, request):
    if isinstance(linux_case, str):
        pytest.fail(
            f"the fault-free run of {linux_case}, which names the matrix's cases, failed: {_UNENUMERATED[linux_case]}"
        )
    outcome = lm.run_case(linux_case, rig)
    tally = (outcome.held, outcome.extents_lost, len(outcome.report.unrecorded_commands))
    request.node.user_properties.append((LINUX_FAULT_MATRIX_PROPERTY, tally))
    assert outcome.held, outcome.explain()


# --- what the matrix stands on ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", lm.PATHS)
def test_each_step_sends_what_it_is_about_and_a_copied_set_up_runs_as_the_enumeration_did(path, rig):
    """A case started from the rig's copy of a set-up sends exactly what the matrix enumerated (its cases name its
    items), and each step sends the commands and transfers it exists for (so the matrix cannot shrink unnoticed)."""
    items = lm.step_items(rig, path)
    # As a multiset: archive's digest and download run side by side, so their order in the audit log may vary.
    assert sorted(items, key=repr) == sorted(lm.items_of(path), key=repr)
    step, mode = path.split(".")
    labels = [lm.label(i) for i in items]
    expected = {
        "collect": {"rcdmqimg", "dspmqinf", "cat", "qmstatus", "ls"},
        "archive": {"sha256sum.S0000000.LOG", "get.S0000000.LOG", "sha256sum.S0000001.LOG", "get.S0000001.LOG"},
        "release": {"dspmqinf", "cat", "qmstatus", "ls"}
        | (
            {"setlog.S0000000.LOG", "setlog.S0000001.LOG"}
            if mode == "archive"
            else {"rm.S0000000.LOG", "rm.S0000001.LOG"}
        ),
        "startup": {"dspmq", "dspmqinf", "cat", "ls", "strmqm", "put.S0000001.LOG", "sha256sum.S0000001.LOG"},
        "media": {
            "dspmq",
            "dspmqinf",
            "cat",
            "qmstatus",
            "ls",
            "qstatus",
            "put.S0000001.LOG",
            "sha256sum.S0000001.LOG",
            "rcrmqobj",
        },
    }[step]
    assert expected <= set(labels), labels
    if step in ("startup", "media"):
        assert sum(1 for i in items if i.transfer == "put") == 1, labels


def test_the_invariants_catch_an_extent_let_go_without_a_copy_and_a_command_sent_unrecorded(rig):
    """The checks the cases rely on can fail: an rm of an extent nobody copied, sent outside mqjournal's audit log
    (through the host's SSH as mqjournal would), is both an extent let go without a proven copy and an unrecorded
    command; the queue manager then does not restart when that extent is one restart needs."""
    case, _ = rig.start("collect.manual")
    try:
        with rig.live.state() as host:  # a unit of work holds RECLOG in an extent MQ no longer writes
            logger.open_unit_of_work(host.queue_managers[lm.QMGR], "long")
        case.log_work(2)
        qm = rig.live.host.queue_managers[lm.QMGR]
        doomed = Extent(qm.restart).name
        assert qm.restart != qm.current
        client = paramiko.SSHClient()
        client.load_host_keys(str(rig.fleet.config.known_hosts))
        client.connect(
            "127.0.0.1", port=rig.fleet.ports[lm.LINUX], username=lm.USER, pkey=rig.fleet.service.client_key,
            look_for_keys=False, allow_agent=False, timeout=5,
        )  # fmt: skip
        try:
            _, stdout, _ = client.exec_command(f"rm -f '{qm.active_path}{doomed}'", timeout=10)
            assert stdout.channel.recv_exit_status() == 0
        finally:
            client.close()
        report = case.check()
    finally:
        case.close()
    rules = {v.rule for v in report.violations}
    assert {"let go without a proven copy", "unrecorded command", "restart"} <= rules, str(report)
