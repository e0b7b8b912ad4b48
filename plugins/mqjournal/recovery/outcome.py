"""Judge what a recovery command gave back: its exit status and the IBM i / MQ messages it printed.

A CL command run through PASE `system` succeeded when it did not end with an escape message: `system` then exits 0
and prints the command's messages on stdout; a command that ends with an escape prints its messages, the escape
last, on stderr and exits non-zero ("messages ... are written to standard output or standard error (depending on
whether the CL command sends an exception message)", IBM i PASE system utility,
https://www.ibm.com/docs/en/i/7.4?topic=utilities-pase-i-system-utility; exit 255 in real captures, see
sim/system.py). So a CPF or CPD message on stdout with exit status 0 is what it is -- a diagnostic or informational
message of a command that completed, e.g. the diagnostic IBM i sends when a save takes the attached journal
receiver (SAVLIB of a queue manager library always does), or CHGJRN's informational message with the new
receiver's first sequence number -- and not a failure. Their IDs are not needed, nor is their language.

Two checks stay stricter than the exit status: MQ reports a recovery pass that could not read its journal (AMQ7432)
and the other MQ failures below whatever the status, and a caller can require the command's completion message
(SAVLIB's CPC3722), so that a `system` that printed nothing at all is not taken for a save.
A `db2` run prints its errors on stdout as a CLI error block.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from mqjournal.ibmi.db2out import Db2Failure, Db2OutputError, parse_results
from mqjournal.ibmi.readings import cl_messages
from mqjournal.ibmi.transport import CommandOutput
from mqjournal.snapshot import CommandMessage

# MQ messages that say the command failed (IBM MQ for IBM i message catalogue; see sim/messages.py for sources).
FAILING_MQ = frozenset({"AMQ7432", "AMQ7017", "AMQ7085", "AMQ8042", "AMQ8118", "AMQ8146", "AMQ8147", "AMQ9406"})
ENTRY_NOT_AVAILABLE = "AMQ7432"
ALREADY_RUNNING = "AMQ8042"
# SAVLIB / SAVOBJ to a save file: "CPC3722: Sent for each library that is saved to a save file"
# (https://www.ibm.com/support/knowledgecenter/ssw_ibm_i_71/rzaiu/rzaiurzaiu254.htm).
SAVED_TO_SAVE_FILE = "CPC3722"


@dataclass(frozen=True)
class Verdict:
    ok: bool
    messages: list[CommandMessage]
    failure: str | None = None  # what went wrong, with the message ID and text
    msg_id: str | None = None  # the message that failed it

    @property
    def ids(self) -> list[str]:
        return [m.id for m in self.messages if m.id]

    def text(self) -> str:
        return "; ".join(f"{m.id}: {m.text}" for m in self.messages) or "no message"


def judge_cl(out: CommandOutput, *, completion: Collection[str] = ()) -> Verdict:
    """Whether a CL command succeeded: exit status 0, no escape (stderr), no failing MQ message, and, when
    `completion` names IDs, one of those completion messages printed."""
    messages = cl_messages(out.stdout, out.stderr)
    ended = cl_messages("", out.stderr)  # with `system`, a command that sent an escape prints it here, last
    mq_failures = [m for m in messages if m.id in FAILING_MQ]
    if out.exit_status == 0 and not ended and not mq_failures:
        if completion and not any(m.id in completion for m in messages):
            wanted = " or ".join(sorted(completion))
            return Verdict(
                False,
                messages,
                f"the command ended without its completion message {wanted} "
                f"({'; '.join(f'{m.id}: {m.text}' for m in messages) or 'no message'})",
            )
        return Verdict(True, messages)
    # The escape message ends the command, so it is the last one on stderr; an MQ failure on stdout comes next.
    culprit = ended[-1] if ended else (mq_failures[-1] if mq_failures else None)
    failure = f"{culprit.id}: {culprit.text}" if culprit else f"exit status {out.exit_status} without a message"
    return Verdict(False, messages, failure, culprit.id if culprit else None)


def judge_sql(out: CommandOutput) -> Verdict:
    """A `db2` CALL: a CLI error block on stdout (or a non-zero status) is a failure."""
    try:
        results = parse_results(out.stdout)
    except Db2OutputError as exc:
        return Verdict(False, [], f"the db2 output could not be read ({exc})")
    for result in results:
        if isinstance(result, Db2Failure):
            message = CommandMessage(id=result.msg_id, text=f"{result.text} (SQLSTATE {result.sqlstate})")
            return Verdict(False, [message], f"{message.id}: {message.text}", result.msg_id)
    if out.exit_status != 0:
        return Verdict(False, [], f"db2 ended with exit status {out.exit_status}: {out.stderr.strip()[-300:]}")
    return Verdict(True, [])


def judge(out: CommandOutput, *, sql: bool) -> Verdict:
    return judge_sql(out) if sql else judge_cl(out)
