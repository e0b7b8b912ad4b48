"""An AIX host of the fleet file (`platform: aix`) through the maintenance and recovery DAGs' steps, reached as they
reach it (its Airflow connection in the environment): collected, archived with the host's own SHA-256 (openssl, as
AIX has no sha256sum), released with proven copies only; then an extent restart needs, deleted, is put back from its
copy, proven by the host, and the queue manager starts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqjournal.airflow.settings import Settings
from tests.airflow.hostlane import (
    Lane,
    lane_settings,
    maintain_with_proven_copies,
    nothing_let_go_without_a_digest,
    put_back_a_deleted_restart_extent,
    sent,
    served,
)
from tests.conftest import SimFleet

AIX, QMGR, ARCHIVED = "mq-aix1", "QMAIXMAN", "QM.PAY"
LANE = Lane(host=AIX, platform="aix", manual=QMGR, archive=ARCHIVED)


@pytest.fixture
def aix_fleet(tmp_path: Path) -> Iterator[SimFleet]:
    with served(LANE, tmp_path) as fleet:
        yield fleet


@pytest.fixture
def settings(aix_fleet: SimFleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return lane_settings(LANE, aix_fleet, tmp_path, monkeypatch)


def test_the_maintenance_lane_archives_with_openssl_s_digest_and_releases_only_proven_extents(settings, aix_fleet):
    done, commands = maintain_with_proven_copies(settings, aix_fleet, LANE)

    for qmgr in done:
        assert [c for c in commands if c.startswith(f"/usr/mqm/bin/rcdmqimg -l -m {qmgr}")]
    digests = [c for c in commands if c.startswith("openssl dgst -sha256 -r ")]
    assert len(digests) >= sum(len(a.archived) for a, _ in done.values()) and "sha256sum" not in " ".join(commands)
    assert [c for c in commands if c.startswith("LC_ALL=C ls -l ")] and "--time" not in " ".join(commands)
    manual = done[QMGR][1]
    assert manual is not None
    removed = [c for c in commands if c.startswith("rm ")]
    assert removed == [f"rm -f /var/mqm/log/{QMGR}/active/{name}" for name in manual.released]  # Archive: SET LOG


def test_mqjournal_collect_collects_an_aix_host_in_aix_s_forms(aix_fleet, tmp_path: Path, capsys) -> None:
    from mqjournal.cli import main
    from mqjournal.linuxmq.snapshot import read_linux_snapshots

    fleet_file = tmp_path / "fleet.json"
    data = aix_fleet.config.model_dump(mode="json")
    for host in data["linux_hosts"]:
        host["port"] = aix_fleet.ports[host["name"]]
    fleet_file.write_text(json.dumps(data))

    code = main(["collect", "--fleet", str(fleet_file), "--out", str(tmp_path / "out"), "--run-id", "r1"])

    assert code == 0, capsys.readouterr().out  # GNU's listing would be refused by AIX's ls: no snapshot
    linux = list(read_linux_snapshots(tmp_path / "out" / "linux-snapshots" / "run_id=r1" / "snapshots.jsonl"))
    live = aix_fleet.service.linux_hosts[AIX].host.queue_managers
    assert {s.qmgr: len(s.extents) for s in linux} == {name: len(qm.extents) for name, qm in live.items()}


def test_the_recovery_lane_puts_a_deleted_restart_extent_back_proven_by_the_host_and_starts_it(settings, aix_fleet):
    back = put_back_a_deleted_restart_extent(settings, aix_fleet, LANE)

    put = back.after.index(f"SFTP PUT /var/mqm/log/{QMGR}/active/{back.doomed}")
    proof = f"openssl dgst -sha256 -r /var/mqm/log/{QMGR}/active/{back.doomed}"
    assert proof in back.after[put:] and back.after.index(proof) < back.after.index(f"/usr/mqm/bin/strmqm {QMGR}")


def test_an_aix_host_without_a_sha256_program_has_nothing_archived_and_nothing_released(settings, aix_fleet):
    nothing_let_go_without_a_digest(settings, aix_fleet, LANE, missing="openssl", why="openssl.base")
    assert not [c for c in sent(settings) if c.startswith("rm ") or "SET LOG" in c]
