"""One mapped task instance per batch of hosts, never per queue manager: how a step reaches many queue managers.

Airflow refuses to map more than `[core] max_map_length` items (1024 by default) and each mapped instance costs
seconds of overhead, so the maintenance DAG maps its SSH steps over batches of hosts (`host_batches`): at most
`max_mapped_tasks` instances, whatever the fleet's size. A batch's task works on `hosts_in_parallel` hosts at once,
and on one host through at most `sessions_per_host` SSH sessions, each working through the host's queue managers
one after another (`run_per_queue_manager`). A queue manager that fails is logged by name and the others go on; the
task then fails naming every one that failed, and its retry repeats nothing that was done (each step is idempotent).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from airflow.sdk import get_current_context
from airflow.sdk.exceptions import AirflowFailException

from mqjournal.airflow.sessions import host_session
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import HostBatch, MaintenanceTarget, NotFound
from mqjournal.errors import MqJournalError
from mqjournal.fleet import HostConfig, load_fleet
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.outcomes import StepValue
from mqjournal.undone import task_failure

log = logging.getLogger(__name__)

T = TypeVar("T")
H = TypeVar("H")


def host_batches(
    targets: Sequence[MaintenanceTarget], max_tasks: int, not_found: Sequence[NotFound] = ()
) -> list[HostBatch]:
    """The targets grouped by host, the hosts split into at most `max_tasks` batches of consecutive hosts (in the
    fleet file's order), as even as they go: 1,000 hosts and 256 tasks make 232 batches of 4 hosts and 24 of 3.
    A queue manager `not_found` goes with its host's batch, whose first step fails it by name (`with_not_found`): a
    host whose every queue manager is missing still gets a batch, so it is not silently left out."""
    by_host: dict[str, list[MaintenanceTarget]] = {}
    for t in targets:
        by_host.setdefault(t.host, []).append(t)
    missing: dict[str, list[NotFound]] = {}
    for n in not_found:
        missing.setdefault(n.host, []).append(n)
    hosts = list(dict.fromkeys([*by_host, *missing]))
    if not hosts:
        return []
    count = min(max_tasks, len(hosts))
    base, extra = divmod(len(hosts), count)
    batches, start = [], 0
    for i in range(count):
        size = base + (1 if i < extra else 0)
        chosen = hosts[start : start + size]
        batches.append(
            HostBatch(
                targets=[t for h in chosen for t in by_host.get(h, [])],
                not_found=[n for h in chosen for n in missing.get(h, [])],
            )
        )
        start += size
    return batches


def with_not_found(result: BatchResult[T], batch: HostBatch) -> BatchResult[T]:
    """`result` with the batch's configured queue managers whose journal was not found among its failures: the run's
    first step on a host fails them by name, as `mqjournal collect` does, and the others' outcomes stand."""
    return BatchResult(done=result.done, failures=result.failures | {n.label: n.error for n in batch.not_found})


@dataclass
class BatchResult(Generic[T]):
    """Each queue manager's outcome by its key, in the batch's order, and the error of each one that failed (by
    its label, host/QMGR, as the logs name it)."""

    done: dict[str, T] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)

    @property
    def outcomes(self) -> list[T]:
        return list(self.done.values())


class QueueManagersFailed(MqJournalError):
    """Some queue managers of a batch failed; the others were done."""


class WorkLeftUndone(AirflowFailException):
    """The step ran on every queue manager of its batch, but left promised work undone (mqjournal.undone): the task
    fails, red in the grid, and the run with it. Not retried: a retry would repeat the step minutes later and hold
    the approval gate meanwhile, and the next step on the queue manager picks up what was left (a copy not made is
    made by the next save, a delete not proven waits for a proven backup)."""


def run_per_queue_manager(
    settings: Settings,
    batch: HostBatch,
    step: Callable[[IbmiSession, MaintenanceTarget], T],
    *,
    doing: str,
) -> BatchResult[T]:
    """`step` for every queue manager of the batch, over sessions opened here (within each host's lease)."""
    results: dict[str, T] = {}
    failures: dict[str, str] = {}
    lock = threading.Lock()

    def record(target: MaintenanceTarget, outcome: T | None, error: BaseException | None) -> None:
        with lock:
            if error is None:
                results[target.key] = outcome  # type: ignore[assignment]  # None only with an error
            else:
                failures[target.label] = str(error)

    if not batch.targets:  # only queue managers whose journal was not found: no session, no fleet file needed
        return BatchResult()
    fleet = load_fleet(settings.fleet_file)  # once: every session of the batch needs its host's entry

    def one_host(targets: list[MaintenanceTarget]) -> None:
        waiting: queue.SimpleQueue[MaintenanceTarget] = queue.SimpleQueue()
        for t in targets:
            waiting.put(t)
        sessions = min(settings.ssh.sessions_per_host, len(targets))
        try:
            host = fleet.host(targets[0].host)
        except KeyError:  # taken out of the fleet file since the run selected it
            gone = MqJournalError(
                f"host {targets[0].host}",
                f"not in the fleet file {settings.fleet_file} any more",
                "put it back, or start a new run (which no longer selects it)",
            )
            for t in targets:
                record(t, None, gone)
            return
        with ThreadPoolExecutor(sessions, thread_name_prefix=f"{host.name}-session") as pool:
            for _ in range(sessions):
                pool.submit(_work_through, settings, host, waiting, step, record, doing)

    hosts = batch.by_host()
    workers = max(1, min(settings.tasks.hosts_in_parallel, len(hosts)))
    with ThreadPoolExecutor(workers, thread_name_prefix="host") as pool:
        for future in [pool.submit(one_host, targets) for targets in hosts.values()]:
            future.result()
    return BatchResult(done={t.key: results[t.key] for t in batch.targets if t.key in results}, failures=failures)


