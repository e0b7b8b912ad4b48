"""Answer a HITL approval gate while `dag.test()` runs, the way the REST API's PATCH handler does.

`dag.test()` runs no scheduler and no API server, so something outside its loop must record the answer. This uses
Airflow internals (`handle_event_submit`), exactly as `update_hitl_detail` does; keep them in this one helper.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from airflow.models.hitl import HITLDetail
from airflow.models.taskinstance import TaskInstance
from airflow.models.trigger import handle_event_submit
from airflow.triggers.base import TriggerEvent
from airflow.utils import timezone
from airflow.utils.session import create_session
from airflow.utils.state import TaskInstanceState

from mqjournal.report import DELETE_NOTHING

EVERY_QUEUE_MANAGER = "<every queue manager the maintenance gate offers>"


def offered(options: list[str], want: str) -> str:
    """The option a driver means: `want` itself, or the maintenance gate's option for the queue manager `want`
    names (`host/QMGR: 12 receivers, 48.2 MB`), as an admin picks it in the form."""
    return next((o for o in options if o == want or o.startswith(f"{want}: ")), want)


class Responder(threading.Thread):
    """Waits for `task_id` of `dag_id` to await input, runs `before`, then answers `option` once. The drivers set
    `stop` when their run has ended; `timeout` only bounds a responder nobody stops. It must outlast the steps before
    the gate: on a loaded machine the recovery driver's plan job took 5.6 min, a 300 s responder had given up, and
    the run waited on its gate until the driver's own timeout."""

    def __init__(
        self,
        dag_id: str,
        task_id: str,
        option: str | list[str],
        *,
        before: Callable[[], None] | None = None,
        timeout: float = 3600,
    ):
        super().__init__(daemon=True)
        self.dag_id, self.task_id, self.before, self.timeout = dag_id, task_id, before, timeout
        self.options = [option] if isinstance(option, str) else list(option)
        self.answered: str | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + self.timeout
        submitted_at: float | None = None
        while not self.stop.is_set() and time.monotonic() < deadline:
            with create_session() as session:
                waiting = (
                    session.query(TaskInstance)
                    .filter_by(dag_id=self.dag_id, task_id=self.task_id, state=TaskInstanceState.AWAITING_INPUT)
                    .all()
                )
                details = {ti.id: session.query(HITLDetail).filter_by(ti_id=ti.id).one_or_none() for ti in waiting}
                pending = [ti for ti in waiting if details[ti.id] is not None and details[ti.id].responded_at is None]
                mine = [ti for ti in waiting if ti.run_id == self.answered]
                if self.answered is None and pending:
                    ti = pending[0]
                    detail = details[ti.id]
                    if self.before is not None:
                        self.before()
                    detail.responded_by = {"id": "oncall", "name": "On-call engineer"}
                    detail.responded_at = timezone.utcnow()
                    detail.chosen_options = (
                        [o for o in detail.options if o != DELETE_NOTHING]
                        if self.options == [EVERY_QUEUE_MANAGER]
                        else [offered(detail.options, want) for want in self.options]
                    )
                    detail.params_input = {}
                    session.add(detail)
                    handle_event_submit(
                        TriggerEvent(detail.as_resume_event_payload()), task_instance=ti, session=session
                    )
                    self.answered, submitted_at = ti.run_id, time.monotonic()
                elif mine and submitted_at is not None and time.monotonic() - submitted_at > 5:
                    # Answered so soon after the task deferred that the resume was lost (dag.test had not yet
                    # picked the deferral up): still waiting with an answer, so the answer is submitted again.
                    ti = mine[0]
                    handle_event_submit(
                        TriggerEvent(details[ti.id].as_resume_event_payload()), task_instance=ti, session=session
                    )
                    submitted_at = time.monotonic()
                elif self.answered is not None and not mine:
                    return
            time.sleep(0.5)


class TimeoutSweeper(threading.Thread):
    """What the scheduler does on each loop for HITL tasks past their deadline (dag.test() runs no scheduler): the
    scheduler's own method, so a gate's timeout default is applied exactly as in production."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.log = logging.getLogger("tests.timeout_sweeper")
        self.stop = threading.Event()

    def run(self) -> None:
        from airflow.jobs.scheduler_job_runner import SchedulerJobRunner

        while not self.stop.is_set():
            SchedulerJobRunner.check_awaiting_input_timeouts(self)  # type: ignore[arg-type]  # needs only .log
            time.sleep(1)
