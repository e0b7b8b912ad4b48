"""Reading a message's replacement data by the layout its message description declares on the partition.

mqmessages.LAYOUTS is a guess (IBM MQ does not publish AMQMSG's FMT fields). The partition itself declares each
message's substitution variables: QSYS2.MESSAGE_FILE_DATA returns, per message, MESSAGE_DATA_COUNT and MESSAGE_DATA,
"a string containing all the message data fields, also referred to as substitution variables"
(https://www.ibm.com/docs/en/i/7.6.0?topic=services-message-file-data-view). So the client reads those declarations
and decodes by them; what each &n means stays IBM's documented meaning (mqmessages.py), only where it sits and how it
is encoded come from the partition.

The exact spelling of MESSAGE_DATA is described on that page below its table, which was not retrieved: `parse_declared`
reads it leniently (each field a type such as ``*CHAR`` followed by its length, decimal positions for ``*DEC`` and an
optional ``*VARY n``; ``&n`` labels, parentheses and commas are ignored) and cross-checks the number of fields with
MESSAGE_DATA_COUNT. A string it cannot read counts as "not read", never as a layout.

A message whose data does not decode (a declared type mqjournal cannot read where it needs a time or a name, data
shorter than declared, a time outside 1990..now+1 day, a name that is not an IBM i object name) is *undecodable*: the
collector keeps it with its raw data and says which DSPMSGD shows its format; it never moves a recovery point.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from mqjournal import mqmessages
from mqjournal.mqmessages import Field, Value
from mqjournal.names import OBJECT_NAME_PATTERN

# Where each message's description lives. QCPFMSG is the IBM i message file in QSYS; AMQMSG in QMQM is IBM MQ for
# IBM i's (assumed: the name the product's messages are sent from, not read from an IBM page here).
MESSAGE_FILES: Final[dict[str, tuple[str, str]]] = {
    "AMQ7460": ("QMQM", "AMQMSG"),
    "AMQ7462": ("QMQM", "AMQMSG"),
    "AMQ7432": ("QMQM", "AMQMSG"),
    "AMQ7472": ("QMQM", "AMQMSG"),
    "CPI70E3": ("QSYS", "QCPFMSG"),
}

# What mqjournal reads of each message: the meaning of &n (1-based) as IBM documents it, and what it must be.
_TIME, _NAME, _TEXT = "time", "name", "text"
ROLES: Final[dict[str, dict[str, tuple[int, str]]]] = {
    "AMQ7460": {"at": (3, _TIME), "receiver": (4, _NAME), "library": (5, _NAME)},
    "AMQ7462": {"at": (3, _TIME), "receiver": (4, _NAME), "library": (5, _NAME)},
    "AMQ7432": {"at": (3, _TIME)},
    "AMQ7472": {"object": (3, _TEXT), "object_type": (4, _TEXT)},
    "CPI70E3": {"journal": (1, _NAME), "library": (2, _NAME)},
}

EARLIEST: Final = datetime(1990, 1, 1, tzinfo=UTC)  # no MQ journal entry is older than IBM i journaling of MQ
_TYPES = ("*CHAR", "*QTDCHAR", "*HEX", "*BIN", "*UBIN", "*DEC", "*DTS")
_OBJECT_NAME = re.compile(rf"^{OBJECT_NAME_PATTERN}$")
_SEPARATORS = re.compile(r"[\s(),]+")


def dspmsgd(msg_id: str) -> str:
    """The CL command that shows the message's description with its field formats (F10 in the display)."""
    library, file = MESSAGE_FILES[msg_id]
    return f"DSPMSGD RANGE({msg_id}) MSGF({library}/{file})"


def parse_declared(message_data: str | None, count: int | None) -> tuple[Field, ...] | None:
    """The fields MESSAGE_DATA declares, in order; None when the string cannot be read or disagrees with `count`."""
    if count == 0 and not (message_data or "").strip():
        return ()
    words = [w for w in _SEPARATORS.split((message_data or "").upper()) if w and not w.startswith("&")]
    fields: list[Field] = []
    i = 0
    while i < len(words):
        kind = words[i]
        if kind not in _TYPES or i + 1 >= len(words) or not words[i + 1].isdigit():
            return None
        length, i = int(words[i + 1]), i + 2
        decimals = vary = 0
        if kind == "*DEC" and i < len(words) and words[i].isdigit():
            decimals, i = int(words[i]), i + 1
        if i + 1 < len(words) and words[i] == "*VARY" and words[i + 1] in ("2", "4"):
            vary, i = int(words[i + 1]), i + 2
        fields.append(Field(kind, length, decimals=decimals, vary=vary))  # type: ignore[arg-type]
    if count is not None and count != len(fields):
        return None
    return tuple(fields)


def same_layout(declared: tuple[Field, ...], known: tuple[Field, ...]) -> bool:
    return [f.fmt() for f in declared] == [f.fmt() for f in known]


