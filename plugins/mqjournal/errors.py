"""Errors as values: every failure names the IBM i object it is about, what to do, and a message ID when one applies."""

from __future__ import annotations


class MqJournalError(Exception):
    """Base of every error mqjournal raises on purpose.

    Rendered like ``NextReceiverNameTaken(AMQA000013 in QMTEST): attach a receiver with a free name (CPI70E3)``
    so that a task log line alone tells an on-call engineer which object is wrong and what to do.
    """

    msg_id: str | None = None

    def __init__(self, obj: str, problem: str, action: str, *, msg_id: str | None = None) -> None:
        self.obj = obj
        self.problem = problem
        self.action = action
        if msg_id is not None:
            self.msg_id = msg_id
        super().__init__(str(self))

    def __str__(self) -> str:
        tail = f" ({self.msg_id})" if self.msg_id else ""
        return f"{type(self).__name__}({self.obj}): {self.problem}; {self.action}{tail}"


class InvalidName(MqJournalError, ValueError):
    """A name that must never reach a CL command or SQL statement."""


class NextReceiverNameTaken(MqJournalError):
    """Seed rule 2: the name rule 1 gives already exists, so automatic receiver switching stops."""

    msg_id = "CPI70E3"


class NoReceiverNameFree(MqJournalError):
    """Seed rule 3: every name in the sequence is on the system."""


class MalformedAmqjrninf(MqJournalError, ValueError):
    """The AMQJRNINF user space does not hold the 37-character record MQ writes."""
