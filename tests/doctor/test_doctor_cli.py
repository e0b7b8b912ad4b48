"""`mqjournal doctor` as an admin runs it: a subprocess on a fleet file, its table and its exit status."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import yaml

from mqjournal.fleet import HostConfig, PartitionSystemConfig, QueueManagerConfig
from mqjournal.sim.service import SimulatorService
from tests.conftest import fleet_config


def _doctor(fleet_file: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mqjournal.cli",
            "doctor",
            "--fleet",
            str(fleet_file),
            "--audit",
            str(fleet_file.parent / "audit.jsonl"),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=fleet_file.parent,
    )


def test_a_ready_host_exits_0_and_an_old_release_exits_3_naming_what_brings_the_service(tmp_path):
    qm = [QueueManagerConfig(name="TEST", threshold_kb=500)]
    config = fleet_config(
        tmp_path,
        [
            HostConfig(name="ready", port=0, queue_managers=qm),
            HostConfig(name="old", port=0, queue_managers=qm, system=PartitionSystemConfig(release="7.3")),
        ],
    )
    # The partitions' clocks at the controller's time: the doctor checks the skew.
    config = config.model_copy(update={"start": datetime.now(UTC)})
    service = SimulatorService(config)
    ports = service.start()
    try:
        live = config.model_copy(update={"hosts": [h.model_copy(update={"port": ports[h.name]}) for h in config.hosts]})
        fleet_file = tmp_path / "fleet.yaml"
        fleet_file.write_text(yaml.safe_dump(live.model_dump(mode="json")), encoding="utf-8")
        ready = _doctor(fleet_file, "--host", "ready")
        old = _doctor(fleet_file)
    finally:
        service.stop()
    assert ready.returncode == 0, ready.stdout + ready.stderr
    assert "Traceback" not in ready.stderr and "ready" in ready.stdout
    assert old.returncode == 3, old.stdout + old.stderr
    assert "Traceback" not in old.stderr
    assert "SAVE_FILE_OBJECTS" in old.stdout and "SF99950" in old.stdout


def test_a_fleet_file_that_does_not_exist_exits_2_without_a_traceback(tmp_path):
    result = _doctor(tmp_path / "missing.yaml")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "missing.yaml" in result.stderr + result.stdout
