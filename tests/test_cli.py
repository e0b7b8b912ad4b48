"""The `mqjournal` command line as an admin uses it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import paramiko
import pytest
import yaml

from mqjournal.catalog import Catalog
from mqjournal.cli import main
from mqjournal.ibmi.audit import read_audit
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


def one_host_fleet(sim_fleet: SimFleet, tmp_path: Path) -> Path:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        yaml.safe_dump(
            {
                "state_dir": str(sim_fleet.config.state_dir),
                "hosts": [{"name": "ibmi1", "port": sim_fleet.ports["ibmi1"], "queue_managers": [{"name": "TEST"}]}],
            }
        )
    )
    return fleet


def test_collect_writes_snapshots_for_every_queue_manager_of_the_fleet_file(
    sim_fleet: SimFleet, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("MQJOURNAL_DATA_DIR", str(tmp_path / "data"))
    fleet = one_host_fleet(sim_fleet, tmp_path)
    assert main(["collect", "--fleet", str(fleet), "--out", str(tmp_path / "out"), "--run-id", "cli"]) == 0
    (snapshot,) = read_snapshots(tmp_path / "out" / "run_id=cli" / "snapshots.jsonl")
    assert snapshot.qmgr == "TEST" and snapshot.run_id == "cli"
    assert "ibmi1" in capsys.readouterr().out


def test_collect_appends_to_the_data_folders_audit_log_not_its_output_folder(
    sim_fleet: SimFleet, tmp_path, capsys, monkeypatch
):
    """One audit log per data folder: an auditor finds collect's commands beside every other command's."""
    monkeypatch.setenv("MQJOURNAL_DATA_DIR", str(tmp_path / "data"))
    fleet, out, audit = one_host_fleet(sim_fleet, tmp_path), tmp_path / "out", tmp_path / "data" / "audit.jsonl"
    main(["doctor", "--fleet", str(fleet)])
    by_doctor = len(read_audit(audit))
    assert main(["collect", "--fleet", str(fleet), "--out", str(out), "--run-id", "cli"]) == 0
    capsys.readouterr()
    by_collect = [r["command"] for r in read_audit(audit)[by_doctor:]]
    assert by_doctor and any("RCDMQMIMG" in c for c in by_collect)
    assert not (out / "audit.jsonl").exists()
    elsewhere = tmp_path / "elsewhere.jsonl"
    argv = ["collect", "--fleet", str(fleet), "--out", str(out), "--run-id", "again", "--audit", str(elsewhere)]
    assert main(argv) == 0
    assert read_audit(elsewhere) and not (out / "audit.jsonl").exists()


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
        port = int(next(text for text in lines if text.startswith("lab:")).split("-p ")[1].split()[0])
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


def catalog_url(tmp_path: Path) -> str:
    """An existing (empty) catalog: the commands refuse to create one."""
    url = f"sqlite:///{tmp_path / 'c.db'}"
    Catalog(url)
    return url


def lone_fleet(tmp_path: Path, port: int | None = None) -> Path:
    """A fleet file of one host `lab` (queue manager LAB, library QMLAB) on a port nothing listens on."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        yaml.safe_dump(
            {
                "state_dir": "state",
                "hosts": [{"name": "lab", "port": port or free_port(), "queue_managers": [{"name": "LAB"}]}],
            }
        )
    )
    return fleet


