"""The `mqjournal` command line as an admin uses it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import paramiko
import pytest
import yaml

from mqjournal.cli import main
from mqjournal.snapshot import read_snapshots
from tests.conftest import SimFleet


def test_help_lists_the_subcommands(capsys):
    try:
        main(["--help"])
    except SystemExit as done:
        assert done.code == 0
    out = capsys.readouterr().out
    for command in ("collect", "sim", "demo", "schema"):
        assert command in out


def test_collect_writes_snapshots_for_every_queue_manager_of_the_fleet_file(sim_fleet: SimFleet, tmp_path, capsys):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        yaml.safe_dump(
            {
                "state_dir": str(sim_fleet.config.state_dir),
                "hosts": [{"name": "ibmi1", "port": sim_fleet.ports["ibmi1"], "queue_managers": [{"name": "TEST"}]}],
            }
        )
    )
    assert main(["collect", "--fleet", str(fleet), "--out", str(tmp_path / "out"), "--run-id", "cli"]) == 0
    (snapshot,) = read_snapshots(tmp_path / "out" / "run_id=cli" / "snapshots.jsonl")
    assert snapshot.qmgr == "TEST" and snapshot.run_id == "cli"
    assert "ibmi1" in capsys.readouterr().out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sim_serves_a_fleet_file_over_ssh_until_interrupted(tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        yaml.safe_dump(
            {"state_dir": "state", "hosts": [{"name": "lab", "port": free_port(), "queue_managers": [{"name": "LAB"}]}]}
        )
    )
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "mqjournal.cli", "sim", "--fleet", str(fleet), "--frozen-clock"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        lines = []
        for line in server.stdout:
            lines.append(line)
            if line.startswith("state:"):
                break
        port = int(next(l for l in lines if l.startswith("lab:")).split("-p ")[1].split()[0])
        client = paramiko.SSHClient()
        client.load_host_keys(str(tmp_path / "state" / "known_hosts"))
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        key = paramiko.ECDSAKey.from_private_key_file(str(tmp_path / "state" / "client_key"))
        client.connect("127.0.0.1", port=port, username="MQADMIN", pkey=key, look_for_keys=False, allow_agent=False)
        _, out, _ = client.exec_command("system 'RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) MQMNAME(LAB)'")
        assert out.channel.recv_exit_status() == 0
        client.close()
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=15) == 0
    assert (tmp_path / "state" / "lab.json").exists()


def lone_fleet(tmp_path: Path, port: int | None = None) -> Path:
    """A fleet file of one host `lab` (queue manager LAB, library QMLAB) on a port nothing listens on."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({
        "state_dir": "state",
        "hosts": [{"name": "lab", "port": port or free_port(), "queue_managers": [{"name": "LAB"}]}],
    }))
    return fleet


@pytest.mark.parametrize("library, why", [
    ("QMLAB", "queue manager's own library"),
    ("qtemp", "temporary library"),
    ("QSYS2", "IBM-supplied"),
])
def test_save_library_refuses_a_library_the_saves_could_be_lost_with(tmp_path, capsys, library, why):
    code = main(["save-library", "--fleet", str(lone_fleet(tmp_path)), "--host", "lab", "--qmgr", "LAB",
                 "--catalog", f"sqlite:///{tmp_path / 'c.db'}", "--audit", str(tmp_path / "audit.jsonl"),
                 "--save-library", library])
    err = capsys.readouterr().err
    assert code == 2
    assert library.upper() in err and why in err and "QGPL" in err
    assert not (tmp_path / "audit.jsonl").exists()  # nothing was sent
