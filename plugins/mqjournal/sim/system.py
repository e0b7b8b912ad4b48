"""The PASE `system` utility: run one CL command and print its messages as ``MSGID: text`` lines.

Messages go to stdout, except that a command ending in an escape message prints to stderr and exits non-zero.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mqjournal.sim.clcommands import COMMANDS, InquiryWait
from mqjournal.sim.clparse import ClSyntaxError, parse
from mqjournal.sim.joblog import CommandError, JobLog, escape
from mqjournal.sim.language import JobFormat
from mqjournal.sim.messages import CATALOG, Message, render
from mqjournal.sim.model import Partition
from mqjournal.sim.protocol import ExecResult

# Exit status of `system` when the command ended with an escape message (see messages.py for the source notes).
ESCAPE_EXIT_STATUS = 255


def _lines(messages: list[Message], job: JobFormat | None = None) -> str:
    # In the job's language and date format (language.py); `text` is the English fallback.
    return "".join(f"{m.id}: {m.text if job is None else m.shown(job)}\n" for m in messages)


def run_cl(
    partition: Partition, text: str, job: str, wait_for_reply: Callable[[InquiryWait], str | None]
) -> ExecResult:
    """Run CL `text` on `partition` for `job`. `wait_for_reply` blocks for an operator's reply to an inquiry."""
    log = JobLog()
    try:
        command = parse(text)
        spec = COMMANDS.get(command.name)
        if spec is None or command.library not in (None, "QSYS", "QMQM", "*LIBL"):
            log.send("CPD0030", command.name, command.library or "*LIBL")
            raise escape("CPF0006")
        unknown = sorted(set(command.params) - spec.keywords)
        if unknown:
            log.send("CPD0043", unknown[0])
            raise escape("CPF0001", command.name)
        missing = sorted(spec.required - set(command.params))
        if missing:
            log.send("CPD0071", missing[0])
            raise escape("CPF0001", command.name)
        _injected_fault(partition, text)
        try:
            spec.run(partition, command, log, job)
        except InquiryWait as wait:
            reply = wait_for_reply(wait)
            if reply is None:
                # The job was ended while it waited (ENDJOB, or the simulator stopped).
                raise escape("CPF0006") from None
            wait.resume(reply)
    except ClSyntaxError as error:
        if error.msg_id in CATALOG:
            log.send(error.msg_id, *error.tokens)
        failure = render("CPF0001", text.split(" ", 1)[0].upper())
        return ExecResult(ESCAPE_EXIT_STATUS, "", _lines([*log.messages, failure], partition.job_format()))
    except CommandError as error:
        messages = [*log.messages, *[m for m in error.joblog if m not in log.messages]]
        if error.escape not in messages:
            messages.append(error.escape)
        return ExecResult(ESCAPE_EXIT_STATUS, "", _lines(messages, partition.job_format()))
    return ExecResult(0, _lines(log.messages, partition.job_format()), "")


def _injected_fault(partition: Partition, text: str) -> None:
    for fault in list(partition.faults.commands):
        if re.search(fault.pattern, text, re.IGNORECASE):
            if fault.times == 1:
                partition.faults.commands.remove(fault)
            elif fault.times > 1:
                fault.times -= 1
            raise escape(fault.msg_id, *fault.tokens)
