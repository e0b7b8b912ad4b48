"""The restore drill DAG's steps as plain functions: the DAG file only wires them; tests call them directly.

`propose` samples the stored copies due for a drill (mqjournal.drill.sampling) and writes the approval gate's body;
after approval `execute` drills them on their partitions (mqjournal.drill.run: CRTSAVF of a scratch save file, the
upload, QSYS2.SAVE_FILE_OBJECTS, DLTF) and records each outcome in the catalog; `report` writes the run's report and
its one-line outcome (the run's note) and fails the task when a drill failed, could not be made, or left a scratch
save file behind, so such a run is red in the grid.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from mqjournal.airflow.gate import gate_answer
from mqjournal.airflow.sessions import host_session
from mqjournal.airflow.settings import Settings
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.drill import run as drill_run
from mqjournal.drill.partition import DrillResult
from mqjournal.drill.sampling import Rule
from mqjournal.errors import MqJournalError

log = logging.getLogger(__name__)

DAG_ID = "mq_journal_restore_drill"


class DrillsFailed(MqJournalError):
    """A drill of this run failed, could not be made, or left its scratch save file on a partition."""


def rule(settings: Settings) -> Rule:
    d = settings.drill
    return Rule(copies_per_run=d.copies_per_run, every=d.every, max_bytes_per_run=d.max_bytes)


# --- propose ------------------------------------------------------------------------------------------------------


def propose(settings: Settings) -> dict[str, Any]:
    """The sample of this run and the gate's body, as XCom: {"keys", "body", "anything"}."""
    store = BackupStore.from_settings(settings)
    chosen = drill_run.sample(Catalog(settings.catalog_url), store.url, rule(settings))
    body = drill_run.proposal_text(chosen, store.url, settings.drill.library)
    log.info("the restore drill proposal of this run:\n%s", body)
    return {"keys": [c.key for c in chosen.chosen], "body": body, "anything": bool(chosen.chosen)}


def proposal_from_xcom(pulled: object) -> dict[str, Any]:
    """The propose task's XCom value, checked: {"keys": [...], "body": str, "anything": bool}."""
    if not isinstance(pulled, dict) or not isinstance(pulled.get("keys"), list):
        raise TypeError(f"not a restore drill proposal: {pulled!r}")
    return pulled


def next_after_proposal(proposal: dict[str, Any]) -> str | None:
    """The approval gate when there is anything to drill; otherwise nothing (the report runs whatever happened)."""
    return "approve" if proposal.get("anything") else None


# --- execute ------------------------------------------------------------------------------------------------------


def execute(settings: Settings, keys: Sequence[str], run_id: str) -> list[dict[str, Any]]:
    """Drill the approved copies; each outcome is in the catalog before the next drill starts."""
    results = drill_run.drill_keys(
        Catalog(settings.catalog_url),
        BackupStore.from_settings(settings),
        keys,
        run_id=run_id,
        library=settings.drill.library,
        session_for=lambda host: host_session(settings, host),
    )
    return [dataclasses.asdict(r) for r in results]


# --- report -------------------------------------------------------------------------------------------------------


def outcome_line(
    proposal: dict[str, Any] | None,
    approval: dict[str, Any] | None,
    results: Sequence[DrillResult],
    approve_state: str | None = None,
) -> str:
    if proposal is None:
        return "failed before a sample was made: nothing was drilled"
    if not proposal.get("anything"):
        return "no stored copy is due for a restore drill: nothing to approve"
    who, refusal = gate_answer(approval, approve_state)
    if who is None:
        return refusal.replace("nothing was deleted", "nothing was drilled")
    counts = {o: sum(1 for r in results if r.outcome == o) for o in ("passed", "failed", "error")}
    line = (
        f"approved by {who}: {len(results)} cop{'y' if len(results) == 1 else 'ies'} drilled, {counts['passed']} passed"
    )
    if counts["failed"]:
        line += f", {counts['failed']} FAILED ({', '.join(r.key for r in results if r.outcome == 'failed')})"
    if counts["error"]:
        line += f", {counts['error']} could not be drilled"
    left = [r.scratch for r in results if r.scratch_left]
    if left:
        line += f"; scratch save file(s) left on the partition: {', '.join(str(s) for s in left)}"
    return line


def write_report(
    settings: Settings, run_id: str, proposal: dict[str, Any] | None, results: Sequence[DrillResult], outcome: str
) -> str:
    lines = [f"# {DAG_ID} {run_id}", "", f"Outcome: {outcome}", ""]
    if proposal is not None:
        lines += ["## Proposal", "", str(proposal.get("body", "")), ""]
    if results:
        lines += ["## Drills", ""]
        for r in results:
            lines.append(f"- {r.line()}")
            if r.steps:
                lines.append(f"  - done: {'; '.join(r.steps)}")
        lines.append("")
    text = "\n".join(lines)
    for path, content in ((settings.drill_report_file(run_id), text), (settings.drill_note_file(run_id), outcome)):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return text


def results_from_xcom(pulled: object) -> list[DrillResult]:
    """The drill task's XCom value (None when it did not run) as results."""
    if not isinstance(pulled, (list, tuple)):
        return []
    return [DrillResult(**r) for r in pulled]


def report(
    settings: Settings,
    run_id: str,
    *,
    proposal: dict[str, Any] | None,
    results: object,
    approval: dict[str, Any] | None,
    approve_state: str | None,
) -> str:
    """The report task: the report and the note written, then DrillsFailed when any drill did not pass or left its
    scratch save file, so the run is red."""
    done = results_from_xcom(results)
    outcome = outcome_line(proposal, approval, done, approve_state)
    text = write_report(settings, run_id, proposal, done, outcome)
    log.info("%s", text)
    bad = [r for r in done if r.outcome != "passed" or r.scratch_left]
    if bad:
        raise DrillsFailed(
            ", ".join(r.key for r in bad),
            "; ".join(r.line() for r in bad),
            "see the run's report: a failed copy restores nothing, so restore from another copy and save again; a "
            "drill that could not be made is tried again by the next run",
        )
    return text
