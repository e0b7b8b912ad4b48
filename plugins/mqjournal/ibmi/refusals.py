"""Why IBM i refused a DLTJRNRCV, and what the operator can do about it, from what the command printed.

A refused DLT command ends, as IBM i's DLT commands do, with the diagnostics that give the reason and then one escape
that only sums up ("CPF2125: No objects deleted."). Which IDs DLTJRNRCV sends was not found in IBM's public text
(docs/ibmi-interfaces.md), so nothing here depends on them: a non-zero exit status is a refusal whatever the IDs, the
receiver is kept, and what is reported is the diagnostics' text. An ID only adds a named reason and advice when it is
one recognised below; any other still reads as a refusal, with advice that fits every cause.
"""

from __future__ import annotations

from dataclasses import dataclass

from mqjournal.ibmi.readings import cl_messages
from mqjournal.ibmi.transport import CommandOutput
from mqjournal.snapshot import CommandMessage


@dataclass(frozen=True)
class Reason:
    what: str
    advice: str


# The simulator's IDs for DLTJRNRCV's documented restrictions (messages.py): assumed, not verified on a partition.
# CPF9803 is sent while another job holds the receiver, e.g. one waiting in MSGW on the CPA7025 inquiry.
RECOGNISED: dict[str, Reason] = {
    "CPF7022": Reason(
        "it is attached to its journal",
        "nothing now: MQ detaches it at a later journal change (RCDMQMIMG or a receiver threshold) and a later run "
        "deletes it",
    ),
    "CPF7024": Reason(
        "an older receiver of its chain is still on the host",
        "let the next run delete the older receivers first (DLTJRNRCV deletes the oldest only)",
    ),
    "CPF7021": Reason(
        "the inquiry CPA7025 (never fully saved) was answered C",
        "run the save step for it and let the next run delete it",
    ),
    "CPF9803": Reason(
        "another job holds it",
        "find that job (WRKOBJLCK OBJ(lib/name) OBJTYPE(*JRNRCV); one in MSGW on CPA7025 holds it until answered), "
        "answer or end it, then run the delete step again",
    ),
}

_UNRECOGNISED_ADVICE = (
    "read the messages above (and the job log of the SSH job on the partition), remove the cause, then run the "
    "delete step again; until then the receiver stays on the host"
)


@dataclass(frozen=True)
class Refusal:
    """A DLTJRNRCV that ended with an escape: the receiver it kept, what the host said, and what to do."""

    receiver: str  # LIB/NAME
    said: tuple[CommandMessage, ...]
    reason: Reason | None

    def __str__(self) -> str:
        why = f" ({self.reason.what})" if self.reason else ""
        said = "; ".join(f"{m.id}: {m.text}" for m in self.said).rstrip(".") or "no message"
        advice = self.reason.advice if self.reason else _UNRECOGNISED_ADVICE
        return f"IBM i refused to delete {self.receiver}{why}, which is kept. It said: {said}. What to do: {advice}"


def refusal(library: str, receiver: str, out: CommandOutput) -> Refusal:
    """The refusal a failed DLTJRNRCV's output describes, read without relying on any message ID."""
    messages = cl_messages(out.stdout, out.stderr)
    return Refusal(f"{library}/{receiver}", _reasons_given(messages), _recognised(messages))


def _reasons_given(messages: list[CommandMessage]) -> tuple[CommandMessage, ...]:
    # The escape comes last and only sums up; what precedes it says why. With nothing before it, the escape is all.
    return tuple(messages[:-1] or messages)


def _recognised(messages: list[CommandMessage]) -> Reason | None:
    return next((RECOGNISED[m.id] for m in messages if m.id in RECOGNISED), None)
