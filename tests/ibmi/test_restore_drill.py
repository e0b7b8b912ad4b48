"""The restore drill against the simulated partition over SSH (issue #28): a stored copy uploaded into a scratch save
file, its object list read back and compared with the catalog, the scratch file deleted whatever happened, and the
outcome in the catalog (a claimed copy that passes is proven: `restore_drill`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from mqjournal.backupstore import rebuild_catalog
from mqjournal.catalog import Catalog
from mqjournal.drill import run as drill_run
from mqjournal.drill.sampling import Rule
from mqjournal.ibmi.audit import read_events
from mqjournal.policy import Policy
from mqjournal.sim.protocol import ExecResult
from mqjournal.sim.server import CommandRule
from tests.conftest import SimFleet
from tests.ibmi.executing import planned, receivers_on_host


def _saved(executor):
    """TEST's receivers saved into one save file and copied into the store: (to_delete, save file, key)."""
    to_save, to_delete = planned(executor)
    saved = executor.save(to_save, save_library="QGPL")
    (save_file,), (key,) = saved.save_files, saved.copied
    return to_save, to_delete, save_file, key


def _drill(executor, keys, run_id="drill1"):
    return drill_run.drill_keys(
        executor.catalog,
        executor.store,
        keys,
        run_id=run_id,
        library="QGPL",
        session_for=lambda host: contextlib.nullcontext(executor.session),
    )


def _save_files(sim_fleet: SimFleet) -> dict[str, str]:
    """Every save file on the partition with a digest of what it holds."""
    with sim_fleet.host().lock:
        return {
            key: hashlib.sha256(s.model_dump_json(exclude={"created_at"}).encode()).hexdigest()
            for key, s in sim_fleet.host().partition.save_files.items()
        }


def _scratch_files(sim_fleet: SimFleet) -> list[str]:
    return [k for k in _save_files(sim_fleet) if k.split("/")[1].startswith("DRL")]


def _commands(executor) -> list[tuple[str, str]]:
    """(event, command) of every audit record, intents and outcomes."""
    path = executor.session.audit.path
    return [(e.get("event", "outcome"), e["command"]) for e in read_events(path)]


def _store_file(executor, key: str) -> Path:
    return Path(executor.store.root) / key


def _rebuilt(executor, tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'rebuilt.db'}")
    rebuild_catalog(executor.store, catalog)
    return replace(executor, catalog=catalog)


def _edit_sidecar(executor, key: str, change) -> None:
    path = Path(f"{_store_file(executor, key)}.json")
    path.write_text(json.dumps(change(json.loads(path.read_text()))))


def test_a_good_copy_passes_is_recorded_and_its_scratch_save_file_is_deleted(sim_fleet, executor):
    _, _, _, key = _saved(executor)
    before = _save_files(sim_fleet)

    (result,) = _drill(executor, [key])

    assert result.outcome == "passed", result.line()
    assert result.scratch == "QGPL/DRL0000001" and result.scratch_left is None
    assert _save_files(sim_fleet) == before  # the user's save files untouched, the scratch one gone
    (drill,) = executor.catalog.drills()
    assert (drill.key, drill.outcome, drill.run_id, drill.scratch) == (key, "passed", "drill1", "QGPL/DRL0000001")
    (copy,) = executor.catalog.stored_copies(executor.store.url)
    assert copy.proof == "copied" and copy.proves  # a copy proven already keeps its proof
    sent = _commands(executor)
    for command in ("CRTSAVF FILE(QGPL/DRL0000001)", "DLTF FILE(QGPL/DRL0000001)", "PUT /QSYS.LIB/QGPL.LIB/DRL0000001"):
        events = [event for event, text in sent if command in text]
        assert events == ["intent", "outcome"], (command, sent)
    assert any("SAVE_FILE_OBJECTS" in text and "DRL0000001" in text for _, text in sent)


def test_a_copy_corrupted_in_the_store_fails_by_name_records_no_proof_and_its_scratch_file_goes(sim_fleet, executor):
    _, to_delete, _, key = _saved(executor)
    path = _store_file(executor, key)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    before = _save_files(sim_fleet)

    (result,) = _drill(executor, [key])

    assert result.outcome == "failed" and key in result.line() and "nothing is restored from it" in result.line()
    assert _scratch_files(sim_fleet) == [] and _save_files(sim_fleet) == before and result.scratch_left is None
    (copy,) = executor.catalog.stored_copies(executor.store.url)
    assert not copy.proves and copy.problem is not None and copy.problem.startswith("restore drill drill1")
    # The save file on the host still proves the receivers' save; the copy no longer counts off the partition.
    assert executor.catalog.off_partition_copies("ibmi1", "QMTEST", to_delete[0]) == []
    assert [d.outcome for d in executor.catalog.drills()] == ["failed"]


