"""Replacement data read by the layout the partition's message descriptions declare (issue #29).

mqmessages.LAYOUTS is a guess; a partition whose AMQMSG / QCPFMSG declare another layout must still be collected and
planned, and a message that does not decode must be kept and said, never moving a recovery point on its own.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mqjournal import mqmessages, msgformats
from mqjournal import snapshot as contract
from mqjournal.collection import collect_fleet
from mqjournal.explain import alert_explanations
from mqjournal.fleet import FleetConfig, HostConfig, PartitionSystemConfig, QueueManagerConfig
from mqjournal.mqmessages import Field
from mqjournal.rules import plan_fleet
from mqjournal.sim.joblog import post
from mqjournal.sim.views import PartitionCatalog
from mqjournal.vocabulary import Alert
from tests.conftest import SimFleet, serve

# Names with a 2-byte length before them (*VARY 2), and MQ's numeric inserts as 2 bytes: every offset after them moves.
VARYING = {
    "AMQ7460": "(*BIN 4) (*BIN 4) (*DTS 8) (*CHAR 10 *VARY 2) (*CHAR 10 *VARY 2) (*CHAR 48)",
    "AMQ7462": "(*BIN 4) (*BIN 4) (*DTS 8) (*CHAR 10 *VARY 2) (*CHAR 10 *VARY 2) (*CHAR 48)",
    "AMQ7472": "(*BIN 2) (*BIN 2) (*CHAR 48) (*CHAR 10)",
    "CPI70E3": "(*CHAR 10 *VARY 2) (*CHAR 10 *VARY 2)",
}
QM = QueueManagerConfig(
    name="PAY", threshold_kb=300, entries_per_minute=60, damaged_object="APP.REQUEST.QUEUE", damaged_at_hour=1
)


def _config(tmp_path: Path, **systems: PartitionSystemConfig) -> FleetConfig:
    hosts = [
        HostConfig(name=name, port=0, utc_offset="+01:00", system=system, queue_managers=[QM])
        for name, system in systems.items()
    ]
    return FleetConfig(state_dir=tmp_path / "state", hosts=hosts).resolved(tmp_path)


def _collect(fleet: SimFleet, out: Path, run_id: str) -> tuple[dict[str, contract.Snapshot], list]:
    live = fleet.config.model_copy(
        update={"hosts": [h.model_copy(update={"port": fleet.ports[h.name]}) for h in fleet.config.hosts]}
    )
    run_dir, _ = collect_fleet(live, out, run_id=run_id)
    failures = [json.loads(line) for line in (run_dir / "failures.jsonl").read_text().splitlines()]
    return {s.host: s for s in contract.read_snapshots(run_dir / "snapshots.jsonl")}, failures


def _plan(snapshot: contract.Snapshot) -> tuple:
    plan = plan_fleet([snapshot], as_of=snapshot.collected_at + timedelta(minutes=1))
    (qm,) = plan.queue_managers
    rows = sorted((r.receiver, r.action, r.reason) for r in plan.receivers)
    return qm.oldest_needed, qm.blocked, qm.block_reason, qm.alerts, rows


# --- the pure part ---------------------------------------------------------------------------------------------


def test_a_declared_layout_is_parsed_and_checked_against_its_count():
    fields = msgformats.parse_declared("&1 *BIN 4 &2 *DEC 7 2 &3 (*CHAR 10 *VARY 2)", 3)
    assert fields == (Field("*BIN", 4), Field("*DEC", 7, decimals=2), Field("*CHAR", 10, vary=2))
    assert msgformats.parse_declared("*BIN 4 *CHAR 10", 3) is None  # disagrees with MESSAGE_DATA_COUNT
    assert msgformats.parse_declared("*SOMETHING 4", None) is None


def test_todays_layout_misreads_data_laid_out_by_another_declaration():
    # The guess this issue is about: fixed offsets read a junk receiver where the partition declares *VARY names.
    declared = msgformats.parse_declared(VARYING["AMQ7460"], 6)
    at = datetime(2026, 3, 1, 4, 5, tzinfo=UTC)
    data = mqmessages.encode(declared, (0, 0, at, "AMQA000007", "QMPAY", "PAY")).hex()
    assert msgformats.read("AMQ7460", data, declared).values == {"at": at, "receiver": "AMQA000007", "library": "QMPAY"}
    assert not msgformats.read("AMQ7460", data).decoded  # mqjournal's own layout: the receiver reads as junk
    assert msgformats.dspmsgd("AMQ7460") == "DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG)"
    assert msgformats.dspmsgd("CPI70E3") == "DSPMSGD RANGE(CPI70E3) MSGF(QSYS/QCPFMSG)"


def test_a_time_decoded_around_2060_is_not_a_time():
    layout = mqmessages.LAYOUTS["AMQ7432"]
    data = mqmessages.encode(layout, (0, 0, datetime(2061, 1, 1, tzinfo=UTC), "PAY")).hex()
    reading = msgformats.read("AMQ7432", data, not_after=datetime(2026, 1, 1, tzinfo=UTC))
    assert not reading.decoded and "&3 (at)" in (reading.problem or "")


# --- over SSH, against simulated partitions --------------------------------------------------------------------


def _comparable(snapshot: contract.Snapshot) -> tuple:
    """What was read from the replacement data, and the chain (two partitions' clocks differ by milliseconds)."""
    points = (snapshot.startup_recovery, snapshot.media_recovery)
    return (
        [p.receiver if p else None for p in points],
        [round((p.at - snapshot.collected_at).total_seconds()) if p else None for p in points],
        [(d.object, d.object_type) for d in snapshot.damaged_objects],
        [(m.id, m.queue) for m in snapshot.messages],
        [(r.name, r.status) for r in snapshot.receivers],
    )


@pytest.fixture(scope="module")
def declared_fleet(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("declared")
    config = _config(tmp_path, stock=PartitionSystemConfig(), varying=PartitionSystemConfig(message_formats=VARYING))
    with serve(config) as fleet:
        for name, host in fleet.service.hosts.items():
            host.warm_up(config.host(name), config.first_moment(), 6)  # past the damaged object's hour
        yield fleet, *_collect(fleet, tmp_path / "out", "r1")


def test_a_partition_declaring_another_layout_is_collected_and_planned_as_a_stock_one(declared_fleet):
    _, snapshots, failures = declared_fleet
    assert failures == []
    stock, varying = snapshots["stock"], snapshots["varying"]
    assert stock.startup_recovery is not None and stock.media_recovery is not None and stock.damaged_objects
    # Each partition ran its own six hours (their chains may differ by a receiver): the varying one is read as its
    # own newest AMQ7460 says, decoded by the layout it declares, and planned as the stock one is.
    fleet, _, _ = declared_fleet
    queue = fleet.host("varying").partition.message_queue(QM.qmgr_library, "QMQMMSG")
    newest = [m for m in queue.messages if m.id == "AMQ7460" and m.at <= varying.collected_at][-1]
    sent = msgformats.read("AMQ7460", newest.data, msgformats.parse_declared(VARYING["AMQ7460"], None))
    assert sent.values is not None and varying.startup_recovery is not None
    assert varying.startup_recovery.receiver == sent.values["receiver"]
    assert varying.startup_recovery.at == sent.values["at"]
    assert [(d.object, d.object_type) for d in varying.damaged_objects] == [
        (d.object, d.object_type) for d in stock.damaged_objects
    ]
    assert {(m.id, m.queue) for m in varying.messages} == {(m.id, m.queue) for m in stock.messages}
    assert _plan(varying)[1:4] == _plan(stock)[1:4]  # blocked, block reason, alerts


def test_the_simulator_answers_message_file_data_with_the_declared_layout(declared_fleet):
    fleet, _, _ = declared_fleet
    rows = {
        r["MESSAGE_ID"]: r for r in PartitionCatalog(fleet.host("varying").partition).rows("QSYS2.MESSAGE_FILE_DATA")
    }
    assert rows["AMQ7460"]["MESSAGE_FILE_LIBRARY"] == "QMQM" and rows["AMQ7460"]["MESSAGE_FILE"] == "AMQMSG"
    assert msgformats.parse_declared(rows["AMQ7460"]["MESSAGE_DATA"], rows["AMQ7460"]["MESSAGE_DATA_COUNT"]) == (
        msgformats.parse_declared(VARYING["AMQ7460"], None)
    )
    assert rows["CPI70E3"]["MESSAGE_FILE_LIBRARY"] == "QSYS" and rows["CPI70E3"]["MESSAGE_FILE"] == "QCPFMSG"


def test_an_undecodable_message_is_kept_said_and_moves_nothing(tmp_path, caplog):
    config = _config(tmp_path, ibmi1=PartitionSystemConfig())
    with serve(config, advance=timedelta(hours=3)) as fleet:
        before, failures = _collect(fleet, tmp_path / "before", "r1")
        assert failures == []
        host = fleet.host("ibmi1")
        with host.state() as p:
            # The newest AMQ7460 with data that reads a year around 2060 and a junk receiver by any layout, and a
            # CPI70E3 whose journal does not decode: before, the first failed the queue manager's collection and
            # the second was dropped as "about another journal".
            point = post(p, QM.qmgr_library, "QMQMMSG", "AMQ7460", 0, 0, None, "AMQA000001", QM.qmgr_library)
            point.data = (b"\x00" * 8 + b"\xf0" * 8 + bytes(range(1, 21))).hex().upper()
            stop = post(p, "QSYS", "QSYSOPR", "CPI70E3", "AMQAJRN", QM.qmgr_library)
            stop.data = bytes(range(1, 21)).hex().upper()
        with caplog.at_level("WARNING", logger="mqjournal.ibmi.collector"):
            after, failures = _collect(fleet, tmp_path / "after", "r2")
    assert failures == []
    old, new = before["ibmi1"], after["ibmi1"]
    # The point is the newest one that decodes (the checkpoint's), not the 2062 one, and nothing is blocked or unblocked.
    assert new.startup_recovery is not None and old.startup_recovery is not None
    assert old.startup_recovery.at <= new.startup_recovery.at <= new.collected_at
    assert _plan(new)[:3] == _plan(old)[:3]
    assert set(_plan(new)[3]) - set(_plan(old)[3]) == {Alert.MESSAGE_UNDECODABLE}
    kept = {(m.id, m.tokens) for m in new.messages}
    assert ("AMQ7460", point.data) in kept and ("CPI70E3", stop.data) in kept
    assert {(u.message_id, u.dspmsgd) for u in new.undecodable_messages} == {
        ("AMQ7460", "DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG)"),
        ("CPI70E3", "DSPMSGD RANGE(CPI70E3) MSGF(QSYS/QCPFMSG)"),
    }
    warnings = [r.getMessage() for r in caplog.records if "MESSAGE_UNDECODABLE" in r.getMessage()]
    assert any("AMQ7460" in w and "DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG)" in w for w in warnings)
    assert any("CPI70E3" in w and "DSPMSGD RANGE(CPI70E3) MSGF(QSYS/QCPFMSG)" in w for w in warnings)


def test_on_a_partition_declaring_another_layout_an_undecodable_message_raises_the_named_alert_and_changes_nothing(
    tmp_path,
):
    config = _config(tmp_path, varying=PartitionSystemConfig(message_formats=VARYING))
    with serve(config) as fleet:
        host = fleet.host("varying")
        host.warm_up(config.host("varying"), config.first_moment(), 6)  # past the damaged object's hour
        with host.lock:
            # An AMQ7472 whose data is shorter than the layout the partition declares for it.
            damaged = post(host.partition, QM.qmgr_library, "QMQMMSG", "AMQ7472", 0, 0, "APP.OTHER.QUEUE", "QLOCAL")
            damaged.data = (bytes(4) + bytes(range(1, 11))).hex().upper()
        snapshots, failures = _collect(fleet, tmp_path / "out", "r1")
    assert failures == []
    snap = snapshots["varying"]
    # Collection works by the declared layout: the points and the damaged object of the good messages are read.
    assert snap.startup_recovery is not None and snap.media_recovery is not None
    assert [(d.object, d.object_type) for d in snap.damaged_objects] == [("APP.REQUEST.QUEUE", "LCLQ")]
    (sent,) = [m for m in snap.messages if m.tokens == damaged.data]
    (unread,) = snap.undecodable_messages
    assert (unread.message_id, unread.sent_at, unread.dspmsgd) == (
        "AMQ7472",
        sent.at,
        "DSPMSGD RANGE(AMQ7472) MSGF(QMQM/AMQMSG)",
    )
    assert "shorter than (*BIN 2) (*BIN 2) (*CHAR 48) (*CHAR 10)" in unread.problem

    plan = plan_fleet([snap], as_of=snap.collected_at + timedelta(minutes=1))
    (qm,) = plan.queue_managers
    assert Alert.MESSAGE_UNDECODABLE in qm.alerts
    assert qm.undecodable_messages == ("AMQ7472: DSPMSGD RANGE(AMQ7472) MSGF(QMQM/AMQMSG)",)
    assert any("AMQ7472" in line and "DSPMSGD RANGE(AMQ7472)" in line for line in alert_explanations(qm))
    # The same collection without the message: every receiver's action and the blocks are the same.
    without = snap.model_copy(
        update={"messages": [m for m in snap.messages if m is not sent], "undecodable_messages": []}
    )
    assert _plan(snap)[:3] == _plan(without)[:3] and _plan(snap)[4] == _plan(without)[4]
    assert set(_plan(snap)[3]) - set(_plan(without)[3]) == {Alert.MESSAGE_UNDECODABLE}
