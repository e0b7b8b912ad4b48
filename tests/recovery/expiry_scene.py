"""What the backup expiry tests share: a history of maintenance runs and library saves on a simulated queue manager,
and the restore plans that must stay gap-free whatever expiry deletes.

Used by tests/airflow (the DAG's steps called directly) and by the end-to-end driver (tests/dags), each with an SSH
session to the simulator as its DAG tasks would hold it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timezone

from mqjournal import rules
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.ibmi.collector import Target, collect
from mqjournal.ibmi.executor import Executor
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.policy import Policy
from mqjournal.recovery import expiry
from mqjournal.recovery.gather import gather
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.library_save import save_library
from mqjournal.recovery.plan import RecoveryPlan, Request
from mqjournal.recovery.restore import plan_restore


def maintain(
    session: IbmiSession, target: Target, *, host: str, tz: timezone, catalog: Catalog, store: BackupStore, run_id: str
) -> list[str]:
    """What the maintenance DAG does to one queue manager, without Spark: checkpoint, plan with the reference
    planner, save (and copy into the store) everything it may, delete what MQ no longer needs. Returns the deleted."""
    executor = Executor(session, target, host, tz, catalog, run_id, store)
    snap = collect(session, target, host=host, run_id=run_id, tz=tz)
    _, rows = rules.plan_queue_manager(snap, [snap], as_of=snap.collected_at, policy=Policy())
    to_save = [r.receiver for r in rows if r.action in rules.SAVES]
    to_delete = [r.receiver for r in sorted(rows, key=lambda r: r.chain_position or 0) if r.action in rules.DELETES]
    executor.save(to_save, save_library="QGPL")
    return executor.delete(to_delete, policy=Policy()).deleted


def build_history(
    session: IbmiSession,
    target: Target,
    *,
    host: str,
    tz: timezone,
    catalog: Catalog,
    store: BackupStore,
    advance: Callable[[], None],
    rounds: int = 3,
) -> None:
    """`rounds` weeks in short: time passes, maintenance saves and deletes, a library save is taken (and copied into
    the store). With the policy's two library saves kept, the first round's save files are what expiry may take."""
    for n in range(1, rounds + 1):
        advance()
        maintain(session, target, host=host, tz=tz, catalog=catalog, store=store, run_id=f"maint-{target.qmgr}-{n}")
        save_library(
            session,
            target,
            host=host,
            tz=tz,
            catalog=catalog,
            save_library="QGPL",
            run_id=f"lib-{target.qmgr}-{n}",
            store=store,
            routes=None,
        )


def restore_plans(
    session: IbmiSession,
    target: Target,
    *,
    host: str,
    tz: timezone,
    catalog: Catalog,
    store: BackupStore,
    policy: Policy,
) -> dict[str, RecoveryPlan]:
    """The restores the recovery rules promise for this queue manager, planned now from the host, the catalog and
    the store:

    - `startup`: a startup recovery pass from the oldest entry the live queue manager needs (AMQJRNINF, AMQ7460 or
      AMQ7462, whichever is earliest);
    - `library <save file>`: the library lost, restored from each library save the policy keeps, then every
      receiver from that save's AMQJRNINF receiver on, from their saves (the host's receivers are gone with it).
    """

    def inputs(kind: RecoveryKind):
        request = Request(host=host, qmgr=target.qmgr, kind=kind)
        return gather(session, target, host=host, tz=tz, catalog=catalog, request=request, store=store)

    startup = inputs(RecoveryKind.STARTUP)
    needs = expiry.live_needs(startup.snapshot, policy, startup.now)
    assert needs.needed_at is not None, needs.blocks
    plans = {
        "startup": plan_restore(
            replace(startup, request=startup.request.model_copy(update={"needed_at": needs.needed_at}))
        )
    }
    library = inputs(RecoveryKind.LIBRARY)
    kept, _ = expiry.split_library_saves(library.library_saves, policy.keep_library_saves)
    for saved in kept:
        lost = replace(library, snapshot=None, library_saves=[saved])
        plans[f"library {saved.save_file_path}"] = plan_restore(lost)
    return plans


def gaps(plans: dict[str, RecoveryPlan]) -> dict[str, list[str]]:
    """The gaps of each plan that has any: empty when every restore can run."""
    return {name: [str(g) for g in plan.gaps] for name, plan in plans.items() if plan.gaps}
