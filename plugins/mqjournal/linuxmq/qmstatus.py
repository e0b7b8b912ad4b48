"""The answer of runmqsc to DISPLAY QMSTATUS (and DISPLAY QMGR, laid out alike): its attributes, and the log points
a plan needs.

runmqsc echoes each command as `     N : COMMAND`, answers with `AMQnnnnX:` lines, and lists attributes as
`NAME(value)`, two to a line (the second from column 44) or one alone when it is long, an empty value as `( )`
(docs/linux-interfaces.md, section 4, from real captures). Values may hold parentheses of their own (DISKLSN reads
`<0:0:27:53638>`; a replica address `host(port)`), so a value runs to the `)` that balances its `(`."""

from __future__ import annotations

import re

from mqjournal.linuxmq.extents import Extent, LogPoints

_MESSAGE = re.compile(r"^(AMQ\d{4}[IWES]):", re.MULTILINE)
_NAME = re.compile(r"[A-Z][A-Z0-9]*\(")
_ECHO = re.compile(r"^\s*\d+ : ")  # runmqsc's echo of the next command: "     2 : SET LOG ..."
STATUS_DETAILS = "AMQ8705I"
"""DISPLAY QMSTATUS's answer: Display Queue Manager Status Details."""
QMGR_DETAILS = "AMQ8408I"
"""DISPLAY QMGR's answer: Display Queue Manager details (its attributes are laid out as DISPLAY QMSTATUS's)."""
QUEUE_STATUS_DETAILS = "AMQ8450I"
"""DISPLAY QSTATUS's answer: Display queue status details."""
OBJECT_DAMAGED = "AMQ8149S"
"""IBM MQ object damaged: what DISPLAY QSTATUS of a damaged queue answers instead of its status."""


class QmStatusError(ValueError):
    """The answer is not a DISPLAY QMSTATUS answer the planner can read."""


def attributes(answer: str, details: str = STATUS_DETAILS) -> dict[str, str]:
    """Every `NAME(value)` of the answer's attribute lines (those after the `details` line: AMQ8705I for DISPLAY
    QMSTATUS, QMGR_DETAILS for DISPLAY QMGR, QUEUE_STATUS_DETAILS for DISPLAY QSTATUS), values stripped: `( )` is the
    empty string. QmStatusError when the answer has no such details (a syntax error, an unknown queue manager or
    object, a damaged one) or an attribute line does not parse."""
    ids = _MESSAGE.findall(answer)
    if details not in ids:
        said = ", ".join(ids) or "no AMQ message"
        what = {STATUS_DETAILS: "queue manager status", QMGR_DETAILS: "queue manager"}.get(details, "status")
        raise QmStatusError(f"runmqsc gave no {what} details ({said})")
    found: dict[str, str] = {}
    reading = False
    for line in answer.splitlines():
        if line.startswith(details):
            reading = True
        elif reading and line.startswith("   ") and line.strip() and not _ECHO.match(line):
            found.update(_pairs(line))
        elif line.strip():
            reading = False  # the summary ("One MQSC command read."), or the next command's echo
    return found


def _pairs(line: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    at = 0
    text = line.rstrip()
    while at < len(text):
        if text[at] == " ":
            at += 1
            continue
        match = _NAME.match(text, at)
        if match is None:
            raise QmStatusError(f"not an attribute at column {at + 1}: {line!r}")
        depth, end = 1, match.end()
        while end < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        if depth:
            raise QmStatusError(f"an attribute's value does not end: {line!r}")
        pairs[match.group()[:-1]] = text[match.end() : end - 1].strip()
        at = end
    return pairs


def log_points(found: dict[str, str]) -> LogPoints:
    """CURRLOG, RECLOG and MEDIALOG as extents; QmStatusError when one is missing or blank (a circular or replicated
    log has none: nothing of it is planned)."""
    names = {key: found.get(key, "") for key in ("CURRLOG", "RECLOG", "MEDIALOG")}
    blank = [key for key, value in names.items() if not value]
    if blank:
        kind = found.get("LOGTYPE") or "unknown"
        raise QmStatusError(f"no {', '.join(blank)} in the answer (LOGTYPE {kind}): only a linear log has them")
    try:
        return LogPoints(
            current=Extent.parse(names["CURRLOG"]),
            restart=Extent.parse(names["RECLOG"]),
            media=Extent.parse(names["MEDIALOG"]),
        )
    except ValueError as exc:  # InvalidName is a ValueError too
        raise QmStatusError(str(exc)) from exc


def queue_media_log(answer: str) -> Extent:
    """The MEDIALOG of a DISPLAY QSTATUS(q) TYPE(QUEUE) MEDIALOG answer: the oldest extent the queue's own media
    recovery needs. QmStatusError when it has none: the queue is damaged (AMQ8149S, no status shown), unknown, or
    its queue manager logs circularly (a blank MEDIALOG)."""
    if OBJECT_DAMAGED in _MESSAGE.findall(answer):
        raise QmStatusError(f"{OBJECT_DAMAGED}: the queue is damaged, and MQ shows no status of a damaged queue")
    value = attributes(answer, QUEUE_STATUS_DETAILS).get("MEDIALOG", "")
    if not value:
        raise QmStatusError("no MEDIALOG in the queue's status (a circular log has none)")
    try:
        return Extent.parse(value)
    except ValueError as exc:
        raise QmStatusError(str(exc)) from exc
