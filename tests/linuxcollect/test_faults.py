"""The Linux archive and release paths under faults (#32): the connection drops before or after each command of
theirs (the host ran it, or not, and the answer is lost), or the host answers "done" without doing it; then a rerun
without the fault. After each: the queue manager restarts, media recovery of every object finds its log, and every
extent mqjournal let go (rm, SET LOG ARCHIVED: whatever became of the command) has a copy the catalog records and
the store still proves.

Hand-picked on the mixed fleet (a partition beside the Linux host, some thirty extents per queue manager: each fault
at the second of many commands of its kind, inside a whole maintenance). tests/safety/test_linux_fault_matrix.py
enumerates every command and transfer of each Linux step instead, on a small log."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqjournal.catalog import Catalog
from mqjournal.errors import MqJournalError
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import RetryPolicy
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxsim import logger
from mqjournal.sim.protocol import ExecResult
from mqjournal.sim.server import CommandRule, TransferFault
from tests.conftest import SimFleet
from tests.linuxcollect.fleet import LINUX, maintain, session

ONE_ATTEMPT = RetryPolicy(attempts=1, first_delay=0)  # each fault ends its step: the rerun is what cleans up
FAULTS = [
    pytest.param("sha256sum", "drop_before", id="digest-dropped-before"),
    pytest.param("sha256sum", "drop_after", id="digest-answer-lost"),
    pytest.param("runmqsc", "drop_after", id="set-log-or-status-answer-lost"),
    pytest.param("^rm ", "drop_after", id="rm-answer-lost"),
    pytest.param("^rm ", "drop_before", id="rm-dropped-before"),
    pytest.param("^rm ", "answer", id="rm-says-done-does-nothing"),
    pytest.param("runmqsc", "answer", id="runmqsc-says-done-does-nothing"),
    pytest.param(r"\.LOG$", "drop_mid_download", id="download-dropped-midway"),
    pytest.param(r"\.LOG$", "corrupt_download", id="download-one-byte-changed"),
]


def let_go(audit_path: Path) -> set[str]:
    """Every extent a command of mqjournal's could have let go, whatever became of the command."""
    found = set()
    for line in audit_path.read_text().splitlines():
        record = json.loads(line)
        if record["event"] != "intent":
            continue
        words = record["command"].split()
        if words[0] == "rm":
            found.add(words[-1].rsplit("/", 1)[-1])
        for extent in (record.get("input") or "").split("'"):
            if extent.startswith("S") and extent.endswith(".LOG") and "ARCHIVED" in record["input"]:
                found.add(extent)
    return found


@pytest.fixture
def tools(tmp_path: Path) -> Iterator[tuple[AuditLog, ExtentStore, Catalog, Path]]:
    path = tmp_path / "audit.jsonl"
    yield AuditLog(path), ExtentStore(tmp_path / "backups"), Catalog(f"sqlite:///{tmp_path / 'catalog.db'}"), path


@pytest.mark.parametrize("qmgr", ["QM.ORDERS", "QMMANUAL"])
@pytest.mark.parametrize(("pattern", "action"), FAULTS)
def test_after_a_fault_and_a_rerun_the_queue_manager_restarts_and_everything_let_go_has_a_proven_copy(
    mixed: SimFleet,
    tools: tuple[AuditLog, ExtentStore, Catalog, Path],
    qmgr: str,
    pattern: str,
    action: str,
) -> None:
    audit, store, catalog, audit_path = tools
    faults = mixed.service.faults[LINUX]
    if action in ("drop_mid_download", "corrupt_download"):
        faults.transfers.append(TransferFault(pattern, after_bytes=100_000, corrupt=action == "corrupt_download"))
    else:
        faults.rules.append(CommandRule(pattern, action, skip=1, reply=ExecResult(0) if action == "answer" else None))
    with contextlib.suppress(MqJournalError), session(mixed, audit, retry=ONE_ATTEMPT) as linux:
        maintain(linux, qmgr, store, catalog, "r1")  # the fault's own failure, named; what matters is what it left
    faults.rules.clear()
    faults.transfers.clear()
    with session(mixed, audit, retry=ONE_ATTEMPT) as linux:
        maintain(linux, qmgr, store, catalog, "r2")

    if action in ("drop_mid_download", "corrupt_download"):  # the fault met a download, which kept nothing
        outcomes = [json.loads(line) for line in audit_path.read_text().splitlines()]
        assert any(r.get("transfer") == "get" and r.get("outcome") in ("failed", "transport_error") for r in outcomes)
    copies = {c.extent: c for c in catalog.extent_copies(LINUX, qmgr)}
    for name in let_go(audit_path):
        assert name in copies, f"{name} was let go without a catalogued copy"
        assert store.still_holds(copies[name], reread=True) is None, f"{name}'s copy no longer proves"
    assert let_go(audit_path), "the maintenance let nothing go: the test proves nothing"
    with mixed.service.linux_hosts[LINUX].state() as host:
        qm = host.queue_managers[qmgr]
        logger.crash(qm)
        logger.start(qm, at=host.now)
        for obj in qm.objects:
            assert logger.first_missing(qm, obj.image_extent) is None, f"media recovery of {obj.name} would fail"
