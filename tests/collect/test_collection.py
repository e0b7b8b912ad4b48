"""Collecting queue managers from simulated IBM i partitions over SSH, as `mqjournal collect` does."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jsonschema
import pytest
import yaml
from pydantic import ValidationError

from mqjournal import snapshot as contract
from mqjournal.collection import collect_fleet
from mqjournal.fleet import FleetConfig, HostConfig, PartitionSystemConfig, QueueManagerConfig, load_fleet
from mqjournal.ibmi.audit import read_audit
from mqjournal.jrninf import parse_amqjrninf
from mqjournal.sim.model import CommandFault
from mqjournal.sim.protocol import DropRule
from mqjournal.sim.service import SimulatorService
from tests.conftest import DST_ENDS, SimFleet, fleet_config, new_york_config, serve

QM = QueueManagerConfig(name="TEST", threshold_kb=500)


def live(fleet: SimFleet) -> FleetConfig:
    """The fleet file as the collector sees it once the simulator has its ports."""
    return fleet.config.model_copy(
        update={"hosts": [h.model_copy(update={"port": fleet.ports[h.name]}) for h in fleet.config.hosts]}
    )


def collect(fleet: SimFleet, out: Path, **kwargs):
    run_dir, _results = collect_fleet(live(fleet), out, **kwargs)
    snapshots = list(contract.read_snapshots(run_dir / "snapshots.jsonl"))
    failures = [json.loads(line) for line in (run_dir / "failures.jsonl").read_text().splitlines()]
    return snapshots, failures


@pytest.fixture
def two_hosts(tmp_path: Path):
    config = fleet_config(
        tmp_path,
        [
            HostConfig(name="ibmi1", port=0, utc_offset="+01:00", queue_managers=[QM]),
            HostConfig(
                name="ibmi2",
                port=0,
                utc_offset="-05:00",
                queue_managers=[QM, QueueManagerConfig(name="PAY", threshold_kb=800)],
            ),
        ],
    )
    with serve(config, advance=timedelta(hours=3)) as fleet:
        yield fleet


def test_snapshots_validate_against_the_published_schema_and_match_the_partition(two_hosts: SimFleet, tmp_path):
    snapshots, failures = collect(two_hosts, tmp_path / "out", run_id="r1")
    assert failures == []
    assert sorted((s.host, s.qmgr) for s in snapshots) == [("ibmi1", "TEST"), ("ibmi2", "PAY"), ("ibmi2", "TEST")]
    schema = json.loads(contract.published_schema_text())
    for snap in snapshots:
        jsonschema.validate(json.loads(snap.model_dump_json()), schema)
        partition = two_hosts.host(snap.host).partition
        qm = partition.queue_manager(snap.qmgr)
        on_host = {r.name: r for r in partition.receivers_in(qm.library)}
        assert {r.name for r in snap.receivers} == set(on_host)
        for r in snap.receivers:
            assert r.status.value == on_host[r.name].status.value
            assert r.attached_at == on_host[r.name].attached_at
            assert r.first_sequence == on_host[r.name].first_sequence
        assert snap.amqjrninf == partition.user_spaces[f"{qm.library}/AMQJRNINF"].data
        assert snap.checkpoint.forced and snap.checkpoint.ok
        assert {m.id for m in snap.checkpoint.messages} >= {"AMQ7460", "AMQ7462", "AMQ7086"}
        attached = next(r.name for r in snap.receivers if r.status == "ATTACHED")
        # Nothing holds the recovery points back: the forced checkpoint moves them onto the attached receiver.
        assert parse_amqjrninf(snap.amqjrninf, qmgr=snap.qmgr).receiver == attached
        assert snap.startup_recovery.receiver == snap.media_recovery.receiver == attached
        assert snap.collected_at.utcoffset() == partition.now.utcoffset()


def test_the_same_queue_manager_name_on_two_hosts_gives_two_snapshots(two_hosts: SimFleet, tmp_path):
    snapshots, _ = collect(two_hosts, tmp_path / "out")
    tests = [s for s in snapshots if s.qmgr == "TEST"]
    assert {s.host for s in tests} == {"ibmi1", "ibmi2"}
    assert tests[0].receivers != tests[1].receivers


def test_a_queue_manager_costs_at_most_four_round_trips_after_its_checkpoint(two_hosts: SimFleet, tmp_path):
    out = tmp_path / "out"
    collect(two_hosts, out)
    audit = [r for r in read_audit(out / "audit.jsonl") if r["host"] == "ibmi2"]
    checkpoint = next(i for i, r in enumerate(audit) if "RCDMQMIMG" in r["command"] and "'PAY'" in r["command"])
    after = [r for r in audit[checkpoint + 1 :] if "QMPAY" in r["command"] and "RCDMQMIMG" not in r["command"]]
    assert 1 <= len(after) <= 4
    assert all(r["outcome"] == "ok" for r in after)


def test_every_command_sent_is_in_the_audit_log_without_secrets(two_hosts: SimFleet, tmp_path):
    out = tmp_path / "out"
    collect(two_hosts, out)
    records = read_audit(out / "audit.jsonl")
    assert {r["host"] for r in records} == {"ibmi1", "ibmi2"}
    assert all(r["user"] == "MQADMIN" and r["duration_ms"] >= 0 for r in records)
    key_text = two_hosts.config.client_key.read_text()
    body = (out / "audit.jsonl").read_text()
    assert two_hosts.service.client_key.get_base64() not in body
    assert key_text.splitlines()[1] not in body


def test_a_failed_rcdmqmimg_gives_a_snapshot_with_checkpoint_not_ok_and_its_message(two_hosts: SimFleet, tmp_path):
    with two_hosts.host("ibmi1").state() as partition:
        partition.faults.commands.append(CommandFault(pattern="^RCDMQMIMG", msg_id="AMQ8146"))
    snapshots, failures = collect(two_hosts, tmp_path / "out")
    snap = next(s for s in snapshots if s.host == "ibmi1")
    assert failures == []
    assert snap.checkpoint.forced and not snap.checkpoint.ok
    assert [m.id for m in snap.checkpoint.messages] == ["AMQ8146"]
    assert snap.receivers  # the rest was still collected


def test_a_connection_dropped_mid_collection_is_retried_and_the_snapshot_is_complete(two_hosts: SimFleet, tmp_path):
    # The chain's query, not the capabilities query that names the view among others.
    query = "FROM QSYS2.JOURNAL_RECEIVER_INFO"
    two_hosts.service.faults["ibmi1"].drops.append(DropRule(pattern=query, after_run=True))
    out = tmp_path / "out"
    snapshots, failures = collect(two_hosts, out, hosts=["ibmi1"])
    assert failures == []
    (snap,) = snapshots
    assert len(snap.receivers) == len(two_hosts.host("ibmi1").partition.receivers)
    outcomes = [r["outcome"] for r in read_audit(out / "audit.jsonl") if query in r["command"]]
    assert outcomes == ["transport_error", "ok"]


def test_a_dropped_receiver_change_is_not_repeated_and_the_queue_manager_is_clearly_failed(
    two_hosts: SimFleet, tmp_path
):
    two_hosts.service.faults["ibmi1"].drops.append(DropRule(pattern="CHGJRN", after_run=True))
    before = len(two_hosts.host("ibmi1").partition.receivers)
    snapshots, failures = collect(two_hosts, tmp_path / "out", hosts=["ibmi1"], change_receiver=True)
    assert snapshots == []
    (failure,) = failures
    assert failure["host"] == "ibmi1" and "CHGJRN" in failure["error"]
    # CHGJRN ran once (the drop hid its answer); it was not sent again.
    assert len(two_hosts.host("ibmi1").partition.receivers) == before + 1


def test_a_changed_host_key_is_refused_and_the_other_hosts_are_collected(two_hosts: SimFleet, tmp_path):
    known = two_hosts.config.known_hosts
    lines = known.read_text().splitlines()
    import paramiko

    forged = paramiko.ECDSAKey.generate()
    lines[0] = " ".join([*lines[0].split()[:2], forged.get_base64()])
    known.write_text("\n".join(lines) + "\n")
    snapshots, failures = collect(two_hosts, tmp_path / "out")
    assert {s.host for s in snapshots} == {"ibmi2"}
    (failure,) = failures
    assert failure["host"] == "ibmi1" and failure["qmgr"] is None
    assert "HostKeyRejected" in failure["error"]
    assert not any(r["host"] == "ibmi1" and r["outcome"] == "ok" for r in read_audit(tmp_path / "out" / "audit.jsonl"))


def test_a_host_that_is_down_is_recorded_as_failed_and_the_others_are_collected(two_hosts: SimFleet, tmp_path):
    two_hosts.service.faults["ibmi2"].refuse_connections = True
    snapshots, failures = collect(two_hosts, tmp_path / "out")
    assert {s.host for s in snapshots} == {"ibmi1"}
    assert [(f["host"], f["qmgr"]) for f in failures] == [("ibmi2", None)]
    assert "HostUnreachable" in failures[0]["error"]


def test_queue_managers_are_discovered_when_the_fleet_file_names_none(tmp_path):
    config = fleet_config(tmp_path)
    service = SimulatorService(config)
    ports = service.start()
    try:
        fleet = SimFleet(service, ports, config)
        bare = live(fleet).model_copy(
            update={"hosts": [h.model_copy(update={"queue_managers": []}) for h in live(fleet).hosts]}
        )
        run_dir, _ = collect_fleet(bare, tmp_path / "out")
        (snap,) = contract.read_snapshots(run_dir / "snapshots.jsonl")
        assert (snap.qmgr, snap.qmgr_library, snap.journal.name) == ("TEST", "QMTEST", "AMQAJRN")
    finally:
        service.stop()


def test_messages_are_read_since_the_previous_collection(two_hosts: SimFleet, tmp_path):
    out = tmp_path / "out"
    first, _ = collect(two_hosts, out, hosts=["ibmi1"], run_id="one")
    host = two_hosts.host("ibmi1")
    host.advance(timedelta(hours=1))
    second, _ = collect(two_hosts, out, hosts=["ibmi1"], run_id="two")
    assert first[0].messages and second[0].messages
    assert min(m.at for m in second[0].messages) >= first[0].collected_at


def test_a_cpi70e3_about_the_journal_is_collected(two_hosts: SimFleet, tmp_path):
    shell = two_hosts.connect("ibmi1")
    attached = next(r.name for r in two_hosts.host("ibmi1").partition.receivers.values() if r.status == "ATTACHED")
    following = f"AMQA{int(attached[4:]) + 1:06d}"
    assert shell.cl(f"CRTJRNRCV JRNRCV(QMTEST/{following}) THRESHOLD(500)")[0] == 0
    two_hosts.host("ibmi1").advance(timedelta(hours=1))
    snapshots, _ = collect(two_hosts, tmp_path / "out", hosts=["ibmi1"])
    assert "CPI70E3" in {m.id for m in snapshots[0].messages}
    assert following in {r.name for r in snapshots[0].receivers}  # in the library, not (yet) in the chain


@pytest.mark.parametrize(
    "field, value",
    [("name", "TEST'); DLTLIB QGPL"), ("library", "QM;RM -RF"), ("library", "QMTEST) DLTLIB(QGPL")],
)
def test_a_malicious_name_in_the_fleet_file_is_rejected_before_any_command(tmp_path, field, value):
    qm = {"name": "TEST", field: value}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"hosts": [{"name": "ibmi1", "port": 1, "queue_managers": [qm]}]}))
    with pytest.raises(ValidationError):
        load_fleet(path)
    assert not (tmp_path / ".sim").exists()


def test_amqjrninf_is_read_as_ebcdic_bytes_when_the_character_column_does_not_convert(two_hosts: SimFleet, tmp_path):
    with two_hosts.host("ibmi1").state() as partition:
        partition.faults.ccsid_unconvertible = True
    out = tmp_path / "out"
    snapshots, _ = collect(two_hosts, out, hosts=["ibmi1"])
    # As rewritten by the collection's own checkpoint.
    assert snapshots[0].amqjrninf == two_hosts.host("ibmi1").partition.user_spaces["QMTEST/AMQJRNINF"].data
    assert any("DATA_BINARY" in r["command"] for r in read_audit(out / "audit.jsonl"))


def test_an_object_amq7472_reports_damaged_is_collected_with_its_type_and_time(tmp_path):
    damaged = QueueManagerConfig(
        name="BILLING", threshold_kb=500, damaged_object="APP.REQUEST.QUEUE", damaged_at_hour=1
    )
    hosts = [HostConfig(name="ibmi1", port=0, utc_offset="+01:00", queue_managers=[damaged])]
    config = fleet_config(tmp_path, hosts).model_copy(update={"warmup_hours": 3})
    with serve(config) as fleet:
        snapshots, _ = collect(fleet, tmp_path / "out")
    (snap,) = snapshots
    assert [(d.object, d.object_type) for d in snap.damaged_objects] == [("APP.REQUEST.QUEUE", "LCLQ")]
    reports = [m.at for m in snap.messages if m.id == "AMQ7472"]
    assert snap.damaged_objects[0].reported_at == max(reports)


def test_a_receiver_detached_before_a_dst_change_is_read_at_its_true_moment(tmp_path):
    # New York's partition: EDT (-04:00) until 06:00 UTC on 1 November 2026, EST (-05:00) after; QUTCOFFSET is -0500
    # when collected, so reading every time with it would age the receivers detached before the change an hour.
    host = HostConfig(
        name="ibmi1",
        port=0,
        utc_offset="-04:00",
        system=PartitionSystemConfig(time_zone="QN0500EST3"),
        queue_managers=[QueueManagerConfig(name="TEST", threshold_kb=500, entries_per_minute=40)],
    )
    start = datetime(2026, 11, 1, 3, 0, tzinfo=UTC)
    config = FleetConfig(state_dir=tmp_path / "state", start=start, hosts=[host]).resolved(tmp_path)
    with serve(config, advance=timedelta(hours=6)) as fleet:
        snapshots, failures = collect(fleet, tmp_path / "out", run_id="r1")
        on_host = {r.name: r for r in fleet.host("ibmi1").partition.receivers_in("QMTEST")}
    assert failures == []
    (snap,) = snapshots
    change = datetime(2026, 11, 1, 6, 0, tzinfo=UTC)
    before = [r for r in snap.receivers if r.detached_at is not None and r.detached_at < change - timedelta(hours=1)]
    assert before, "the test needs a receiver detached in EDT"
    for r in snap.receivers:
        for read, true in ((r.attached_at, on_host[r.name].attached_at), (r.detached_at, on_host[r.name].detached_at)):
            if read is None or true is None:
                assert read is None and true is None
            elif change - timedelta(hours=1) <= true < change + timedelta(hours=1):
                # 01:00-02:00 local happened twice: read as the later moment, so the receiver looks younger.
                assert read - true in (timedelta(0), timedelta(hours=1))
            else:
                assert read == true
    assert snap.collected_at.utcoffset() == timedelta(hours=-5)


def test_a_time_zone_description_without_known_rules_is_read_with_todays_offset_and_said(tmp_path, caplog):
    # Japan's IBM-supplied description (no DST) is not in the client's table of rules: the collection goes on with
    # QUTCOFFSET, as before, and says so once for the host (at discovery), rather than stopping the fleet's maintenance.
    host = HostConfig(
        name="ibmi1",
        port=0,
        utc_offset="+09:00",
        system=PartitionSystemConfig(time_zone="QP0900JST"),
        queue_managers=[QueueManagerConfig(name="TEST", threshold_kb=500, entries_per_minute=40)],
    )
    config = FleetConfig(state_dir=tmp_path / "state", hosts=[host]).resolved(tmp_path)
    with (
        caplog.at_level("WARNING", logger="mqjournal.ibmi.readings"),
        serve(config, advance=timedelta(hours=3)) as fleet,
    ):
        snapshots, failures = collect(fleet, tmp_path / "out", run_id="r1")
        on_host = {r.name: r for r in fleet.host("ibmi1").partition.receivers_in("QMTEST")}
    assert failures == []
    (snap,) = snapshots
    assert snap.collected_at.utcoffset() == timedelta(hours=9)
    assert [(r.attached_at, r.detached_at) for r in snap.receivers] == [
        (on_host[r.name].attached_at, on_host[r.name].detached_at) for r in snap.receivers
    ]
    (warning,) = [r.getMessage() for r in caplog.records if "QTIMZON" in r.getMessage()]
    assert "QP0900JST" in warning and warning.startswith("ibmi1:") and "QUTCOFFSET +09" in warning
    assert "time_zone_rules" in warning  # what to write in the fleet file


def test_a_messages_window_across_the_start_of_dst_starts_at_the_previous_collection(tmp_path):
    # New York's clocks go from 02:00 EST to 03:00 EDT at 07:00 UTC on 8 March 2026. The first collection is at
    # 01:30 EST; the second, in EDT, asks for the messages since then: written with today's offset (-04:00) the
    # window would start at 02:30 local and lose the half hour 01:30-02:00 EST.
    config = new_york_config(tmp_path, start=datetime(2026, 3, 8, 4, 0, tzinfo=UTC))
    with serve(config, advance=timedelta(hours=2, minutes=30)) as fleet:
        (first,), _ = collect(fleet, tmp_path / "out", run_id="one")
        fleet.host("ibmi1").advance(timedelta(hours=2))
        (second,), failures = collect(fleet, tmp_path / "out", run_id="two")
    assert failures == []
    since = first.collected_at
    assert since < datetime(2026, 3, 8, 7, 0, tzinfo=UTC) < second.collected_at
    earliest = min(m.at for m in second.messages)
    assert since <= earliest < since + timedelta(minutes=5)


def test_a_sites_own_time_zone_description_is_read_with_the_fleet_files_time_zone_rules(tmp_path, caplog):
    # NEWYORK is the site's own description (IBM reserves names starting with Q for its own), unknown to mqjournal's table: the fleet file's
    # time_zone_rules say it follows New York's DST, so receivers detached in EDT are read at their true moment.
    config = new_york_config(
        tmp_path,
        start=datetime(2026, 11, 1, 3, 0, tzinfo=UTC),
        time_zone="NEWYORK",
        time_zone_rules="America/New_York",
    )
    with caplog.at_level("WARNING"), serve(config, advance=timedelta(hours=6)) as fleet:
        (snap,), failures = collect(fleet, tmp_path / "out", run_id="r1")
        on_host = {r.name: r for r in fleet.host("ibmi1").partition.receivers_in("QMTEST")}
    assert failures == []
    assert not [r for r in caplog.records if "QTIMZON" in r.getMessage()]
    outside_repeated_hour = [
        r for r in snap.receivers if r.detached_at is not None and abs(r.detached_at - DST_ENDS) > timedelta(hours=1)
    ]
    assert any(r.detached_at < DST_ENDS for r in outside_repeated_hour), "the test needs a receiver detached in EDT"
    assert [(r.attached_at, r.detached_at) for r in outside_repeated_hour] == [
        (on_host[r.name].attached_at, on_host[r.name].detached_at) for r in outside_repeated_hour
    ]
