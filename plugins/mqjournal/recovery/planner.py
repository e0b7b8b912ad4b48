"""One entry point for every recovery kind: the planner the request's kind calls for, on gathered inputs."""

from __future__ import annotations

from mqjournal.policy import Policy
from mqjournal.recovery import expiry, naming, restore
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import RecoveryPlan
from mqjournal.recovery.restore import Inputs, RecoveryRefused


def plan_recovery(inputs: Inputs, *, policy: Policy | None = None) -> RecoveryPlan:
    """startup/media/library: the restore planner; naming: the repair planner; expiry: the backup expiry planner.

    Raises RecoveryRefused when the request cannot be planned at all (e.g. a naming repair of a lost journal).
    """
    policy = policy or Policy()
    request = inputs.request
    if request.kind in (RecoveryKind.STARTUP, RecoveryKind.MEDIA, RecoveryKind.LIBRARY):
        return restore.plan_restore(inputs)
    if request.kind is RecoveryKind.NAMING:
        if inputs.snapshot is None:
            raise RecoveryRefused(
                f"{inputs.qmgr_library}/{inputs.journal} on {request.host}",
                "the journal is not on the host, so there is no receiver switching to repair",
                "plan a library recovery instead",
            )
        return naming.plan_naming(request, inputs.snapshot, inputs.now, max_snapshot_age=policy.max_snapshot_age)
    if request.kind is RecoveryKind.EXPIRY:
        return expiry.plan_expiry(request, inputs.snapshot, inputs.cataloged, inputs.library_saves, policy, inputs.now)
    raise RecoveryRefused(
        request.kind.value,
        "is not a recovery kind mqjournal plans",
        "use one of " + ", ".join(k.value for k in RecoveryKind),
    )
