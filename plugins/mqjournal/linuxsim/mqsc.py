"""`runmqsc QM` with MQSC on stdin: the commands mqjournal sends to a Linux queue manager, answered as runmqsc does.

Input (verified: "Building command scripts", MQ 9.0 q085110; docs/linux-interfaces.md section 9): one command per
line; a line ending in `+` continues on the next without its leading blanks, one ending in `-` with them; a `;`
outside quotes ends a command (ASSUMED: text after it on the line starts the next one, the reading that makes an
injected `;` dangerous); a line starting with `*` is a comment; text outside single quotes is uppercased, `''` in a
quoted string is one quote. So a value that carries a newline, a `;` or a trailing `+` changes what runs: the client
validates values, and this parser is as literal as MQ.

Output (verified from captures, section 4): the two banner lines and two empty lines; each command echoed as
`     N : <command as typed>`; `AMQ8705I: Display Queue Manager Status Details.` or `AMQ8408I: Display Queue Manager
details.` then `NAME(value)` pairs from column 4, the second of a line from column 44, a pair longer than 39
characters on a line of its own, an empty value as `( )`, QMNAME (TYPE, STATUS) first and the rest alphabetical;
`AMQ8405I: Syntax error detected at or near end of command segment below:-` and the segment; then the three summary
lines. DISPLAY QMGR has no LOGTYPE (a syntax error, as captured). DISPLAY QSTATUS(name) answers `AMQ8450I: Display
queue status details.`, then `QUEUE(name)`, `TYPE(QUEUE)` and the attributes in the same layout, MEDIALOG among them
(captures in ibm-messaging/mq-mqi-python docs/PCF.md and public runmqsc transcripts, MQ 9.2-9.3); a damaged queue
named alone answers `AMQ8149S: IBM MQ object damaged.` and no status, and a generic name leaves a damaged queue out
(the mq-mqi-python capture: `dis qs(X0)` of a queue whose file was overwritten).

ASSUMED (no source found; one place to change each):
- The linear attributes' values: CURRLOG/RECLOG/MEDIALOG/ARCHLOG as extent names, ARCHSZ/RECSZ/MEDIASZ/REUSESZ in
  whole MB rounded down; LOGINUSE and LOGUTIL as the percentage of the primary extents RECLOG..CURRLOG spans;
  LOGEXTSZ as LogFilePages x 4 + 8 (KiB; the capture's 16392 for IBM's default 4096 pages); DISKLSN from the bytes
  logged. `LOG` shows QMNAME, TYPE and STATUS before the log attributes, as named attributes do.
- DISPLAY QMGR ALL lists only DESCR and the IMG*/LOGGEREV attributes (SIMPLIFICATION).
- DISPLAY QSTATUS: only TYPE(QUEUE) is modelled; every queue is empty and unopened (CURDEPTH(0), IPPROCS(0), ...),
  MEDIALOG is the queue's image extent; an unknown name answers AMQ8147E (text as IBM MQ prints it for other
  commands); a damaged queue's answer counts as a command that failed (exit 10).
- The message IDs and texts of SET LOG and RESET QMGR (none found): `ARCHIVED`, `RESET`, `REFUSALS` below.
- The summary lines other than "One MQSC command read.", "No commands have a syntax error." and "All valid MQSC
  commands were processed."; exit status 0 (all processed) / 10 (some not) / 20 (none run: queue manager missing
  or not available, AMQ8118E / AMQ8146E, texts as commonly seen, not from the docs).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxsim import logger
from mqjournal.linuxsim.model import (
    INSTALLATION_NAME,
    LinuxHost,
    LinuxQueueManager,
    RecoverableObject,
)
from mqjournal.sim.protocol import ExecResult

BANNER = "5724-H72 (C) Copyright IBM Corp. 1994, 2025.\nStarting MQSC for queue manager {qm}.\n\n\n"
STATUS_DETAILS = "AMQ8705I: Display Queue Manager Status Details."
QMGR_DETAILS = "AMQ8408I: Display Queue Manager details."
SYNTAX_ERROR = "AMQ8405I: Syntax error detected at or near end of command segment below:-"
NOT_AVAILABLE = "AMQ8146E: IBM MQ queue manager not available."
NOT_KNOWN = "AMQ8118E: IBM MQ queue manager does not exist."
QSTATUS_DETAILS = "AMQ8450I: Display queue status details."
OBJECT_DAMAGED = "AMQ8149S: IBM MQ object damaged."
OBJECT_NOT_FOUND = "AMQ8147E: IBM MQ object {name} not found."
# ASSUMED, every one: the MQSC answers of SET LOG and RESET QMGR were not found (docs section 3). The failure texts
# follow the PCF reasons' descriptions (q129110).
ARCHIVED = "AMQ8996I: Log extent {name} notified as archived."
RESET = "AMQ8997I: IBM MQ queue manager reset."
REFUSALS: dict[type[logger.LoggerError], str] = {
    logger.NotArchiveMode: "AMQ8998E: The log management type is not ARCHIVE.",
    logger.CurrentExtent: "AMQ8999E: Log extent {name} is the current log extent.",
    logger.ExtentNotFound: "AMQ8995E: Log extent {name} not found or is not valid.",
    logger.ReusableExtent: "AMQ8995E: Log extent {name} not found or is not valid.",
}
RC_OK, RC_SOME_FAILED, RC_NOT_RUN = 0, 10, 20

# q086250 9.4: the log attributes; the others as the instana capture of DISPLAY QMSTATUS ALL lists them.
LOG_ATTRIBUTES = (
    "ARCHLOG",
    "ARCHSZ",
    "CURRLOG",
    "DISKLSN",
    "LOGEXTSZ",
    "LOGFSSZ",
    "LOGFSUSE",
    "LOGINUSE",
    "LOGPATH",
    "LOGPRIM",
    "LOGSEC",
    "LOGSTRDA",
    "LOGSTRL",
    "LOGSTRTI",
    "LOGTYPE",
    "LOGUTIL",
    "MEDIALOG",
    "MEDIASZ",
    "RECLOG",
    "RECSZ",
    "REUSESZ",
)
OTHER_STATUS = (
    "AUTOCLUS",
    "CHINIT",
    "CHKPTCNT",
    "CHKPTOPS",
    "CHKPTSZ",
    "CMDSERV",
    "CONNS",
    "DATFSSZ",
    "DATFSUSE",
    "DATPATH",
    "GRPLSN",
    "GRPNAME",
    "GRPROLE",
    "HOSTNAME",
    "INSTANCE",
    "INSTDESC",
    "INSTNAME",
    "INSTPATH",
    "LDAPCONN",
    "QMFSSZ",
    "QMFSUSE",
    "QUORUM",
    "STANDBY",
    "STARTDA",
    "STARTTI",
    "UNICLUS",
)
STATUS_FIRST = ("QMNAME", "TYPE", "STATUS")
# DISPLAY QSTATUS TYPE(QUEUE)'s attributes as the captures list them (MQ 9.2-9.3), after QUEUE and TYPE.
QSTATUS_ATTRIBUTES = (
    "CURDEPTH",
    "CURFSIZE",
    "CURMAXFS",
    "IPPROCS",
    "LGETDATE",
    "LGETTIME",
    "LPUTDATE",
    "LPUTTIME",
    "MEDIALOG",
    "MONQ",
    "MSGAGE",
    "OPPROCS",
    "QTIME",
    "UNCOM",
)
QMGR_ATTRIBUTES = ("DESCR", "IMGINTVL", "IMGLOGLN", "IMGRCOVO", "IMGRCOVQ", "IMGSCHED", "LOGGEREV")
LEFT_WIDTH = 40  # the second pair starts at index 43: three blanks, then 40 for the first pair
MB = 1024 * 1024


class MqscSyntaxError(ValueError):
    """A command runmqsc does not accept; `segment` is the text up to where it stopped reading."""

    def __init__(self, segment: str) -> None:
        super().__init__(segment)
        self.segment = segment


# --- reading stdin --------------------------------------------------------------------------------------------


def read_commands(stdin: str) -> list[str]:
    """The commands on stdin, continuations joined and `;` honoured, each as typed."""
    commands: list[str] = []
    pending = ""
    strip_next = False
    for raw in stdin.splitlines():
        line = raw.rstrip()
        if strip_next:
            line = line.lstrip()
        if not pending and (not line.strip() or line.startswith("*")):
            continue
        if line.endswith(("+", "-")):
            pending += line[:-1]
            strip_next = line.endswith("+")
            continue
        strip_next = False
        commands += [part for part in _split_on_semicolons(pending + line) if part.strip()]
        pending = ""
    if pending.strip():
        commands += [part for part in _split_on_semicolons(pending) if part.strip()]
    return [c.strip() for c in commands]


def _split_on_semicolons(text: str) -> list[str]:
    parts, start, quoted = [], 0, False
    for at, char in enumerate(text):
        if char == "'":
            quoted = not quoted  # '' inside a string toggles twice: still inside
        elif char == ";" and not quoted:
            parts.append(text[start:at])
            start = at + 1
    parts.append(text[start:])
    return parts


@dataclass(frozen=True)
class Token:
    keyword: str
    value: str | None
    end: int
    """Where the token ends in the command text (for AMQ8405I's segment)."""


_KEYWORD = re.compile(r"[A-Za-z0-9*]+")


def tokens(text: str) -> list[Token]:
    """KEYWORD and KEYWORD(value) tokens, uppercased outside quotes; MqscSyntaxError for anything else."""
    found: list[Token] = []
    at = 0
    while at < len(text):
        if text[at] in " ,\t":
            at += 1
            continue
        match = _KEYWORD.match(text, at)
        if match is None:
            raise MqscSyntaxError(text[: at + 1])
        keyword, at = match.group().upper(), match.end()
        value = None
        if at < len(text) and text[at] == "(":
            value, at = _value(text, at + 1)
        found.append(Token(keyword, value, at))
    return found


def _value(text: str, at: int) -> tuple[str, int]:
    while at < len(text) and text[at] == " ":
        at += 1
    if at < len(text) and text[at] == "'":
        chars: list[str] = []
        at += 1
        while True:
            if at >= len(text):
                raise MqscSyntaxError(text)
            if text[at] == "'":
                if text.startswith("''", at):
                    chars.append("'")
                    at += 2
                    continue
                at += 1
                break
            chars.append(text[at])
            at += 1
        value = "".join(chars)
    else:
        end = at
        while end < len(text) and text[end] not in ") ":
            end += 1
        value, at = text[at:end].upper(), end
    while at < len(text) and text[at] == " ":
        at += 1
    if at >= len(text) or text[at] != ")":
        raise MqscSyntaxError(text[: at + 1])
    return value, at + 1


# --- the answers ----------------------------------------------------------------------------------------------


def pairs_lines(pairs: list[tuple[str, str]]) -> list[str]:
    """NAME(value) pairs two to a line, from index 3 and 43; a long pair alone; an empty value as `( )`."""
    texts = [f"{name}({value if value else ' '})" for name, value in pairs]
    lines: list[str] = []
    left: str | None = None
    for text in texts:
        if len(text) >= LEFT_WIDTH:
            if left is not None:
                lines.append(f"   {left}")
                left = None
            lines.append(f"   {text}")
        elif left is None:
            left = text
        else:
            lines.append(f"   {left.ljust(LEFT_WIDTH)}{text}")
            left = None
    if left is not None:
        lines.append(f"   {left}")
    return lines


def _extents_mb(qm: LinuxQueueManager, count: int) -> str:
    return str(count * qm.extent_size // MB)


def status_values(host: LinuxHost, qm: LinuxQueueManager) -> dict[str, str]:
    """Every DISPLAY QMSTATUS attribute of a running linear queue manager, by name."""
    spanned = {
        "RECSZ": logger.behind(qm.restart, qm.current) + 1,
        "MEDIASZ": logger.behind(qm.media, qm.current) + 1,
    }
    waiting = logger.archive_waiting(qm)
    reusable = sum(1 for e in qm.extents.values() if e.reusable)
    in_use = min(100, spanned["RECSZ"] * 100 // qm.log_primary_files)
    started, log_started = qm.started_at.astimezone(host.now.tzinfo), qm.log_started_at.astimezone(host.now.tzinfo)
    lsn = qm.bytes_logged
    # "If the queue manager is using circular logging, this parameter is blank" (CurrentLog, q087840): the same taken
    # for RECLOG, MEDIALOG and ARCHLOG (ASSUMED), which are linear logging's only.
    linear = qm.log_type == "LINEAR"
    return {
        "QMNAME": qm.name,
        "TYPE": "QMGR",
        "STATUS": "RUNNING",
        "ARCHLOG": waiting[0].name if waiting and linear else "",
        "ARCHSZ": _extents_mb(qm, sum(1 for e in waiting if logger.unneeded(qm, e.number))),
        "AUTOCLUS": "NONE",
        "CHINIT": "RUNNING",
        "CHKPTCNT": str(qm.checkpoints),
        "CHKPTOPS": "0",
        "CHKPTSZ": "0",
        "CMDSERV": "RUNNING",
        "CONNS": str(len(qm.units_of_work)),
        "CURRLOG": Extent(qm.current).name if linear else "",
        "DATFSSZ": "SHARED",
        "DATFSUSE": "SHARED",
        "DATPATH": qm.data_path,
        "DISKLSN": f"<0:0:{lsn >> 16}:{lsn & 0xFFFF}>",
        "GRPLSN": "",
        "GRPNAME": "",
        "GRPROLE": "NOTCONFIG",
        "HOSTNAME": host.name,
        "INSTANCE": "",
        "INSTDESC": "",
        "INSTNAME": INSTALLATION_NAME,
        "INSTPATH": host.installation_path,
        "LDAPCONN": "INACTIVE",
        "LOGEXTSZ": str(qm.log_file_pages * 4 + 8),
        "LOGFSSZ": "SHARED",
        "LOGFSUSE": "SHARED",
        "LOGINUSE": str(in_use),
        "LOGPATH": qm.active_path,
        "LOGPRIM": str(qm.log_primary_files),
        "LOGSEC": str(qm.log_secondary_files),
        "LOGSTRDA": log_started.strftime("%Y-%m-%d"),
        "LOGSTRL": "<0:0:0:0>",
        "LOGSTRTI": log_started.strftime("%H:%M:%S"),
        "LOGTYPE": qm.log_type,
        "LOGUTIL": str(in_use),
        "MEDIALOG": Extent(qm.media).name if linear else "",
        "MEDIASZ": _extents_mb(qm, spanned["MEDIASZ"]),
        "QMFSSZ": "253824",
        "QMFSUSE": "11",
        "QUORUM": "",
        "RECLOG": Extent(qm.restart).name if linear else "",
        "RECSZ": _extents_mb(qm, spanned["RECSZ"]),
        "REUSESZ": _extents_mb(qm, reusable),
        "STANDBY": "NOPERMIT",
        "STARTDA": started.strftime("%Y-%m-%d"),
        "STARTTI": started.strftime("%H.%M.%S"),
        "UNICLUS": "",
    }


def qmgr_values(qm: LinuxQueueManager) -> dict[str, str]:
    return {
        "QMNAME": qm.name,
        "DESCR": "",
        "IMGINTVL": "OFF" if qm.img_interval_minutes is None else str(qm.img_interval_minutes),
        "IMGLOGLN": "OFF" if qm.img_log_length_mb is None else str(qm.img_log_length_mb),
        "IMGRCOVO": "YES",
        "IMGRCOVQ": "YES",
        "IMGSCHED": qm.img_sched,
        "LOGGEREV": "ENABLED" if qm.logger_events else "DISABLED",
    }


def _requested(text: str, found: list[Token], known: set[str], groups: dict[str, list[str]]) -> list[str]:
    names: list[str] = []
    for token in found:
        if token.value is not None and token.keyword != "TYPE":
            raise MqscSyntaxError(text[: token.end])
        if token.keyword in groups:
            names += groups[token.keyword]
        elif token.keyword in known:
            names.append(token.keyword)
        elif token.keyword != "TYPE":
            raise MqscSyntaxError(text[: token.end])
    return names


def _display_qmstatus(text: str, rest: list[Token], host: LinuxHost, qm: LinuxQueueManager) -> list[str]:
    for token in rest:
        if token.keyword == "TYPE" and token.value != "QMGR":
            raise MqscSyntaxError(text[: token.end])  # TYPE(NATIVEHA) is not modelled
    values = status_values(host, qm)
    every = sorted(LOG_ATTRIBUTES + OTHER_STATUS)
    names = _requested(text, rest, set(every) | set(STATUS_FIRST), {"ALL": every, "LOG": list(LOG_ATTRIBUTES)})
    ordered = list(STATUS_FIRST) + sorted(set(names) - set(STATUS_FIRST))
    return [STATUS_DETAILS, *pairs_lines([(n, values[n]) for n in ordered])]


def _display_qmgr(text: str, rest: list[Token], qm: LinuxQueueManager) -> list[str]:
    values = qmgr_values(qm)
    names = _requested(text, rest, set(QMGR_ATTRIBUTES) | {"QMNAME"}, {"ALL": list(QMGR_ATTRIBUTES)})
    ordered = ["QMNAME", *sorted(set(names) - {"QMNAME"})]
    return [QMGR_DETAILS, *pairs_lines([(n, values[n]) for n in ordered])]


def qstatus_values(obj: RecoverableObject) -> dict[str, str]:
    """DISPLAY QSTATUS TYPE(QUEUE) of an undamaged queue: empty, unopened, its media recovery extent its image's."""
    return {
        "QUEUE": obj.name,
        "TYPE": "QUEUE",
        "CURDEPTH": "0",
        "CURFSIZE": "1",
        "CURMAXFS": "2088960",
        "IPPROCS": "0",
        "LGETDATE": "",
        "LGETTIME": "",
        "LPUTDATE": "",
        "LPUTTIME": "",
        "MEDIALOG": Extent(obj.image_extent).name,
        "MONQ": "OFF",
        "MSGAGE": "",
        "OPPROCS": "0",
        "QTIME": " , ",
        "UNCOM": "NO",
    }


def _display_qstatus(text: str, generic: str | None, rest: list[Token], qm: LinuxQueueManager) -> Answer:
    for token in rest:
        if token.keyword == "TYPE" and token.value != "QUEUE":
            raise MqscSyntaxError(text[: token.end])  # TYPE(HANDLE) is not modelled
    if not generic:
        raise MqscSyntaxError(text)
    names = _requested(text, rest, set(QSTATUS_ATTRIBUTES), {"ALL": list(QSTATUS_ATTRIBUTES)})
    ordered = ["QUEUE", "TYPE", *sorted(set(names) or set(QSTATUS_ATTRIBUTES))]
    found = logger.matching(qm, "queue", generic)
    if not found:
        return Answer([OBJECT_NOT_FOUND.format(name=generic)], "failed")
    if "*" not in generic and found[0].damaged:
        return Answer([OBJECT_DAMAGED], "failed")
    lines: list[str] = []
    for obj in found:
        if obj.damaged:
            continue  # a generic name passes over a damaged queue without a word (as captured)
        values = qstatus_values(obj)
        lines += [QSTATUS_DETAILS, *pairs_lines([(n, values[n]) for n in ordered])]
    return Answer(lines, "ok")


@dataclass(frozen=True)
class Answer:
    lines: list[str]
    outcome: str  # "ok", "syntax", "failed"


def answer(text: str, host: LinuxHost, qm: LinuxQueueManager, at: datetime) -> Answer:
    """One command's answer, changing the queue manager when the command does."""
    try:
        found = tokens(text)
        if len(found) >= 2 and found[0].keyword in ("DIS", "DISPLAY") and found[1].keyword in ("QSTATUS", "QS"):
            return _display_qstatus(text, found[1].value, found[2:], qm)
        verb, noun, rest = _verb(text, found)
        if verb == "DISPLAY" and noun == "QMSTATUS":
            return Answer(_display_qmstatus(text, rest, host, qm), "ok")
        if verb == "DISPLAY" and noun == "QMGR":
            return Answer(_display_qmgr(text, rest, qm), "ok")
        action = _change(text, verb, noun, rest, qm, at)
    except MqscSyntaxError as exc:
        return Answer([SYNTAX_ERROR, exc.segment], "syntax")
    try:
        return Answer([action()], "ok")
    except logger.LoggerError as exc:
        template = REFUSALS.get(type(exc), f"AMQ8146E: {exc.reason}.")
        return Answer([template.format(name=exc.subject)], "failed")


def _verb(text: str, found: list[Token]) -> tuple[str, str, list[Token]]:
    if len(found) < 2 or found[0].value is not None or found[1].value is not None:
        raise MqscSyntaxError(text)
    verb = {"DIS": "DISPLAY", "DISPLAY": "DISPLAY", "SET": "SET", "RESET": "RESET"}.get(found[0].keyword)
    if verb is None:
        raise MqscSyntaxError(text[: found[0].end])
    return verb, found[1].keyword, found[2:]


def _change(
    text: str, verb: str, noun: str, rest: list[Token], qm: LinuxQueueManager, at: datetime
) -> Callable[[], str]:
    """What a SET LOG / RESET QMGR command does, checked for syntax before anything runs."""
    given = {t.keyword: t.value for t in rest}
    if len(given) != len(rest) or any(v is None for v in given.values()):
        raise MqscSyntaxError(text)
    if verb == "SET" and noun == "LOG" and set(given) == {"ARCHIVED"}:
        name = given["ARCHIVED"] or ""

        def set_log() -> str:
            logger.set_log_archived(qm, name)
            return ARCHIVED.format(name=name)

        return set_log
    if verb == "RESET" and noun == "QMGR" and given == {"TYPE": "ADVANCELOG"}:

        def advance() -> str:
            logger.advance_log(qm, at=at)
            return RESET

        return advance
    if verb == "RESET" and noun == "QMGR" and set(given) == {"TYPE", "ARCHIVED"} and given["TYPE"] == "ARCHLOG":
        name = given["ARCHIVED"] or ""

        def reset_archlog() -> str:
            logger.reset_archlog(qm, name)
            return RESET

        return reset_archlog
    raise MqscSyntaxError(text)


# --- the session ----------------------------------------------------------------------------------------------


def summary(read: int, syntax: int, failed: int) -> list[str]:
    """runmqsc's last three lines."""
    return [
        {0: "No MQSC commands read."}.get(
            read, "One MQSC command read." if read == 1 else f"{read} MQSC commands read."
        ),
        {0: "No commands have a syntax error.", 1: "One command has a syntax error."}.get(
            syntax, f"{syntax} commands have a syntax error."
        ),
        {0: "All valid MQSC commands were processed.", 1: "One valid MQSC command could not be processed."}.get(
            failed, f"{failed} valid MQSC commands could not be processed."
        ),
    ]


def runmqsc(host: LinuxHost, args: list[str], stdin: str) -> ExecResult:
    """`runmqsc QM` reading `stdin`, against `host` (changed in place)."""
    if len(args) != 1 or args[0].startswith("-"):
        usage = "Usage: runmqsc [-e] [-v] [-c] [-u UserID] [-w WaitTime [-x]] [-m LocalQMgrName] [QMgrName]\n"
        return ExecResult(RC_NOT_RUN, "", usage)
    name = args[0]
    qm = host.queue_manager(name)
    head = BANNER.format(qm=name)
    if qm is None:
        return ExecResult(RC_NOT_RUN, f"{head}{NOT_KNOWN}\n")
    if not qm.running:
        return ExecResult(RC_NOT_RUN, f"{head}{NOT_AVAILABLE}\n")
    lines: list[str] = []
    counts = {"ok": 0, "syntax": 0, "failed": 0}
    commands = read_commands(stdin)
    for number, text in enumerate(commands, start=1):
        lines.append(f"{number:6d} : {text}")
        result = answer(text, host, qm, host.now)
        lines += result.lines
        counts[result.outcome] += 1
    lines += summary(len(commands), counts["syntax"], counts["failed"])
    rc = RC_OK if counts["syntax"] == counts["failed"] == 0 else RC_SOME_FAILED
    return ExecResult(rc, head + "\n".join(lines) + "\n")