@pytest.mark.parametrize(
    "library, why",
    [
        ("QMLAB", "queue manager's own library"),
        ("qtemp", "temporary library"),
        ("QSYS2", "IBM-supplied"),
    ],
)
def test_save_library_refuses_a_library_the_saves_could_be_lost_with(tmp_path, capsys, library, why):
    code = main(
        [
            "save-library",
            "--fleet",
            str(lone_fleet(tmp_path)),
            "--host",
            "lab",
            "--qmgr",
            "LAB",
            "--catalog",
            catalog_url(tmp_path),
            "--audit",
            str(tmp_path / "audit.jsonl"),
            "--save-library",
            library,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert library.upper() in err and why in err and "QGPL" in err
    assert not (tmp_path / "audit.jsonl").exists()  # nothing was sent


# --- user errors: a message that names the object and what to do, never a traceback ---------------------------


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as refused:  # argparse: a missing option or a value its type refuses
        code = int(refused.code or 0)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "Traceback" not in captured.out
    return code, captured.err


def test_a_missing_fleet_file_is_named(tmp_path, capsys):
    missing = tmp_path / "nowhere.yaml"
    code, err = run_cli(capsys, "collect", "--fleet", missing, "--out", tmp_path / "out")
    assert code == 2 and str(missing) in err and "No such file" in err


@pytest.mark.parametrize(
    "text, names",
    [
        ("hosts:\n  - name: prod-1\n  - name: prod.1\n", ["prod-1", "prod.1", "hosts"]),
        ("hosts:\n  - name: 'ibmi1; rm -rf /'\n", ["hosts.0.name", "is not a host name"]),
        ("hosts: [\n", ["YAML"]),
        ("", ["Input should be a valid dictionary"]),
    ],
)
def test_an_invalid_fleet_file_is_named_with_what_is_wrong(tmp_path, capsys, text, names):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(text)
    for command in (["collect", "--out", tmp_path / "out"], ["sim"]):
        code, err = run_cli(capsys, command[0], "--fleet", fleet, *command[1:])
        assert code == 2 and str(fleet) in err, err
        assert all(name in err for name in names), err


def test_an_unknown_host_lists_the_fleets_hosts(tmp_path, capsys):
    code, err = run_cli(
        capsys, "collect", "--fleet", lone_fleet(tmp_path), "--out", tmp_path / "out", "--hosts", "nope"
    )
    assert code == 2 and "nope" in err and "its hosts are lab" in err


@pytest.mark.parametrize(
    "policy, names",
    [
        ("retention_days: .inf\n", ["retention_days", "finite"]),
        ("retention_days: 1e308\n", ["retention_days", "3660"]),
        ("retention_days: [\n", ["YAML"]),
        (None, ["No such file"]),
    ],
)
def test_a_bad_policy_file_is_named_before_any_spark_job(tmp_path, capsys, monkeypatch, policy, names):
    from mqjournal import planjob

    monkeypatch.setattr(planjob.subprocess, "run", lambda *a, **k: pytest.fail("spark-submit was started"))
    snapshots = tmp_path / "snapshots.jsonl"
    snapshots.write_text("")
    path = tmp_path / "policy.yaml"
    if policy is not None:
        path.write_text(policy)
    code, err = run_cli(capsys, "plan", "--snapshots", snapshots, "--policy", path, "--out", tmp_path / "plan")
    assert code == 2 and str(path) in err, err
    assert all(name in err for name in names), err


def test_snapshots_that_do_not_exist_are_named_before_any_spark_job(tmp_path, capsys, monkeypatch):
    from mqjournal import planjob

    monkeypatch.setattr(planjob.subprocess, "run", lambda *a, **k: pytest.fail("spark-submit was started"))
    missing = tmp_path / "no-snapshots"
    code, err = run_cli(capsys, "plan", "--snapshots", missing, "--out", tmp_path / "plan")
    assert code == 2 and str(missing) in err


def test_an_unreachable_host_is_one_message(tmp_path, capsys):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "known_hosts").write_text("")
    paramiko.ECDSAKey.generate().write_private_key_file(str(tmp_path / "state" / "client_key"))
    code, err = run_cli(
        capsys,
        "recover",
        "--plan-only",
        "--fleet",
        lone_fleet(tmp_path),
        "--host",
        "lab",
        "--qmgr",
        "LAB",
        "--kind",
        "naming",
        "--catalog",
        catalog_url(tmp_path),
        "--audit",
        tmp_path / "audit.jsonl",
    )
    assert code == 1 and "HostUnreachable(lab)" in err


def test_a_rejected_host_key_is_one_message(sim_fleet: SimFleet, tmp_path, capsys):
    fleet = tmp_path / "fleet.yaml"
    (tmp_path / "empty_known_hosts").write_text("")
    fleet.write_text(
        yaml.safe_dump(
            {
                "state_dir": str(sim_fleet.config.state_dir),
                "known_hosts": str(tmp_path / "empty_known_hosts"),
                "hosts": [{"name": "ibmi1", "port": sim_fleet.ports["ibmi1"], "queue_managers": [{"name": "TEST"}]}],
            }
        )
    )
    for command in (["recover", "--plan-only", "--kind", "naming"], ["save-library", "--save-library", "QGPL"]):
        code, err = run_cli(
            capsys,
            *command,
            "--fleet",
            fleet,
            "--host",
            "ibmi1",
            "--qmgr",
            "TEST",
            "--catalog",
            catalog_url(tmp_path),
            "--audit",
            tmp_path / "audit.jsonl",
        )
        assert code == 1 and "HostKeyRejected(ibmi1)" in err and "known_hosts" in err, err


@pytest.mark.parametrize(
    "argv, names",
    [
        (["--qmgr", "TEST'; DLTLIB QGPL"], ["--qmgr", "not a valid queue manager name"]),
        (["--qmgr", "LAB", "--save-library", "A;B"], ["A;B", "save library"]),
    ],
)
def test_invalid_names_are_refused_with_exit_2(tmp_path, capsys, argv, names):
    base = [
        "save-library",
        "--fleet",
        lone_fleet(tmp_path),
        "--host",
        "lab",
        "--catalog",
        catalog_url(tmp_path),
        "--audit",
        tmp_path / "audit.jsonl",
    ]
    if "--save-library" not in argv:
        argv = [*argv, "--save-library", "QGPL"]
    code, err = run_cli(capsys, *base, *argv)
    assert code == 2 and all(name in err for name in names), err
    assert "errors.pydantic.dev" not in err


def test_a_user_error_in_a_real_process_is_one_message_and_status_2(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mqjournal.cli",
            "collect",
            "--fleet",
            str(tmp_path / "nowhere.yaml"),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1 and "nowhere.yaml" in done.stderr


def test_an_unusable_catalog_url_is_named(tmp_path, capsys):
    code, err = run_cli(
        capsys,
        "recover",
        "--plan-only",
        "--fleet",
        lone_fleet(tmp_path),
        "--host",
        "lab",
        "--qmgr",
        "LAB",
        "--kind",
        "naming",
        "--catalog",
        "nonsense://",
        "--audit",
        tmp_path / "audit.jsonl",
    )
    assert code == 2 and "nonsense://" in err


def bad_input(tmp_path: Path) -> dict[str, list]:
    """One mistake per subcommand (and option) an admin can make, on a fleet whose host nothing answers for."""
    fleet, missing, a_file = lone_fleet(tmp_path), tmp_path / "nowhere.yaml", tmp_path / "a-file"
    a_file.write_text("")
    queue_manager = ["--fleet", fleet, "--host", "lab", "--qmgr", "LAB", "--catalog", catalog_url(tmp_path)]
    return {
        "sim-missing-fleet": ["sim", "--fleet", missing],
        "sim-state-is-a-file": ["sim", "--fleet", fleet, "--state", a_file],
        "collect-out-is-a-file": ["collect", "--fleet", fleet, "--out", a_file],
        "collect-run-id-with-a-path": ["collect", "--fleet", fleet, "--out", tmp_path / "o", "--run-id", "../x"],
        "plan-as-of-not-a-time": ["plan", "--snapshots", a_file, "--as-of", "yesterday", "--out", tmp_path / "p"],
        "plan-missing-history": ["plan", "--snapshots", a_file, "--history", missing, "--out", tmp_path / "p"],
        "demo-missing-fleet": ["demo", "--fleet", missing, "--home", tmp_path / "home"],
        "recover-unknown-kind": ["recover", "--plan-only", *queue_manager, "--kind", "everything"],
        "recover-threshold-not-a-number": [
            "recover",
            "--plan-only",
            *queue_manager,
            "--kind",
            "naming",
            "--threshold-kb",
            "lots",
        ],
        "recover-missing-catalog": [
            "recover",
            "--plan-only",
            *queue_manager[:-1],
            tmp_path / "no.db",
            "--kind",
            "naming",
        ],
        "recover-unreadable-fleet": [
            "recover",
            "--plan-only",
            "--fleet",
            a_file,
            *queue_manager[2:],
            "--kind",
            "naming",
        ],
        "save-library-bad-run-id": ["save-library", *queue_manager, "--save-library", "QGPL", "--run-id", "a/b"],
        "doctor-bad-save-library": ["doctor", "--fleet", fleet, "--save-library", "A;B"],
        "doctor-missing-policy": ["doctor", "--fleet", fleet, "--policy", missing],
        "doctor-unknown-host": ["doctor", "--fleet", fleet, "--host", "nope"],
        "catalog-rebuild-missing-store": [
            "catalog",
            "rebuild",
            "--from-store",
            missing,
            "--catalog",
            catalog_url(tmp_path),
        ],
        "catalog-rebuild-store-is-a-file": [
            "catalog",
            "rebuild",
            "--from-store",
            a_file,
            "--catalog",
            catalog_url(tmp_path),
        ],
        "catalog-rebuild-unusable-url": ["catalog", "rebuild", "--from-store", tmp_path, "--catalog", "nonsense://"],
    }


BAD_INPUT = [
    "sim-missing-fleet",
    "sim-state-is-a-file",
    "collect-out-is-a-file",
    "collect-run-id-with-a-path",
    "plan-as-of-not-a-time",
    "plan-missing-history",
    "demo-missing-fleet",
    "recover-unknown-kind",
    "recover-threshold-not-a-number",
    "recover-missing-catalog",
    "recover-unreadable-fleet",
    "save-library-bad-run-id",
    "doctor-bad-save-library",
    "doctor-missing-policy",
    "doctor-unknown-host",
    "catalog-rebuild-missing-store",
    "catalog-rebuild-store-is-a-file",
    "catalog-rebuild-unusable-url",
]
"""The cases of `bad_input`, by name."""


@pytest.mark.parametrize("case", BAD_INPUT)
def test_every_subcommand_answers_bad_input_with_one_message_and_status_2(tmp_path, capsys, monkeypatch, case):
    from mqjournal import planjob

    monkeypatch.setattr(planjob.subprocess, "run", lambda *a, **k: pytest.fail("spark-submit was started"))
    monkeypatch.setenv("MQJOURNAL_DATA_DIR", str(tmp_path / "data"))
    cases = bad_input(tmp_path)
    assert sorted(cases) == sorted(BAD_INPUT)
    try:
        code = main([str(a) for a in cases[case]])
    except SystemExit as refused:  # argparse's own refusal: usage and the option at fault
        code = int(refused.code or 0)
    captured = capsys.readouterr()
    said = captured.err + captured.out  # the demo narrates on stdout, its failure too
    assert code == 2, said
    assert "Traceback" not in said and said.strip()


def test_the_plan_summary_is_written_for_a_person(tmp_path, capsys, monkeypatch):
    from mqjournal import planjob
    from mqjournal.planrows import PlanTotals
    from mqjournal.policy import Policy
    from mqjournal.vocabulary import Action, Alert

    summary = PlanTotals(
        as_of=datetime(2026, 11, 22, 5, 0, tzinfo=UTC),
        policy=Policy(),
        queue_managers=5,
        blocked_queue_managers=1,
        receivers=120,
        actions={Action.DELETE: 60, Action.KEEP: 50, Action.SAVE: 10},
        alerts={Alert.CHECKPOINT_FAILED: 2},
        bytes_to_save=5_000_000,
        bytes_to_delete=300_000_000,
        bytes_freed=290_000_000,
    )
    monkeypatch.setattr(planjob, "run_plan", lambda *a, **k: summary)
    monkeypatch.setattr("mqjournal.planjob.run_plan", lambda *a, **k: summary)
    snapshots = tmp_path / "snapshots.jsonl"
    snapshots.write_text("")
    code = main(["plan", "--snapshots", str(snapshots), "--out", str(tmp_path / "plan")])
    out = capsys.readouterr().out
    assert code == 0
    assert "plan as of 2026-11-22 05:00:00 +00:00: 5 queue manager(s), 1 blocked; 120 receiver(s)" in out
    assert "actions: delete 60, keep 50, save 10" in out and "alerts: CHECKPOINT_FAILED 2" in out
    assert "to delete 286.1 MB" in out and "{" not in out


def test_log_lines_carry_the_same_time_format_as_everything_else(capsys):
    import logging
    import re

    from mqjournal.cli import _LocalTimeFormatter

    record = logging.LogRecord("mqjournal", logging.INFO, __file__, 1, "hello", None, None)
    line = _LocalTimeFormatter("%(asctime)s %(message)s").format(record)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d hello", line), line


def test_doctor_appends_to_the_data_folders_audit_log_not_the_current_folder(
    sim_fleet: SimFleet, tmp_path, capsys, monkeypatch
):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        yaml.safe_dump(
            {
                "state_dir": str(sim_fleet.config.state_dir),
                "hosts": [{"name": "ibmi1", "port": sim_fleet.ports["ibmi1"], "queue_managers": [{"name": "TEST"}]}],
            }
        )
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("MQJOURNAL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(elsewhere)
    main(["doctor", "--fleet", str(fleet)])
    capsys.readouterr()
    assert read_audit(tmp_path / "data" / "audit.jsonl") and list(elsewhere.iterdir()) == []


def test_save_library_downloads_by_the_route_the_doctor_recorded_in_the_hosts_scratch_directory(
    sim_fleet: SimFleet, tmp_path, capsys, monkeypatch
):
    """A host recorded `stream_file` whose sftp-server may not read QSYS.LIB: `mqjournal save-library` copies both
    save files through stream files in the fleet file's scratch_directory for the host, verified, none left behind."""
    from mqjournal.ibmi.downloadroutes import DownloadRoutes

    scratch = "/home/MQADMIN/scratch"
    fleet = tmp_path / "fleet.yaml"
    host = {"name": "ibmi1", "port": sim_fleet.ports["ibmi1"], "scratch_directory": scratch}
    fleet.write_text(yaml.safe_dump({"state_dir": str(sim_fleet.config.state_dir), "hosts": [host]}))
    monkeypatch.setenv("MQJOURNAL_DATA_DIR", str(tmp_path / "data"))
    DownloadRoutes(tmp_path / "data").record("ibmi1", "stream_file", datetime.now(UTC), "test")
    with sim_fleet.host().state() as partition:
        partition.faults.qsys_sftp_read_refused = True
    audit = tmp_path / "audit.jsonl"

    queue_manager = ["--fleet", str(fleet), "--host", "ibmi1", "--qmgr", "TEST", "--catalog", catalog_url(tmp_path)]
    code = main(["save-library", *queue_manager, "--audit", str(audit), "--save-library", "QGPL"])

    out = capsys.readouterr().out
    assert code == 0 and "copied into the backup store" in out
    sent = [r["command"] for r in read_audit(audit) if "outcome" in r]
    copies = [c for c in sent if f"mkdir -p {scratch} && cp /QSYS.LIB/QGPL.LIB/" in c]
    assert len(copies) == 2, sent  # SAVLIB's save file and its IFS part's
    assert not any(c.startswith("SFTP GET /QSYS.LIB/") for c in sent)
    with sim_fleet.host().lock:
        assert sim_fleet.host().partition.stream_files == {}


# --- a broken policy file is blamed on itself, with where and what --------------------------------------------------


@pytest.mark.parametrize("command", ["doctor", "plan"])
@pytest.mark.parametrize(
    "policy, names",
    [
        ("retention_days: 30\nkeep_min_receivers: 2: 3\n", ["YAML", "line 2, column 22", "mapping values"]),
        ("retention_days: 30\nkeep_min_receivers: -1\n", ["keep_min_receivers", "greater than or equal to 0"]),
    ],
    ids=["yaml-syntax", "invalid-value"],
)
def test_a_broken_policy_file_is_named_not_the_fleet_file(tmp_path, capsys, monkeypatch, command, policy, names):
    """The admin edits the policy and the fleet file stays as it was: the message sends them to the right file."""
    from mqjournal import planjob

    monkeypatch.setattr(planjob.subprocess, "run", lambda *a, **k: pytest.fail("spark-submit was started"))
    monkeypatch.setenv("MQJOURNAL_DATA_DIR", str(tmp_path / "data"))
    path = tmp_path / "policy.yaml"
    path.write_text(policy)
    snapshots = tmp_path / "snapshots.jsonl"
    snapshots.write_text("")
    fleet = lone_fleet(tmp_path)
    argv = {
        "doctor": ["doctor", "--fleet", fleet, "--policy", path],
        "plan": ["plan", "--snapshots", snapshots, "--policy", path, "--out", tmp_path / "plan"],
    }[command]
    code, err = run_cli(capsys, *argv)
    assert code == 2, err
    assert f"policy file {path}" in err and str(fleet) not in err, err
    assert all(name in err for name in names) and "fix" in err, err
    assert err.count("\n") == 1, err  # one line, as every other bad input is answered
    assert not (tmp_path / "data" / "audit.jsonl").exists()  # refused before any host was reached


# --- the queue manager named as an admin types it -----------------------------------------------------------------

QUEUE_MANAGER_COMMANDS = {
    "recover": ["recover", "--plan-only", "--kind", "naming"],
    "save-library": ["save-library", "--save-library", "QGPL"],
}
"""Every command that takes --qmgr, with what else it needs."""


def fleet_of(tmp_path: Path, *queue_managers: dict) -> Path:
    """A fleet file of one host `lab` with these queue managers, on a port nothing listens on."""
    fleet = tmp_path / "fleet.yaml"
    host = {"name": "lab", "port": free_port(), "queue_managers": list(queue_managers)}
    fleet.write_text(yaml.safe_dump({"state_dir": "state", "hosts": [host]}))
    return fleet


@pytest.fixture
def data_folder(tmp_path, monkeypatch) -> Path:
    """The data folder the commands default to, and no catalog URL in the environment to override it."""
    monkeypatch.setenv("MQJOURNAL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("MQJOURNAL_CATALOG_URL", raising=False)
    monkeypatch.setenv("MQJOURNAL_BACKUP_STORE", str(tmp_path / "backups"))
    return tmp_path / "data"


@pytest.mark.parametrize("command", sorted(QUEUE_MANAGER_COMMANDS))
def test_a_mistyped_queue_manager_is_answered_at_once_with_the_fleets_queue_managers(
    tmp_path, capsys, data_folder, command
):
    """No --catalog given and none in the data folder: the typo is what the admin must hear about, not the catalog."""
    fleet = fleet_of(tmp_path, {"name": "PAYROLL"}, {"name": "HR"})
    first, *rest = QUEUE_MANAGER_COMMANDS[command]
    code, err = run_cli(capsys, first, "--fleet", fleet, "--host", "lab", "--qmgr", "PAYROL", *rest)
    assert code == 2, err
    assert "PAYROL" in err and "HR, PAYROLL" in err and str(fleet) in err, err
    assert "catalog" not in err.lower(), err
    assert not (data_folder / "audit.jsonl").exists()  # nothing sent


@pytest.mark.parametrize("command", sorted(QUEUE_MANAGER_COMMANDS))
def test_a_queue_manager_typed_in_lower_case_is_the_fleets_one_of_that_name(tmp_path, capsys, data_folder, command):
    """`lab` is LAB (its library QMLAB derived), and the command says so; the catalog is then the data folder's."""
    fleet = fleet_of(tmp_path, {"name": "LAB"})
    first, *rest = QUEUE_MANAGER_COMMANDS[command]
    code, err = run_cli(capsys, first, "--fleet", fleet, "--host", "lab", "--qmgr", "lab", *rest)
    assert "--qmgr lab: using LAB" in err, err
    assert "cannot be derived" not in err and "give the catalog" not in err, err
    # The data folder has no catalog yet: the default is named, and not created.
    assert code == 2 and f"CatalogMissing(catalog {data_folder / 'catalog.db'})" in err, err


@pytest.mark.parametrize(
    "given, answer",
    [
        ("Payroll", ["Payroll", "payroll, PAYROLL", "exactly"]),  # two match but for case: which one is not guessed
        ("payroll", ["CatalogMissing"]),  # the exact name is that one, whatever others differ in case only
    ],
)
def test_a_name_two_queue_managers_share_but_for_case_is_not_guessed(tmp_path, capsys, data_folder, given, answer):
    fleet = fleet_of(tmp_path, {"name": "payroll", "library": "QMPAYLOW"}, {"name": "PAYROLL"})
    code, err = run_cli(
        capsys, "recover", "--plan-only", "--fleet", fleet, "--host", "lab", "--qmgr", given, "--kind", "naming"
    )
    assert code == 2 and all(word in err for word in answer), err
    assert "using" not in err, err


def test_the_catalog_defaults_to_the_data_folders(tmp_path, capsys, data_folder):
    """As the README shows it, --catalog is optional: the data folder's catalog, the one the DAGs write, is read."""
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "known_hosts").write_text("")
    paramiko.ECDSAKey.generate().write_private_key_file(str(tmp_path / "state" / "client_key"))
    data_folder.mkdir()
    Catalog(f"sqlite:///{data_folder / 'catalog.db'}")
    argv = ["--fleet", lone_fleet(tmp_path), "--host", "lab", "--qmgr", "LAB", "--kind", "naming"]
    code, err = run_cli(capsys, "recover", "--plan-only", *argv)
    assert code == 1 and "HostUnreachable(lab)" in err, err  # past the catalog, on to the host


# --- what opening the catalog says ------------------------------------------------------------------------------------


def test_opening_the_catalog_says_one_line_when_it_migrates_and_nothing_otherwise(tmp_path):
    """Alembic narrates its plugins and each revision at INFO: on the command line that is noise above the answer.
    A migration is worth one line (which revision the catalog went to); -v shows Alembic's own."""
    store, catalog = tmp_path / "store", f"sqlite:///{tmp_path / 'new.db'}"
    store.mkdir()

    def rebuild(*verbose: str) -> list[str]:
        argv = [*verbose, "catalog", "rebuild", "--from-store", str(store), "--catalog", catalog]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MQJOURNAL_")}
        env["MQJOURNAL_DATA_DIR"] = str(tmp_path / "data")
        done = subprocess.run(
            [sys.executable, "-m", "mqjournal.cli", *argv], capture_output=True, text=True, timeout=120, env=env
        )
        assert done.returncode == 0, done.stderr
        return done.stderr.splitlines()

    from mqjournal.migrations import head

    (migrated,) = rebuild()
    assert f"schema from none to {head()}" in migrated and "alembic" not in migrated
    assert rebuild() == []  # at the revision this code knows: nothing to say
    assert any("alembic" in line for line in rebuild("-v"))


def test_a_lower_case_name_for_a_host_left_to_discovery_is_answered_with_the_upper_case_one(
    tmp_path, capsys, data_folder
):
    """The fleet file lists no queue managers for the host: nothing to match `payroll` against before the host is
    asked, and its library cannot be derived; the admin is told the name as CL and mqs.ini write it."""
    fleet = fleet_of(tmp_path)
    code, err = run_cli(
        capsys, "recover", "--plan-only", "--fleet", fleet, "--host", "lab", "--qmgr", "payroll", "--kind", "naming"
    )
    assert code == 2 and "payroll" in err and "if you meant PAYROLL, give it so" in err, err
    assert f"the fleet file {fleet} lists no queue managers for lab" in err, err
