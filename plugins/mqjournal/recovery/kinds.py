"""The kinds of recovery mqjournal plans, listed once: the CLI's --kind, the recovery DAG's `kind` param and the
planners all take their names (and the line a person reads about each) from here."""

from __future__ import annotations

from enum import StrEnum


class RecoveryKind(StrEnum):
    """What went wrong, and so which planner answers: startup, media and library restore receivers (and the
    library); naming repairs receiver switching; expiry discards save files."""

    description: str

    # `description` has a default only so that mypy accepts a lookup by value, RecoveryKind("media"): the enum
    # machinery calls this only to make the members, each of which gives its line.
    def __new__(cls, value: str, description: str = "") -> RecoveryKind:
        kind = str.__new__(cls, value)
        kind._value_ = value
        kind.description = description
        return kind

    STARTUP = "startup", "STRMQM failed with AMQ7432: restore from the journal entry it needs, then STRMQM"
    MEDIA = "media", "a damaged object: restore from the AMQ7462 media recovery point, then RCRMQMOBJ"
    LIBRARY = "library", "the queue manager library is lost: its latest save, the later receivers, then STRMQM"
    NAMING = "naming", "receiver switching stopped (CPI70E3) or a new threshold: attach a receiver by hand"
    EXPIRY = "expiry", "discard save files no restore can need any more"

    @classmethod
    def described(cls) -> str:
        """Each kind with its line, for a --help text or a form's description."""
        return "; ".join(f"{kind.value}: {kind.description}" for kind in cls)