def run_where_needed(
    settings: Settings,
    batch: HostBatch,
    has_work: Callable[[MaintenanceTarget], bool],
    step: Callable[[IbmiSession, MaintenanceTarget], T],
    without_session: Callable[[MaintenanceTarget], T],
    *,
    doing: str,
) -> BatchResult[T]:
    """`step` for the queue managers with work on their host; the others' outcome is `without_session`'s, with no
    session opened for them (a host with nothing to save is not even connected to)."""
    busy = HostBatch(targets=[t for t in batch.targets if has_work(t)])
    done = run_per_queue_manager(settings, busy, step, doing=doing) if busy.targets else BatchResult()
    return BatchResult(
        done={
            t.key: done.done[t.key] if t.key in done.done else without_session(t)
            for t in batch.targets
            if t.label not in done.failures
        },
        failures=done.failures,
    )


def _work_through(
    settings: Settings,
    host: HostConfig,
    waiting: queue.SimpleQueue[MaintenanceTarget],
    step: Callable[[IbmiSession, MaintenanceTarget], T],
    record: Callable[[MaintenanceTarget, T | None, BaseException | None], None],
    doing: str,
) -> None:
    """One session's share of a host's queue managers. After a failure the session is opened again for the next
    one (a dropped connection must not fail the rest); a session that cannot be opened fails every queue manager
    still waiting on that host, since none of them can be reached either."""
    while True:
        target = _next(waiting)
        if target is None:
            return
        try:
            with host_session(settings, host) as session:
                while target is not None:
                    log.info("%s: %s", target.label, doing)
                    try:
                        outcome = step(session, target)
                    except Exception as exc:
                        log.error("%s: %s failed: %s", target.label, doing, exc, exc_info=not _expected(exc))
                        record(target, None, exc)
                        break  # a new session for the next queue manager
                    record(target, outcome, None)
                    target = _next(waiting)
        except Exception as exc:  # the session itself: connect, host key, lease
            if target is None:  # closing a session whose work was all done
                log.warning("could not close an SSH session: %s", exc)
                return
            log.error("%s: no SSH session: %s", target.host, exc, exc_info=not _expected(exc))
            record(target, None, exc)
            while (unreached := _next(waiting)) is not None:
                record(unreached, None, exc)
            return


def _next(waiting: queue.SimpleQueue[MaintenanceTarget]) -> MaintenanceTarget | None:
    try:
        return waiting.get_nowait()
    except queue.Empty:
        return None


def _expected(exc: BaseException) -> bool:
    """mqjournal's own errors name the object and what to do: their traceback adds nothing for an admin."""
    return isinstance(exc, MqJournalError)


Undone = Callable[[Any], list[str]]
"""One queue manager's outcome -> what it left undone (mqjournal.undone.save_left_undone, ...)."""


def finish(
    result: BatchResult[Any],
    batch: HostBatch,
    push: Callable[[list[Any]], None],
    *,
    doing: str,
    undone: Undone | None = None,
) -> list[Any]:
    """The batch task's XCom value; when some queue managers failed, the others' outcomes are pushed as the task's
    value all the same (the report shows what they did) and the task fails naming each one that failed. With
    `undone`, a batch whose queue managers all ran but left promised work undone is pushed the same way and fails
    with WorkLeftUndone, naming what and why."""
    values = [o.to_xcom() if isinstance(o, StepValue) else o for o in result.outcomes]
    left = {o.target.label: lines for o in result.outcomes if undone is not None and (lines := undone(o))}
    if not result.failures:
        if not left:
            return values
        push(values)
        raise WorkLeftUndone(task_failure(left, f"{batch.label}: {doing}"))
    push(values)
    failed_not_found = [n for n in batch.not_found if n.label in result.failures]
    failed = "; ".join(f"{label}: {error}" for label, error in result.failures.items())
    also = f"; and {task_failure(left, doing)}" if left else ""
    raise QueueManagersFailed(
        batch.label,
        f"{doing} failed for {len(result.failures)} of {len(batch.targets) + len(failed_not_found)} queue managers "
        f"({failed}){also}",
        "fix what each error says and clear this task: what was done is not repeated",
    )


def spread(hosts: Sequence[H], work: Callable[[H], T], parallel: int) -> list[T]:
    """`work` for each host, `parallel` hosts at once, results in the hosts' order (discovery, the preflight)."""
    if not hosts:
        return []
    with ThreadPoolExecutor(max(1, min(parallel, len(hosts))), thread_name_prefix="host") as pool:
        return list(pool.map(work, hosts))


# --- what a DAG's batch task calls around its step ----------------------------------------------------------------

LABEL = "{{ batch_label }}"
"""map_index_template of the batch tasks: `ibmi-prod1` (or `ibmi-a .. ibmi-d (4 hosts)`) in the grid, not 0, 1, 2."""


def labelled(batch: HostBatch) -> HostBatch:
    """Names the running task for the grid (LABEL) before any work starts, so a failed task is named too."""
    get_current_context()["batch_label"] = batch.label  # type: ignore[typeddict-unknown-key]
    return batch


def returned(result: BatchResult[Any], batch: HostBatch, doing: str, undone: Undone | None = None) -> list[Any]:
    """The batch task's value; when some queue managers failed, or left work undone (`undone`), the outcomes are
    still pushed for the gate and the report, and the task fails naming each one."""
    ti = get_current_context()["ti"]
    return finish(result, batch, lambda values: ti.xcom_push("return_value", values), doing=doing, undone=undone)