def test_bytes_ibm_i_refuses_as_a_save_file_fail_the_drill_and_its_scratch_file_is_deleted(
    sim_fleet, executor, tmp_path
):
    _, _, save_file, key = _saved(executor)
    junk = b"\0" * 528 * 4
    _store_file(executor, key).write_bytes(junk)
    _edit_sidecar(executor, key, lambda s: s | {"size_bytes": len(junk), "sha256": hashlib.sha256(junk).hexdigest()})
    rebuilt = _rebuilt(executor, tmp_path)  # a claim whose sidecar is right about its (junk) bytes
    assert sim_fleet.connect().cl(f"DLTF FILE({save_file})")[0] == 0

    (result,) = _drill(rebuilt, [key])

    assert result.outcome == "failed" and "refused the copy's bytes as a save file" in (result.problem or "")
    assert _scratch_files(sim_fleet) == [] and result.scratch_left is None
    assert any(text.startswith("system 'DLTF FILE(QGPL/DRL") for _, text in _commands(executor))
    (copy,) = rebuilt.catalog.stored_copies(executor.store.url)
    assert copy.proof == "claimed_by_sidecar" and not copy.proves


def test_a_copy_that_does_not_hold_what_the_catalog_says_fails_naming_the_receiver(sim_fleet, executor, tmp_path):
    _, _, _, key = _saved(executor)
    # The sidecar, a claim, names a receiver the save file never held; its bytes are the true save file's.
    _edit_sidecar(
        executor, key, lambda s: s | {"objects": [*s["objects"], {"receiver": "AMQA999999", "library": "QMTEST"}]}
    )
    rebuilt = _rebuilt(executor, tmp_path)

    (result,) = _drill(rebuilt, [key])

    assert result.outcome == "failed" and "does not list QMTEST/AMQA999999" in (result.problem or "")
    assert _scratch_files(sim_fleet) == []
    (copy,) = rebuilt.catalog.stored_copies(executor.store.url)
    assert copy.proof == "claimed_by_sidecar" and not copy.proves


def test_a_rebuilt_catalogs_claimed_copy_is_proven_by_a_drill_once_its_host_save_file_is_gone(
    sim_fleet, executor, tmp_path
):
    _, to_delete, save_file, key = _saved(executor)
    assert sim_fleet.connect().cl(f"DLTF FILE({save_file})")[0] == 0  # nothing on the host to match it with
    rebuilt = _rebuilt(executor, tmp_path)
    assert rebuilt.delete(to_delete, policy=Policy()).deleted == []  # a claim proves nothing

    (result,) = _drill(rebuilt, [key])

    assert result.outcome == "passed", result.line()
    (copy,) = rebuilt.catalog.stored_copies(executor.store.url)
    assert copy.proof == "restore_drill" and copy.proves and copy.checked_at is not None
    assert rebuilt.delete(to_delete, policy=Policy()).deleted == to_delete
    assert not set(to_delete) & set(receivers_on_host(sim_fleet))


def test_a_taken_scratch_name_is_passed_over_and_never_deleted(sim_fleet, executor):
    _, _, _, key = _saved(executor)
    shell = sim_fleet.connect()
    assert shell.cl("CRTSAVF FILE(QGPL/DRL0000001) TEXT('the site s own')")[0] == 0

    (result,) = _drill(executor, [key])

    assert result.outcome == "passed" and result.scratch == "QGPL/DRL0000002"
    assert _scratch_files(sim_fleet) == ["QGPL/DRL0000001"]  # the site's file stays, the drill's is gone
    assert not any("DLTF FILE(QGPL/DRL0000001)" in text for _, text in _commands(executor))


def test_a_scratch_file_that_cannot_be_deleted_is_named_with_what_to_do(sim_fleet, executor):
    _, _, _, key = _saved(executor)
    refusal = ExecResult(255, "", "CPF3202: File DRL0000001 in library QGPL in use.\n")
    sim_fleet.service.faults["ibmi1"].rules.append(CommandRule("DLTF FILE\\(QGPL/DRL", "answer", reply=refusal))

    (result,) = _drill(executor, [key])

    assert result.outcome == "passed"
    assert result.scratch_left is not None and "DLTF FILE(QGPL/DRL0000001) failed (CPF3202" in result.scratch_left
    assert "DLTF FILE(QGPL/DRL0000001) on ibmi1" in result.scratch_left
    (drill,) = executor.catalog.drills()
    assert "DRL0000001" in (drill.problem or "")


