"""`mqjournal recover` and `mqjournal save-library` as an admin runs them against a simulated partition."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from mqjournal.cli import main
from mqjournal.ibmi.audit import read_audit
from mqjournal.ibmi.commands import save_file_path
from mqjournal.recovery.plan import RecoveryPlan
from mqjournal.timefmt import local_time
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
    plan = RecoveryPlan.model_validate_json(capsys.readouterr().out)
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


# --- a mistyped queue manager, a missing catalog, where the audit goes -------------------------------------------


def fleet_without_queue_managers(sim_fleet: SimFleet, tmp_path: Path) -> Path:
    """The host alone: its queue managers come from its mqs.ini, as discovery finds them."""
    fleet = tmp_path / "bare-fleet.yaml"
    fleet.write_text(
        yaml.safe_dump(
            {
                "state_dir": str(sim_fleet.config.state_dir),
                "hosts": [{"name": "ibmi1", "port": sim_fleet.ports["ibmi1"]}],
            }
        )
    )
    return fleet


def with_option(base: list[str], option: str, value: str) -> list[str]:
    at = base.index(option)
    return [*base[: at + 1], value, *base[at + 2 :]]


@pytest.mark.parametrize("kind", ["startup", "media", "library", "naming", "expiry"])
@pytest.mark.parametrize("listed", [True, False], ids=["in-the-fleet-file", "found-in-mqs-ini"])
def test_a_mistyped_queue_manager_is_refused_naming_the_hosts_queue_managers(cli, capsys, tmp_path, kind, listed):
    rig, base, audit = cli
    if not listed:
        base = with_option(base, "--fleet", str(fleet_without_queue_managers(rig.fleet, tmp_path)))
    before = len(read_audit(audit)) if audit.exists() else 0
    assert main(["recover", "--plan-only", *with_option(base, "--qmgr", "TSET"), "--kind", kind]) == 2
    captured = capsys.readouterr()
    assert "UnknownQueueManager(TSET on ibmi1)" in captured.err
    # A host the fleet file lists queue managers for is answered from the file; one left to discovery, from its own.
    known = "the fleet file's queue managers for ibmi1 are" if listed else "the queue managers known for ibmi1 are"
    assert f"{known} TEST" in captured.err, captured.err
    # Never a plan, and never the advice a lost library would get.
    assert captured.out == "" and "library recovery" not in captured.err
    sent = [r["command"] for r in read_audit(audit)[before:]] if audit.exists() else []
    assert not [c for c in sent if c.startswith("system ")]


def test_save_library_refuses_a_mistyped_queue_manager_before_sending_anything(cli, capsys):
    rig, base, audit = cli
    assert main(["save-library", *with_option(base, "--qmgr", "TSET"), "--save-library", "QGPL"]) == 2
    assert "UnknownQueueManager(TSET on ibmi1)" in capsys.readouterr().err
    assert not [r for r in read_audit(audit) if r["command"].startswith("system ")] if audit.exists() else True
    assert rig.partition.queue_manager("TEST").running and not rig.partition.save_files


@pytest.mark.parametrize(
    "command", [["recover", "--plan-only", "--kind", "naming"], ["save-library", "--save-library", "QGPL"]]
)
def test_a_queue_manager_typed_in_lower_case_is_the_one_the_fleet_file_lists(cli, capsys, command):
    _, base, audit = cli
    assert main([command[0], *with_option(base, "--qmgr", "test"), *command[1:]]) == 0
    captured = capsys.readouterr()
    assert "--qmgr test: using TEST" in captured.err and "(library QMTEST)" in captured.err
    assert "of TEST (QMTEST) on ibmi1" in captured.out or "ibmi1 TEST library QMTEST saved" in captured.out
    # Every command sent names TEST as the fleet file spells it: MQ's names are case sensitive.
    sent = [r["command"] for r in read_audit(audit)]
    assert sent and not [c for c in sent if "'test'" in c or "(test)" in c]


def test_a_queue_manager_the_fleet_file_does_not_list_is_planned_when_the_host_has_it(cli, capsys, tmp_path):
    rig, base, _ = cli
    base = with_option(base, "--fleet", str(fleet_without_queue_managers(rig.fleet, tmp_path)))
    assert main(["recover", "--plan-only", *base, "--kind", "naming"]) == 0
    assert "recovery of TEST (QMTEST) on ibmi1" in capsys.readouterr().out


def test_a_queue_manager_whose_library_is_lost_is_still_planned_as_a_library_recovery(cli, capsys, tmp_path):
    rig, base, _ = cli
    assert rig.cl("DLTLIB LIB(QMTEST)")[0] == 0
    base = with_option(base, "--fleet", str(fleet_without_queue_managers(rig.fleet, tmp_path)))
    assert main(["recover", "--plan-only", *base, "--kind", "library"]) == 3  # no library save recorded: a gap
    out = capsys.readouterr().out
    assert "library recovery of TEST (QMTEST) on ibmi1" in out and "GAP library QMTEST" in out


@pytest.mark.parametrize("given", ["sqlite:///{}", "{}"], ids=["sqlite-url", "path"])
@pytest.mark.parametrize(
    "command", [["recover", "--plan-only", "--kind", "naming"], ["save-library", "--save-library", "QGPL"]]
)
def test_a_catalog_that_does_not_exist_is_refused_and_not_created(cli, capsys, tmp_path, given, command):
    _, base, audit = cli
    missing = tmp_path / "typo" / "catalgo.db"
    (tmp_path / "typo").mkdir()
    assert main([command[0], *with_option(base, "--catalog", given.format(missing)), *command[1:]]) == 2
    err = capsys.readouterr().err
    assert f"CatalogMissing(catalog {missing})" in err and "does not exist" in err and "Traceback" not in err
    assert not missing.exists()
    assert not audit.exists()  # refused before the host was reached


def test_a_catalog_given_as_a_path_is_read(cli, capsys, tmp_path):
    _, base, _ = cli
    assert (
        main(
            [
                "recover",
                "--plan-only",
                *with_option(base, "--catalog", str(tmp_path / "catalog.db")),
                "--kind",
                "naming",
            ]
        )
        == 0
    )


def without_audit(base: list[str]) -> list[str]:
    at = base.index("--audit")
    return base[:at] + base[at + 2 :]


@pytest.mark.parametrize(
    "command",
    [
        ["recover", "--plan-only", "--kind", "naming"],
        ["save-library", "--save-library", "QGPL", "--run-id", "cli3"],
    ],
)
def test_the_audit_log_goes_to_the_data_folder_not_the_current_one(cli, capsys, tmp_path, monkeypatch, command):
    _, base, _ = cli
    data, elsewhere = tmp_path / "data", tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("MQJOURNAL_DATA_DIR", str(data))
    monkeypatch.chdir(elsewhere)
    assert main([command[0], *without_audit(base), *command[1:]]) == 0
    assert read_audit(data / "audit.jsonl") and list(elsewhere.iterdir()) == []


def test_save_library_says_when_in_the_partitions_local_time_with_its_offset(cli, capsys):
    rig, base, _ = cli
    assert main(["save-library", *base, "--save-library", "QGPL", "--run-id", "cli4"]) == 0
    out = capsys.readouterr().out
    (record,) = rig.catalog.library_saves("ibmi1", "QMTEST")
    assert f" at {local_time(record.saved_at, 60)};" in out and "+01:00;" in out  # ibmi1 is at UTC+1


def test_execute_logs_each_cl_command_and_what_ibm_i_answered(cli, capsys, caplog):
    rig, base, _ = cli
    broken_startup(rig)
    assert main(["recover", "--execute", "--yes", *base, "--kind", "startup"]) == 0
    logged = [r.getMessage() for r in caplog.records if r.name == "mqjournal.ibmi.transport"]
    assert "ibmi1: STRMQM MQMNAME('TEST')" in logged
    assert any(line.startswith("ibmi1:   CPC") for line in logged)


def test_a_library_saved_before_any_receiver_was_detached_passes_its_restore_drill(cli, capsys):
    """The catalog names no receiver in such a copy (only the attached one is in it), nor in the library save's IFS
    part (SAV of the queue manager's directory): the drill must not mark either part of the library's backup as
    proving nothing."""
    rig, base, _ = cli
    assert main(["save-library", *base, "--save-library", "QGPL", "--run-id", "lib1"]) == 0
    (record,) = rig.catalog.library_saves("ibmi1", "QMTEST")
    stored = {s.save_file_path: s for s in rig.catalog.stored_objects("ibmi1", "TEST")}
    library, directory = stored[record.save_file_path], stored[record.directory_save_file_path]
    assert library.objects == () and directory.objects == ()
    given = dict(zip(base[::2], base[1::2], strict=True))
    drill = ["store", "drill", *(x for k in ("--fleet", "--catalog", "--audit") for x in (k, given[k]))]
    capsys.readouterr()
    assert main([*drill, "--execute", "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"PASSED: {library.key}" in out and "IBM i took it as a save file (QMTEST/AMQA000000)" in out
    assert f"PASSED: {directory.key}" in out and "IBM i took it as a save file (no receiver)" in out
    assert sorted(d.outcome for d in rig.catalog.drills()) == ["passed", "passed"]
    after = rig.catalog.stored_copies(rig.store.url)
    assert len(after) == 2 and all(c.problem is None and c.proves for c in after)