@dataclass(frozen=True)
class Reading:
    """A message's replacement data read for what mqjournal needs of it: `values` by role, or why not."""

    msg_id: str
    values: dict[str, Value] | None
    problem: str | None = None

    @property
    def decoded(self) -> bool:
        return self.values is not None


def read(
    msg_id: str, tokens_hex: str | None, fields: tuple[Field, ...] | None = None, *, not_after: datetime | None = None
) -> Reading:
    """Read `msg_id`'s data by `fields` (the declared layout; None: mqjournal's own guess) and check each value."""
    layout = mqmessages.LAYOUTS[msg_id] if fields is None else fields
    roles = ROLES[msg_id]
    if not tokens_hex:
        return Reading(msg_id, None, "no replacement data")
    if (problem := layout_problem(msg_id, layout)) is not None:
        return Reading(msg_id, None, problem)
    try:
        values = mqmessages.decode(layout, binascii.unhexlify(tokens_hex.strip()))
    except (binascii.Error, ValueError, OverflowError, UnicodeDecodeError) as e:
        return Reading(msg_id, None, f"the data does not decode by {_fmts(layout)}: {e}")
    if values is None:
        return Reading(msg_id, None, f"the data is shorter than {_fmts(layout)}")
    found: dict[str, Value] = {}
    latest = (not_after or datetime.now(UTC)) + timedelta(days=1)
    for role, (n, kind) in roles.items():
        v = values[n - 1]
        if kind == _TIME and not (isinstance(v, datetime) and EARLIEST <= v <= latest):
            return Reading(msg_id, None, f"&{n} ({role}) reads {v}, not a time between 1990 and now")
        if kind == _NAME and not (isinstance(v, str) and (_OBJECT_NAME.match(v) or (role == "receiver" and _stars(v)))):
            return Reading(msg_id, None, f"&{n} ({role}) reads {v!r}, not an IBM i object name")
        if kind == _TEXT and not (isinstance(v, str) and v and v.isprintable()):
            return Reading(msg_id, None, f"&{n} ({role}) reads {v!r}, not a name")
        found[role] = v
    return Reading(msg_id, found)


def layout_problem(msg_id: str, layout: tuple[Field, ...]) -> str | None:
    """Why `layout` cannot give what mqjournal reads of `msg_id` (a field missing, or of a type that cannot hold a
    time or a name), or None: its messages decode by it, value by value."""
    for role, (n, kind) in ROLES[msg_id].items():
        if n > len(layout):
            return f"its description declares {len(layout)} fields, &{n} ({role}) is not one"
        declared = layout[n - 1]
        wanted = ("*DTS",) if kind == _TIME else mqmessages.CHARACTER_TYPES
        if declared.type not in wanted:
            return f"&{n} ({role}) is declared {declared.fmt()}, not {' or '.join(wanted)}"
    return None


def _stars(value: str) -> bool:
    return bool(value) and set(value) == {"*"}


def _fmts(layout: tuple[Field, ...]) -> str:
    return "(" + ") (".join(f.fmt() for f in layout) + ")"


@dataclass(frozen=True)
class Declared:
    """What the partition declares for one message: its fields, or None with why they were not read."""

    msg_id: str
    fields: tuple[Field, ...] | None
    note: str

    @property
    def layout(self) -> tuple[Field, ...] | None:
        """The layout to decode by: the declared one; None (mqjournal's guess, values checked) when not read."""
        return self.fields

    def shown(self) -> str:
        return _fmts(self.fields) if self.fields is not None else self.note


def declarations(rows: list[dict] | None, why_not: str = "") -> dict[str, Declared]:
    """Per message ID mqjournal reads, its declaration from QSYS2.MESSAGE_FILE_DATA rows (None: not read)."""
    found: dict[str, Declared] = {}
    by_id = {
        (str(r.get("MESSAGE_FILE_LIBRARY", "")).strip(), str(r.get("MESSAGE_FILE", "")).strip(), r.get("MESSAGE_ID")): r
        for r in rows or []
    }
    for msg_id, (library, file) in MESSAGE_FILES.items():
        row = by_id.get((library, file, msg_id))
        if rows is None:
            found[msg_id] = Declared(msg_id, None, f"not read ({why_not or 'QSYS2.MESSAGE_FILE_DATA unavailable'})")
            continue
        if row is None:
            found[msg_id] = Declared(msg_id, None, f"not read (no description in {library}/{file})")
            continue
        count = row.get("MESSAGE_DATA_COUNT")
        fields = parse_declared(row.get("MESSAGE_DATA"), None if count is None else int(count))
        note = "" if fields is not None else f"not read (MESSAGE_DATA {row.get('MESSAGE_DATA')!r} not understood)"
        found[msg_id] = Declared(msg_id, fields, note)
    return found
