"""The maintenance run's on-call step: a queue manager that cannot start gets its recovery planned before anyone asks.

From the run's snapshots, `cannotstart.cannot_start` finds each queue manager whose next STRMQM (or RCRMQMOBJ) would
end with AMQ7432; for each, the recovery DAG is triggered with the values the alert names (kind included), so its
plan waits at its approval gate, with the gate's notifier, when the on-call engineer arrives.

Linux queue managers (#32) are read from the run's Linux snapshots (settings.linux_snapshot_dir): one whose restart
would not find an extent from RECLOG on, or whose damaged object (rcdmqimg's AMQ7472) could not be re-created for an
extent missing from MEDIALOG on (linuxmq.cannotstart), is alerted and recovered the same way.

Never twice: the recovery run's id is made from the incident (host, queue manager, kind, the entry time needed; on
Linux the first extent missing), so
a rerun of the maintenance run, or the next scheduled one while nothing changed, finds that run and skips
(`skip_when_already_exists`). A recovery of the same queue manager still waiting (queued or running, its gate open)
from an earlier incident is not joined by a second one either: the data folder keeps, per queue manager, the run
last triggered, and its state is asked first.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from airflow.sdk.exceptions import AirflowRuntimeError

from mqjournal.cannotstart import CannotStart, cannot_start, newest_by_queue_manager
from mqjournal.datafolder import DataPath
from mqjournal.linuxmq.cannotstart import LinuxCannotStart
from mqjournal.linuxmq.cannotstart import cannot_start as linux_cannot_start
from mqjournal.linuxmq.cannotstart import newest_by_queue_manager as linux_newest_by_queue_manager
from mqjournal.linuxmq.snapshot import LinuxSnapshot, read_linux_snapshots
from mqjournal.settings import Settings, safe
from mqjournal.snapshot import Snapshot, read_snapshots

log = logging.getLogger(__name__)

T = TypeVar("T")

RECOVERY_DAG = "mq_journal_recovery"
ALERTS_KEY = "alerts"
"""The on_call task's XCom key for the run's cannot-start alerts, as sentences (it returns the triggers)."""
WAITING = frozenset({"queued", "running"})


OnCallAlert = CannotStart | LinuxCannotStart


def recovery_run_id(alert: OnCallAlert) -> str:
    """One id per incident: the same missing entry (or extent) of the same queue manager is one recovery, however
    often seen."""
    if isinstance(alert, LinuxCannotStart):
        incident = alert.incident
    else:
        incident = alert.needed_at.strftime("%Y%m%dT%H%M%S%z") if alert.needed_at is not None else "unknown"
    return safe(f"oncall__{alert.host}__{alert.qmgr}__{alert.kind.value}__{incident}")


@dataclass(frozen=True)
class Trigger:
    """One recovery run to trigger: TriggerDagRunOperator's arguments (expand_kwargs)."""

    trigger_run_id: str
    conf: dict[str, str]
    note: str

    def to_kwargs(self) -> dict[str, object]:
        return {"trigger_run_id": self.trigger_run_id, "conf": self.conf, "note": self.note}


def _readable(folder: DataPath, read: Callable[[DataPath], Iterable[T]]) -> list[T]:
    """The records of a run's folder (`*.jsonl`, by file name); a file that cannot be read is left out, logged."""
    found: list[T] = []
    files: list[DataPath] = sorted(folder.glob("*.jsonl"), key=lambda p: p.name) if folder.is_dir() else []
    for path in files:
        try:
            found += list(read(path))
        except (OSError, ValueError) as exc:
            log.warning("%s left out of the on-call check: %s", path, exc)
    return found


def run_snapshots(settings: Settings, run_id: str) -> list[Snapshot]:
    """The run's collected snapshots (one file per queue manager)."""
    return _readable(settings.snapshot_dir(run_id), read_snapshots)


def alerts_of(snapshots: list[Snapshot]) -> list[CannotStart]:
    """Per queue manager, the alert of its newest snapshot of the run."""
    return [alert for s in newest_by_queue_manager(snapshots).values() if (alert := cannot_start(s)) is not None]


def run_linux_snapshots(settings: Settings, run_id: str) -> list[LinuxSnapshot]:
    """The run's Linux snapshots (one file per host)."""
    return _readable(settings.linux_snapshot_dir(run_id), read_linux_snapshots)


def linux_alerts_of(snapshots: list[LinuxSnapshot]) -> list[LinuxCannotStart]:
    """Per Linux queue manager, the alert of its newest snapshot of the run."""
    newest = linux_newest_by_queue_manager(snapshots).values()
    return [alert for s in newest if (alert := linux_cannot_start(s)) is not None]


def _record(settings: Settings, alert: OnCallAlert) -> DataPath:
    return settings.data_folder / "oncall" / f"{safe(alert.host)}__{safe(alert.qmgr)}.json"


def triggers(
    settings: Settings, alerts: Sequence[OnCallAlert], state_of: Callable[[str], str | None], maintenance_run: str
) -> list[Trigger]:
    """The recovery runs to trigger for `alerts`: none for a queue manager whose last triggered recovery (of another
    incident) still waits, as `state_of` (a recovery run id -> its state, None when there is none) tells."""
    chosen = []
    for alert in alerts:
        run_id = recovery_run_id(alert)
        record = _record(settings, alert)
        earlier = _earlier_run(record)
        if earlier is not None and earlier != run_id and state_of(earlier) in WAITING:
            log.warning("%s; not triggered: recovery run %s of %s waits already", alert.text, earlier, alert.qmgr)
            continue
        log.warning("%s; triggering %s run %s", alert.text, RECOVERY_DAG, run_id)
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({"run_id": run_id, "maintenance_run": maintenance_run}), encoding="utf-8")
        chosen.append(
            Trigger(
                trigger_run_id=run_id,
                conf=alert.recovery_conf(),
                note=f"triggered by {maintenance_run}: {alert.text}",
            )
        )
    return chosen


def _earlier_run(record: DataPath) -> str | None:
    try:
        return str(json.loads(record.read_text(encoding="utf-8"))["run_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def recovery_run_state(ti: Any) -> Callable[[str], str | None]:
    """`on_call`'s `state_of` in a task: a recovery run's state as Airflow has it (the task instance's own access to
    the metadata DB, `ti.get_dagrun_state`); None when Airflow has no such run, which it answers with an error."""

    def state_of(run_id: str) -> str | None:
        try:
            return str(ti.get_dagrun_state(dag_id=RECOVERY_DAG, run_id=run_id))
        except AirflowRuntimeError:
            return None

    return state_of


def on_call(
    settings: Settings, run_id: str, state_of: Callable[[str], str | None], *, dry_run: bool
) -> tuple[list[str], list[Trigger]]:
    """The run's cannot-start alerts (their texts) and the recovery runs to trigger (none in a dry run: it only
    reads, and says what it would trigger)."""
    alerts: list[OnCallAlert] = [
        *alerts_of(run_snapshots(settings, run_id)),
        *linux_alerts_of(run_linux_snapshots(settings, run_id)),
    ]
    if dry_run:
        for alert in alerts:
            log.warning("%s; a dry run triggers no recovery", alert.text)
        return [a.text for a in alerts], []
    return [a.text for a in alerts], triggers(settings, alerts, state_of, run_id)