def test_the_sample_prefers_a_claimed_copy_and_a_drill_run_does_not_repeat_it(sim_fleet, executor, tmp_path):
    _, _, _, key = _saved(executor)
    rebuilt = _rebuilt(executor, tmp_path)
    rule = Rule(copies_per_run=1, every=timedelta(days=90))

    first = drill_run.sample(rebuilt.catalog, executor.store.url, rule)
    assert [c.key for c in first.chosen] == [key] and not first.chosen[0].proven

    _drill(rebuilt, [key])
    # Proven now and drilled just now: not due again for 90 days.
    assert drill_run.sample(rebuilt.catalog, executor.store.url, rule).chosen == ()


# --- `mqjournal store drill`: the same drill from the command line --------------------------------------------------


def _drill_cli(sim_fleet: SimFleet, executor, tmp_path: Path, monkeypatch, hosts: list[dict] | None = None) -> list:
    """The command's arguments for the executor's catalog and store, with a fleet file naming the simulated host (or
    `hosts`)."""
    import yaml

    monkeypatch.setenv("MQJOURNAL_BACKUP_STORE", str(executor.store.root))
    fleet = tmp_path / "drill-fleet.yaml"
    named = hosts or [{"name": "ibmi1", "port": sim_fleet.ports["ibmi1"], "queue_managers": [{"name": "TEST"}]}]
    fleet.write_text(yaml.safe_dump({"state_dir": str(sim_fleet.config.state_dir), "hosts": named}))
    return [
        "store",
        "drill",
        "--fleet",
        str(fleet),
        "--catalog",
        executor.catalog.url,
        "--audit",
        str(tmp_path / "cli.jsonl"),
    ]


def test_store_drill_prints_the_sample_then_drills_it_and_records_the_outcome(
    sim_fleet, executor, tmp_path, monkeypatch, capsys
):
    from mqjournal.cli import main

    _, _, _, key = _saved(executor)
    args = _drill_cli(sim_fleet, executor, tmp_path, monkeypatch)
    audit = tmp_path / "cli.jsonl"

    # Without --execute: the sample, and nothing sent to the partition.
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"`{key}`" in out and "1 copy to drill" in out and "add --execute --yes" in out
    assert not audit.exists() and executor.catalog.drills() == []
    assert main([*args, "--execute"]) == 2
    assert "confirm it with --yes" in capsys.readouterr().err

    assert main([*args, "--execute", "--yes", "--run-id", "drillcli"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 copy drilled, 1 passed") and f"PASSED: {key}" in out
    (drilled,) = executor.catalog.drills()
    assert (drilled.key, drilled.run_id, drilled.outcome) == (key, "drillcli", "passed")
    # The scratch save file was created, listed and deleted, each command audited before it was sent; none is left.
    sent = [(e.get("event", "outcome"), e["command"]) for e in read_events(audit)]
    scratch = drilled.scratch.split("/")[1]
    assert ("intent", next(c for _, c in sent if "CRTSAVF" in c and scratch in c)) in sent
    assert any("DLTF" in c and scratch in c for _, c in sent)
    assert _scratch_files(sim_fleet) == []
    # Drilled now: nothing else is due.
    assert main(args) == 0
    assert "no stored copy is due for a restore drill" in capsys.readouterr().out


def test_store_drill_of_a_host_the_fleet_file_does_not_name_is_not_made_and_exits_3(
    sim_fleet, executor, tmp_path, monkeypatch, capsys
):
    from mqjournal.cli import main

    _saved(executor)
    args = _drill_cli(sim_fleet, executor, tmp_path, monkeypatch, hosts=[{"name": "ibmi9", "port": 1}])
    assert main([*args, "--execute", "--yes"]) == 3
    out = capsys.readouterr().out
    assert "ERROR:" in out and "no session to ibmi1" in out and "does not name it" in out
    (drilled,) = executor.catalog.drills()
    assert drilled.outcome == "error" and drilled.scratch is None
    assert _scratch_files(sim_fleet) == []


def test_store_drill_refuses_a_catalog_that_does_not_exist(sim_fleet, executor, tmp_path, monkeypatch, capsys):
    from mqjournal.cli import main

    _saved(executor)
    args = _drill_cli(sim_fleet, executor, tmp_path, monkeypatch)
    args[args.index("--catalog") + 1] = str(tmp_path / "typo.db")
    assert main(args) == 2
    assert "typo.db" in capsys.readouterr().err and not (tmp_path / "typo.db").exists()
