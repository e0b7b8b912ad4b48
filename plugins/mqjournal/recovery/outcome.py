"""Judge what a recovery command gave back: its exit status and the IBM i / MQ messages it printed.

An exit status of 0 alone is not trusted: a CL command can complete and still print an escape or diagnostic
message of QCPFMSG (CPF, CPD), and MQ reports a recovery pass that could not read its journal (AMQ7432) whatever
the status. A `db2` run prints its errors on stdout as a CLI error block.
"""

from __future__ import annotations

from dataclasses import dataclass

from mqjournal.ibmi.db2out import Db2Failure, Db2OutputError, parse_results
from mqjournal.ibmi.readings import cl_messages
from mqjournal.ibmi.transport import CommandOutput
from mqjournal.snapshot import CommandMessage

# QCPFMSG escape and diagnostic prefixes: a command that sends one did not do (all of) what it was asked.
FAILING_PREFIXES = ("CPF", "CPD")
# MQ messages that say the command failed (IBM MQ for IBM i message catalogue; see sim/messages.py for sources).
FAILING_MQ = frozenset({"AMQ7432", "AMQ7017", "AMQ7085", "AMQ8042", "AMQ8118", "AMQ8146", "AMQ8147", "AMQ9406"})
ENTRY_NOT_AVAILABLE = "AMQ7432"
ALREADY_RUNNING = "AMQ8042"


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


def failing(msg_id: str | None) -> bool:
    return bool(msg_id) and (msg_id.startswith(FAILING_PREFIXES) or msg_id in FAILING_MQ)


def judge_cl(out: CommandOutput) -> Verdict:
    messages = cl_messages(out.stdout, out.stderr)
    bad = [m for m in messages if failing(m.id)]
    if out.exit_status == 0 and not bad:
        return Verdict(True, messages)
    # The escape message ends the command, so it is the last failing one printed.
    culprit = bad[-1] if bad else None
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
