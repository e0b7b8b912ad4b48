"""The collector reads partitions that differ as real ones do, and plans the same from each (issue #13's acceptance).

Real partitions answer in their job's language and date format, run different IBM i releases, and most have no
`db2` on the PASE PATH. The same workload on each must give the same snapshot, apart from what is only for people
(message texts) and the host's name, and so the same plan.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from mqjournal import snapshot as contract
from mqjournal.collection import collect_fleet
from mqjournal.fleet import HostConfig, PartitionSystemConfig, QueueManagerConfig
from mqjournal.rules import plan_fleet
from mqjournal.sim.service import SimulatorService
from tests.conftest import SimFleet, fleet_config

# Trouble on both queue managers, so that the recovery points and AMQ7472 have something to say.
QMS = [
    QueueManagerConfig(name="PAY", threshold_kb=300, entries_per_minute=60, long_running_unit_of_work_at_hour=2),
    QueueManagerConfig(name="BILL", threshold_kb=400, damaged_object="APP.REQUEST.QUEUE", damaged_at_hour=3),
]

VARIANTS = {
    # A stock 7.5 partition in English: db2 only through qsh.
    "enu-ymd": ("qsh", PartitionSystemConfig()),
    # German job, day-month-year with dots, an older release.
    "deu-dmy": ("qsh", PartitionSystemConfig(language="DEU", date_format="*DMY", date_separator=".", release="7.4")),
    # Month-day-year, the newest release, and an admin-made db2 link used directly.
    "enu-mdy": ("db2", PartitionSystemConfig(date_format="*MDY", date_separator="-", release="7.6", db2_link=True)),
}


@pytest.fixture(scope="module")
def variants(tmp_path_factory) -> tuple[SimFleet, dict[str, contract.Snapshot]]:
    tmp_path = tmp_path_factory.mktemp("variants")
    hosts = [
        HostConfig(name=name, port=0, utc_offset="+01:00", sql_runner=runner, system=system, queue_managers=QMS)
        for name, (runner, system) in VARIANTS.items()
    ]
    config = fleet_config(tmp_path, hosts)
    service = SimulatorService(config)
    ports = service.start()
    try:
        for host in service.hosts.values():
            host.warm_up(config.host(host.partition.name), config.first_moment(), 6)
        fleet = SimFleet(service, ports, config)
        live = config.model_copy(update={"hosts": [h.model_copy(update={"port": ports[h.name]}) for h in config.hosts]})
        run_dir, _ = collect_fleet(live, tmp_path / "out", run_id="r1")
        failures = (run_dir / "failures.jsonl").read_text().splitlines()
        assert failures == [], [json.loads(f) for f in failures]
        snapshots = list(contract.read_snapshots(run_dir / "snapshots.jsonl"))
        yield fleet, {(s.host, s.qmgr): s for s in snapshots}
    finally:
        service.stop()


def _comparable(snapshot: contract.Snapshot) -> dict:
    """The snapshot without what differs by design: the host's name and the texts written for people."""
    data = snapshot.model_dump(mode="json", by_alias=True)
    data.pop("host")
    data["checkpoint"].pop("messages")
    for message in data["messages"]:
        message.pop("text")
    return data


@pytest.mark.parametrize("qmgr", [q.name for q in QMS])
@pytest.mark.parametrize("variant", [v for v in VARIANTS if v != "enu-ymd"])
def test_every_variant_gives_the_snapshot_of_a_stock_english_partition(variants, variant, qmgr):
    _, snapshots = variants
    reference, other = snapshots[("enu-ymd", qmgr)], snapshots[(variant, qmgr)]
    assert reference.startup_recovery is not None and reference.media_recovery is not None
    assert reference.asp_number == 1 and 0 < reference.asp_available_bytes < reference.asp_capacity_bytes
    assert all(m.tokens for m in reference.messages)
    assert _comparable(other) == _comparable(reference)


def test_the_texts_really_differ_so_the_comparison_proves_something(variants):
    _, snapshots = variants
    english = {m.text for m in snapshots[("enu-ymd", "PAY")].messages if m.id == "AMQ7460"}
    german = {m.text for m in snapshots[("deu-dmy", "PAY")].messages if m.id == "AMQ7460"}
    assert english and german and not english & german


def test_the_plans_are_the_same_on_every_variant(variants):
    _, snapshots = variants
    by_host: dict[str, list] = {}
    for (host, _), snap in snapshots.items():
        by_host.setdefault(host, []).append(snap)
    as_of = max(s.collected_at for s in snapshots.values()) + timedelta(minutes=1)
    plans = {}
    for host, snaps in by_host.items():
        plan = plan_fleet(snaps, as_of=as_of)
        plans[host] = (
            sorted((q.qmgr, q.oldest_needed, q.block_reason, q.alerts, q.recovery_points) for q in plan.queue_managers),
            sorted((r.qmgr, r.receiver, r.action, r.reason) for r in plan.receivers),
        )
    assert plans["deu-dmy"] == plans["enu-ymd"] == plans["enu-mdy"]
