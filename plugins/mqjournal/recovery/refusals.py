"""Why an approved recovery plan is not run at all: nothing was sent that changes the host."""

from __future__ import annotations

from mqjournal.recovery.restore import RecoveryRefused


class PlanHasGaps(RecoveryRefused):
    """The plan (approved, or made again on the live host) needs what is not there."""


class PlanWentStale(RecoveryRefused):
    """The live host needs more than was approved, or is no longer in the state the plan starts from."""
