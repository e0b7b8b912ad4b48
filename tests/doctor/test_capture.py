"""`mqjournal doctor --capture` on the demo fleet: the folder it writes passes the conformance tests, and nothing
secret or naming a host survives in it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from mqjournal.capture import WRITE_CL
from mqjournal.sim.service import SimulatorService
from tests.conformance.corpus import CAPTURES_ENV
from tests.doctor.demofleet import demo_fleet

ROOT = Path(__file__).resolve().parents[2]


def _doctor(fleet_file: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mqjournal.cli", "doctor", "--fleet", str(fleet_file), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=fleet_file.parent,
        stdin=subprocess.DEVNULL,
    )


def test_a_capture_of_the_demo_fleet_passes_the_conformance_tests_and_names_no_host_user_or_serial(tmp_path):
    config = demo_fleet(tmp_path)
    service = SimulatorService(config)
    ports = service.start()
    capture = tmp_path / "capture"
    try:
        live = config.model_copy(update={"hosts": [h.model_copy(update={"port": ports[h.name]}) for h in config.hosts]})
        fleet_file = tmp_path / "fleet.yaml"
        fleet_file.write_text(yaml.safe_dump(live.model_dump(mode="json")), encoding="utf-8")
        audit = ("--audit", str(tmp_path / "audit.jsonl"))
        listed = _doctor(fleet_file, "--capture", str(capture), *audit)
        nothing_written = not capture.exists()
        written = _doctor(fleet_file, "--capture", str(capture), "--yes", *audit)
        serials = [h.partition.serial_number() for h in service.hosts.values()]
        host_names = [p.name for h in service.hosts.values() for p in [h.partition]]
    finally:
        service.stop()

    # Without --yes (and no terminal to ask at): the file list, and nothing written.
    assert listed.returncode == 2, listed.stdout + listed.stderr
    assert "manifest.json" in listed.stdout and "--yes" in listed.stderr + listed.stdout
    assert nothing_written
    assert written.returncode == 0, written.stdout + written.stderr
    files = sorted(str(p.relative_to(capture)) for p in capture.rglob("*") if p.is_file())
    assert files == sorted(line.strip() for line in written.stdout.splitlines() if line.startswith("  "))
    assert len([f for f in files if f.endswith("manifest.json")]) == len(config.hosts)

    # Nothing that names a host, an address, the user profile or a serial number; no key, no password.
    text = "\n".join((capture / f).read_text(encoding="utf-8") for f in files)
    key = (tmp_path / "state" / "client_key").read_text(encoding="utf-8")
    known_hosts = (tmp_path / "state" / "known_hosts").read_text(encoding="utf-8")
    forbidden = [*host_names, *(h.address for h in config.hosts), config.user, *serials]
    forbidden += [line.split()[-1] for line in known_hosts.splitlines() if line.strip()]  # the host keys
    forbidden += [line for line in key.splitlines() if line and not line.startswith("-----")]
    for secret in forbidden:
        assert secret.lower() not in text.lower(), secret
    for word in ("PRIVATE KEY", "password", "passphrase"):
        assert word.lower() not in text.lower(), word
    assert "USER" in text and "SERIAL" in text and "HOST" in text

    # Only reads: no command that changes a partition.
    for manifest in capture.rglob("manifest.json"):
        for entry in yaml.safe_load(manifest.read_text(encoding="utf-8"))["fixtures"]:
            assert not any(f"'{verb} " in entry["command"] or f"'{verb}'" in entry["command"] for verb in WRITE_CL)

    # Dropped into the corpus ($MQJOURNAL_CAPTURES stands for tests/conformance/captures/), the tests pass on it.
    conformance = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            "tests/conformance/test_client_reads_the_corpus.py",
            "tests/conformance/test_simulator_answers_like_ibm_i.py",
            "-k",
            "capture or result_table or cli_error or cl_messages or message_ids",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, CAPTURES_ENV: str(capture)},
    )
    assert conformance.returncode == 0, conformance.stdout[-3000:] + conformance.stderr[-2000:]
    assert "host1/" not in conformance.stdout  # ids are only shown for failures
