"""`mqjournal recover` and `mqjournal save-library` as an admin runs them against a simulated partition."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from mqjournal.cli import main
from mqjournal.ibmi.audit import read_audit
from mqjournal.ibmi.transfer import save_file_path
from mqjournal.recovery.plan import Plan
from tests.conftest import SimFleet
from tests.recovery.test_recovery_on_simulator import broken_startup, make_rig


@pytest.fixture
def cli(sim_fleet: SimFleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The commands open the settings' backup store: the rig's, never one under the user's home.
    monkeypatch.setenv("MQJOURNAL_BACKUP_STORE", str(tmp_path / "backups"))
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        yaml.safe_dump(
            {
                "state_dir": str(sim_fleet.config.state_dir),
                "hosts": [{"name": "ibmi1", "port": sim_fleet.ports["ibmi1"], "queue_managers": [{"name": "TEST"}]}],
            }
        )
    )
    rig = make_rig(sim_fleet, tmp_path)
    base = [
        "--fleet",
        str(fleet),
        "--host",
        "ibmi1",
        "--qmgr",
        "TEST",
        "--catalog",
        f"sqlite:///{tmp_path / 'catalog.db'}",
        "--audit",
        str(tmp_path / "cli-audit.jsonl"),
    ]
    yield rig, base, tmp_path / "cli-audit.jsonl"
    rig.session.close()


def test_plan_only_prints_the_plan_and_changes_nothing(cli, capsys):
    rig, base, audit = cli
    victims = broken_startup(rig)
    assert main(["recover", "--plan-only", *base, "--kind", "startup"]) == 0
    out = capsys.readouterr().out
    assert f"RSTOBJ OBJ({victims[1]})" in out and "STRMQM MQMNAME('TEST')" in out
    assert not [r for r in read_audit(audit) if r["command"].startswith("system ")]

    assert main(["recover", "--plan-only", *base, "--kind", "startup", "--json"]) == 0
    plan = Plan.model_validate_json(capsys.readouterr().out)
    assert plan.restored_receivers == victims[::-1]


def test_a_plan_with_gaps_exits_3(cli, capsys):
    rig, base, _ = cli
    broken_startup(rig)
    # The AMQ7432 time given is older than anything saved.
    assert main(["recover", "--plan-only", *base, "--kind", "startup", "--timestamp", "2026-11-01T08:00:00"]) == 3
    assert "GAP" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--host", "nowhere"], "host 'nowhere' is not in the fleet file"),
        (["--timestamp", "yesterday"], "--timestamp 'yesterday' is not an ISO 8601"),
        (["--object-type", "*QUEUE"], "is not an RCRMQMOBJ object type"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(cli, capsys, extra, message):
    _, base, _ = cli
    assert main(["recover", "--plan-only", *base, "--kind", "media", *extra]) == 2
    assert message in capsys.readouterr().err


def test_execute_needs_yes(cli, capsys):
    _, base, _ = cli
    assert main(["recover", "--execute", *base, "--kind", "startup"]) == 2
    assert "add --yes" in capsys.readouterr().err


def test_execute_yes_runs_the_recovery(cli, capsys):
    rig, base, _ = cli
    broken_startup(rig)
    assert main(["recover", "--execute", "--yes", *base, "--kind", "startup", "--json"]) == 0
    out = capsys.readouterr().out
    result = json.loads(out[out.index("\n}\n") + 3 :])  # the plan, then the result
    assert result["done"][-1]["command"] == "STRMQM MQMNAME('TEST')"
    assert rig.partition.queue_manager("TEST").running


def test_save_library_records_the_save(cli, capsys):
    rig, base, _ = cli
    assert main(["save-library", *base, "--save-library", "QGPL", "--run-id", "cli1"]) == 0
    out = capsys.readouterr().out
    (record,) = rig.catalog.library_saves("ibmi1", "QMTEST")
    assert f"library QMTEST saved in QGPL/{record.save_file}" in out
    assert record.run_id == "cli1" and rig.partition.queue_manager("TEST").running
    # The save file is copied into the settings' backup store, verified and recorded.
    (stored,) = [s for s in rig.catalog.stored_objects("ibmi1", "TEST") if s.save_file_path == record.save_file_path]
    check = rig.store.verify(stored.key)
    assert check.ok and check.sha256 == stored.sha256 and stored.store_url == rig.store.url
    assert f"copied into the backup store {rig.store.url} as {stored.key}" in out
    # The copy holds the host's save file byte for byte.
    with rig.session.sftp() as sftp, sftp.open(save_file_path(record.save_file_library, record.save_file)) as f:
        on_host = f.read()
    assert len(on_host) == stored.size_bytes and hashlib.sha256(on_host).hexdigest() == stored.sha256


def test_save_library_says_when_the_save_was_not_copied_and_exits_3(cli, capsys, monkeypatch, tmp_path):
    rig, base, _ = cli
    # A store that cannot be written: a folder under a file.
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("MQJOURNAL_BACKUP_STORE", str(tmp_path / "not-a-folder" / "backups"))
    assert main(["save-library", *base, "--save-library", "QGPL", "--run-id", "cli2"]) == 3
    captured = capsys.readouterr()
    (record,) = rig.catalog.library_saves("ibmi1", "QMTEST")
    assert f"library QMTEST saved in {record.save_file_path}" in captured.out
    assert "NOT COPIED" in captured.err and "NOT backed up off the partition" in captured.err
    assert record.save_file_path in captured.err
    assert rig.catalog.stored_objects("ibmi1", "TEST") == []
    # The save itself stands: recorded, on the host, and the queue manager runs again.
    assert record.save_file_path in rig.partition.save_files and rig.partition.queue_manager("TEST").running
