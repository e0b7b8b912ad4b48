"""The recovery DAG's steps for a Linux host of the fleet file (#32), as plain functions: airflow/recovery.py hands a
Linux host here, the DAG file wires the same tasks for both platforms.

The form is checked before any SSH (a Linux host takes startup and media only; a media recovery names its object);
the plan is made from the live host, the last snapshot the maintenance runs wrote of the queue manager (the log
points of one that does not run: settings.linux_snapshots) and the catalog's copies, proven in the backup store.
After approval the plan is made again on the live host and only the steps the approver saw are run.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mqjournal.airflow.sessions import linux_host_session
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import LinuxRecoveryPlanMade
from mqjournal.catalog import Catalog
from mqjournal.fleet import load_fleet
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.linuxfleet import LinuxHostConfig
from mqjournal.linuxmq.cannotstart import newest_by_queue_manager
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxmq.recover import LinuxRecovery, LinuxRecoveryResult
from mqjournal.linuxmq.recovery import LinuxRecoveryRequest
from mqjournal.linuxmq.snapshot import linux_snapshots_of

__all__ = ["execute", "linux_host_of", "make_plan", "request_of"]

log = logging.getLogger(__name__)


def linux_host_of(settings: Settings, name: str) -> LinuxHostConfig | None:
    """The fleet file's Linux host of that name; None when `name` is not one (a partition, or no host at all)."""
    return next((h for h in load_fleet(settings.fleet_file).linux_hosts if h.name == name), None)


def request_of(params: Mapping[str, Any], host: LinuxHostConfig) -> LinuxRecoveryRequest:
    """The trigger form as a Linux request; RecoveryRefused for what a Linux host cannot do, before any SSH. A name
    the fleet file lists in another case is that queue manager (`qm.orders` is QM.ORDERS), as on IBM i."""
    qmgr = str(params["qmgr"])
    listed = [q.name for q in host.queue_managers if q.name.lower() == qmgr.lower()]
    if qmgr not in listed and len(listed) == 1:
        qmgr = listed[0]
    if params.get("timestamp"):
        log.warning("%s %s: the timestamp is IBM i's AMQ7432 time; a Linux plan reads the log points", host.name, qmgr)
    return LinuxRecoveryRequest.checked(
        host=host.name,
        qmgr=qmgr,
        kind=params["kind"],
        object=params.get("object") or None,
        object_type=params.get("object_type") or "all",
    )


def _recovery(settings: Settings, session: IbmiSession, host: LinuxHostConfig, qmgr: str) -> LinuxRecovery:
    last = newest_by_queue_manager(linux_snapshots_of(settings.linux_snapshots, host.name, qmgr)).get((host.name, qmgr))
    return LinuxRecovery(
        session,
        host.mq_bin,
        Catalog(settings.catalog_url),
        ExtentStore(settings.backup_store, conn_id=settings.backup_store_conn_id),
        last=last,
        platform=host.host_platform,
    )


def make_plan(
    settings: Settings, params: Mapping[str, Any], run_id: str, host: LinuxHostConfig
) -> LinuxRecoveryPlanMade:
    request = request_of(params, host)
    with linux_host_session(settings, host) as session:
        plan = _recovery(settings, session, host, request.qmgr).plan(request)
    path = settings.recovery_plan_file(run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(plan.model_dump_json(indent=2), encoding="utf-8")
    body = plan.markdown()
    log.info("%s", body)
    return LinuxRecoveryPlanMade(plan=plan, body=body, executable=plan.executable)


def execute(settings: Settings, made: LinuxRecoveryPlanMade, host: LinuxHostConfig) -> LinuxRecoveryResult:
    approved = made.plan
    with linux_host_session(settings, host) as session:
        result = _recovery(settings, session, host, approved.request.qmgr).execute(approved)
    log.info("%s", result.markdown())
    return result
