"""`mqjournal demo --approve`, the README's first command, end to end: a real `airflow standalone`, the real Spark
job and the simulator over SSH, with the approval gate answered through Airflow's REST API."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mqjournal.catalog import Catalog
from mqjournal.linuxsim.host import LinuxSimulatedHost
from mqjournal.sim.host import SimulatedHost
from tests.conftest import AIRFLOW_STANDALONE


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Nothing listens there (connections left in TIME_WAIT do not count)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.mark.e2e
@AIRFLOW_STANDALONE
def test_demo_approve_runs_the_maintenance_dag_in_airflow_and_deletes_receivers(tmp_path: Path):
    ssh_port, linux_port, api_port = free_port(), free_port(), free_port()
    fleet = tmp_path / "fleet.yaml"
    # A mixed fleet (#32): a partition, and a Linux host whose Archive-mode queue manager writes 256 KiB extents.
    linux_qm = {"name": "QM.LAB", "log_management": "Archive", "log_file_pages": 64, "log_bytes_per_minute": 20000}
    fleet.write_text(
        yaml.safe_dump(
            {
                "state_dir": "state",
                "warmup_hours": 4,
                "hosts": [
                    {"name": "lab", "port": ssh_port, "queue_managers": [{"name": "TEST", "threshold_kb": 500}]},
                    {"name": "lab-linux", "platform": "linux", "port": linux_port, "queue_managers": [linux_qm]},
                ],
            }
        )
    )
    home = tmp_path / "airflow"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "MQJOURNAL_"))}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mqjournal.cli",
            "demo",
            "--approve",
            "--fleet",
            str(fleet),
            "--home",
            str(home),
            "--port",
            str(api_port),
            # Minutes: `make test` runs the demo beside the rest of the suite on 2 cores (some 3 minutes alone).
            "--timeout",
            "12",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    out = done.stdout + done.stderr
    log = home / "airflow.log"
    detail = f"{out[-6000:]}\n--- {log} ---\n{log.read_text()[-3000:] if log.exists() else ''}"
    assert done.returncode == 0, detail

    # The run went through one gate for both platforms, answered over the REST API, and succeeded. Each option says
    # what it lets go: the partition's receivers, the Linux queue manager's log extents, and all of them.
    assert "APPROVAL NEEDED" in out, detail
    options = (
        r"'lab-linux/QM\.LAB: \d+ log extents?, [\d.]+ [KMG]?B', 'lab/TEST: \d+ receivers?, [\d.]+ [KMG]?B', "
        r"'All queue managers above: \d+ receivers? and \d+ log extents?, [\d.]+ [KMG]?B'"
    )
    assert re.search(rf"answered \[{options}\] as admin \(--approve\)", out), detail
    run_line = re.search(r"^run (\S+): SUCCESS$", out, re.M)
    assert run_line, detail
    assert re.search(r"^\s+delete\[0\]\s+success$", out, re.M), detail

    # The report says what was deleted (as the catalog records it), and the partition agrees.
    (report,) = (home / "mqjournal" / "reports").glob("*.md")
    text = report.read_text()
    assert str(report) in out
    catalog = Catalog(f"sqlite:///{home / 'mqjournal' / 'catalog.db'}")
    deleted = sorted(d.receiver for d in catalog.deletions_for("lab", "QMTEST"))
    assert deleted and "approved by admin" in text and deleted[0] in text, text
    partition = SimulatedHost.load(tmp_path / "state" / "lab.json").partition
    assert not set(deleted) & {r.name for r in partition.receivers_in("QMTEST")}

    # The Linux queue manager's extents behind RECLOG and MEDIALOG were archived with the host's proof, then released
    # (SET LOG ARCHIVED), and the report says so in MQ's terms.
    copies = catalog.extent_copies("lab-linux", "QM.LAB")
    assert copies and all(c.sha256 == c.host_sha256 for c in copies), detail
    assert "Linux queue managers (linear logs)" in text and "released (told to MQ with SET LOG ARCHIVED)" in text, text
    assert re.search(r"^\s+linux_release\s+success$", out, re.M), detail
    said = re.search(r"released \(told to MQ with SET LOG ARCHIVED\): ([^\n]+)", text)
    assert said, text
    released = set()
    for part in said.group(1).split(", "):  # `S0000000.LOG-S0000047.LOG (48)` or one name
        first, _, rest = part.partition("-")
        last = rest.split(" ")[0] if rest else first
        released |= {f"S{n:07d}.LOG" for n in range(int(first[1:8]), int(last[1:8]) + 1)}
    assert released <= {c.extent for c in copies}, (released, copies)
    # Nothing restart needs was released: the queue manager ends and starts again.
    linux = LinuxSimulatedHost.load(tmp_path / "state" / "lab-linux.linux.json")
    assert linux is not None
    for command in ("/opt/mqm/bin/endmqm -i QM.LAB", "/opt/mqm/bin/strmqm QM.LAB"):
        result = linux.run(command, "mqjournal")
        assert result.exit_status == 0, (command, result.stdout, result.stderr)

    # Airflow and the simulator are gone: both ports are free again, nothing runs from the demo's home.
    assert port_is_free(api_port) and port_is_free(ssh_port) and port_is_free(linux_port)
    assert not processes_with(f"AIRFLOW_HOME={home.resolve()}")


def processes_with(environment_entry: str) -> list[str]:
    """Command lines of the live processes whose environment holds `environment_entry` (Linux /proc)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if environment_entry.encode() in (proc / "environ").read_bytes().split(b"\0"):
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return found
