"""The PASE `system` utility: run one CL command and print its messages as ``MSGID: text`` lines.

What real IBM i sends (each fact's source is in messages.py next to the message, or here):
- Success: exit status 0, the command's messages (completion, and any diagnostic or informational ones it sent
  without ending in an escape) on stdout, spooled output (OUTPUT(*PRINT)) on stdout too, stderr empty.
- A command that ends with an escape message: exit status 255, stdout empty, every message it sent (diagnostics
  first, the escape last) on stderr. Captured on a V7R5 partition with ``system -b``: stdout empty, stderr
  ``CPD0074: Value 'WARNING_TE' for PGM exceeds 10 characters.`` / ``CPF0006: Errors occurred in command.``, exit
  code 255 (public iNative capture document, "Especificaciones de Compilador IBM i", case WARNING_TEST).
- A command the command analyzer refuses (unknown command, unknown keyword, missing required parameter, bad value,
  too many positional values): one CPD diagnostic, then escape CPF0006 "Errors occurred in command." (not CPF0001).
  German capture of an unknown command: ``CPD0030: Befehl UND in Bibliothek *LIBL nicht gefunden.`` /
  ``CPF0006: Im Befehl ist ein Fehler aufgetreten.`` on stderr (public Python deploy tool log); English
  ``CPD0030: Command REVOKE in library *LIBL not found.`` (public IBM i course, real-machine transcript).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mqjournal.sim.clcommands import COMMANDS, InquiryWait, Spec
from mqjournal.sim.clparse import ClCommand, ClSyntaxError, parse
from mqjournal.sim.joblog import CommandError, JobLog, escape
from mqjournal.sim.language import JobFormat
from mqjournal.sim.messages import CATALOG, Message, render
from mqjournal.sim.model import Partition
from mqjournal.sim.protocol import ExecResult

# Exit status of `system` when the command ended with an escape message (see the capture above).
ESCAPE_EXIT_STATUS = 255
# The escape the command analyzer ends every syntax error with.
SYNTAX_ESCAPE = "CPF0006"


def _lines(messages: list[Message], job: JobFormat | None = None) -> str:
    # In the job's language and date format (language.py); `text` is the English fallback.
    return "".join(f"{m.id}: {m.text if job is None else m.shown(job)}\n" for m in messages)


def _checked(command: ClCommand, spec: Spec) -> ClCommand:
    """The command with its positional values given their keywords, as the command analyzer checks it."""
    if len(command.positional) > len(spec.positional):
        extra = command.positional[len(spec.positional)]
        raise ClSyntaxError("CPD0003", " ".join(extra), str(len(spec.positional)))
    params = dict(command.params)
    for keyword, values in zip(
        spec.positional, command.positional, strict=False
    ):  # fewer values than keywords: the rest default
        if keyword in params:
            raise ClSyntaxError("CPD0012", keyword)
        params[keyword] = list(values)
    unknown = sorted(set(params) - spec.keywords)
    if unknown:
        raise ClSyntaxError("CPD0043", unknown[0])
    missing = [k for k in (*spec.positional, *sorted(spec.required)) if k in spec.required and k not in params]
    if missing:
        raise ClSyntaxError("CPD0071", missing[0])
    return ClCommand(name=command.name, library=command.library, params=params)


def run_cl(
    partition: Partition, text: str, job: str, wait_for_reply: Callable[[InquiryWait], str | None]
) -> ExecResult:
    """Run CL `text` on `partition` for `job`. `wait_for_reply` blocks for an operator's reply to an inquiry."""
    log = JobLog()
    try:
        parsed = parse(text)
        spec = COMMANDS.get(parsed.name)
        if spec is None or parsed.library not in (None, "QSYS", "QMQM", "*LIBL"):
            raise ClSyntaxError("CPD0030", parsed.name, parsed.library or "*LIBL")
        command = _checked(parsed, spec)
        _injected_fault(partition, text)
        spooled = ""
        try:
            spooled = spec.run(partition, command, log, job) or ""
        except InquiryWait as wait:
            reply = wait_for_reply(wait)
            if reply is None:
                # The job was ended while it waited (ENDJOB, or the simulator stopped).
                raise escape("CPF0006") from None
            wait.resume(reply)
    except ClSyntaxError as error:
        if error.msg_id in CATALOG:
            log.send(error.msg_id, *error.tokens)
        log.send(SYNTAX_ESCAPE)
        return ExecResult(ESCAPE_EXIT_STATUS, "", _lines(log.messages, partition.job_format()))
    except CommandError as error:
        messages = [*log.messages, *[m for m in error.joblog if m not in log.messages]]
        if error.escape not in messages:
            messages.append(error.escape)
        return ExecResult(ESCAPE_EXIT_STATUS, "", _lines(messages, partition.job_format()))
    # Spooled output (OUTPUT(*PRINT)) goes to stdout, after the messages the command sent.
    return ExecResult(0, _lines(log.messages, partition.job_format()) + spooled, "")


def changes_partition(partition: Partition, text: str) -> bool:
    """Whether CL `text` may change `partition`: False only for a command that reads it alone (Spec.changes) and
    meets no injected fault (which counts itself down); anything that does not parse counts as a change."""
    try:
        spec = COMMANDS.get(parse(text).name)
    except ValueError:  # ClSyntaxError among them
        return True
    if spec is None or spec.changes:
        return True
    return any(re.search(fault.pattern, text, re.IGNORECASE) for fault in partition.faults.commands)


def _injected_fault(partition: Partition, text: str) -> None:
    for fault in list(partition.faults.commands):
        if re.search(fault.pattern, text, re.IGNORECASE):
            if fault.times == 1:
                partition.faults.commands.remove(fault)
            elif fault.times > 1:
                fault.times -= 1
            diagnostics = [render(msg_id, *tokens) for msg_id, *tokens in fault.diagnostics]
            raise CommandError(render(fault.msg_id, *fault.tokens), diagnostics)
