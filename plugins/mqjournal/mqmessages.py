"""The replacement data (message tokens) of the IBM i and MQ messages mqjournal reads, per message ID.

IBM i keeps a message as its ID plus replacement data: a byte string laid out by the message description's FMT
fields (*CHAR n, *BIN 4, *DTS ...) and the same in every language. The first-level text is made from it when someone
looks, in the job's language, date format and separators. QSYS2.MESSAGE_QUEUE_INFO shows those bytes as
MESSAGE_TOKENS; mqjournal reads receivers, times and objects from them, never from the wording of MESSAGE_TEXT.

Layouts (what each field holds is the meaning IBM documents; the FMT of each field is ASSUMED: IBM MQ does not publish
the message descriptions of QMQM/AMQMSG, and QCPFMSG's CPI70E3 description was not retrieved. Check them on a real
partition with ``DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG)`` (F10: the field formats) and
``DSPMSGD RANGE(CPI70E3) MSGF(QSYS/QCPFMSG)``.):

=========  ====================================================================  ======================================
message    fields (&n: FMT)                                                      status
=========  ====================================================================  ======================================
AMQ7460    &1 *BIN 4, &2 *BIN 4 (MQ's numeric inserts, unused), &3 *DTS 8        meaning: IBM MQ "Journal management on
           (time of the startup recovery entry), &4 *CHAR 10 (the receiver       IBM i" (q021850_); FMT assumed
           holding it, asterisks once it is gone), &5 *CHAR 10 (its library)
AMQ7462    as AMQ7460; &3 is the oldest media recovery entry                     as AMQ7460
AMQ7432    &1 *BIN 4, &2 *BIN 4, &3 *DTS 8 (time of the journal entry the        meaning: same page; FMT assumed
           recovery pass needs), &4 *CHAR 48 (queue manager name)
AMQ7472    &1 *BIN 4, &2 *BIN 4, &3 *CHAR 48 (object name), &4 *CHAR 10 (object  meaning: "Object <name>, type <type>
           type as MQ prints it, e.g. QLOCAL or LCLQ)                            damaged."; FMT assumed
CPI70E3    &1 *CHAR 10 (journal), &2 *CHAR 10 (journal library)                  first-level text has no inserts
                                                                                 (rzakiwrkjrnmsg.htm); data assumed,
                                                                                 like CPI7019's "Journal &1 ..."
=========  ====================================================================  ======================================

MQ's two numeric inserts first and its strings after follows MQ's insert convention (ArithInsert1/2, then
CommentInsert1-3), which real MQ log lines show; on IBM i their FMT is not published.

*CHAR fields are EBCDIC (CCSID 37 here): the characters of IBM i object names A-Z, 0-9 and _ are the same in every
EBCDIC CCSID; $ # @ are not, and a name with them may be misread under another job CCSID (assumed CCSID 37).
*BIN 4 is a big-endian signed integer (IBM i is big-endian: verified by the API docs' BINARY(4) convention).
*DTS 8 is the system time stamp: an unsigned 64-bit count whose bit 51 (counting from 0 at the left) ticks every
microsecond, so microseconds = value >> 12, from the epoch 1928-08-23 12:03:06.314752 UTC (assumed: IBM MI
"Materialize Time of Day Clock" / QWCCVTDT *DTS notes, not retrieved here).
"""

from __future__ import annotations

import binascii
import struct
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Literal

CCSID_CODEC: Final = "cp037"
DTS_EPOCH: Final = datetime(1928, 8, 23, 12, 3, 6, 314752, tzinfo=UTC)
STARS: Final = "*" * 10

FieldType = Literal["*CHAR", "*QTDCHAR", "*HEX", "*BIN", "*UBIN", "*DEC", "*DTS"]
CHARACTER_TYPES: Final = ("*CHAR", "*QTDCHAR")


@dataclass(frozen=True)
class Field:
    """One substitution variable as a message description declares it (ADDMSGD FMT): type, length, decimal
    positions (*DEC) and the bytes of its length prefix when *VARY (0: fixed length)."""

    type: FieldType
    length: int
    meaning: str = ""
    decimals: int = 0
    vary: int = 0

    @property
    def size(self) -> int:
        """Bytes the field takes when fixed; a *DEC is packed (two digits a byte and the sign)."""
        return self.length // 2 + 1 if self.type == "*DEC" else self.length

    def fmt(self) -> str:
        """As DSPMSGD and ADDMSGD write it, e.g. ``*CHAR 10``, ``*DEC 7 2``, ``*CHAR 48 *VARY 2``."""
        text = f"{self.type} {self.length}" + (f" {self.decimals}" if self.type == "*DEC" else "")
        return text + (f" *VARY {self.vary}" if self.vary else "")


def _mq(*fields: Field) -> tuple[Field, ...]:
    return (Field("*BIN", 4, "numeric insert 1 (unused)"), Field("*BIN", 4, "numeric insert 2 (unused)"), *fields)


_POINT = _mq(Field("*DTS", 8, "time of the entry"), Field("*CHAR", 10, "receiver"), Field("*CHAR", 10, "library"))

LAYOUTS: Final[dict[str, tuple[Field, ...]]] = {
    "AMQ7460": _POINT,
    "AMQ7462": _POINT,
    "AMQ7432": _mq(Field("*DTS", 8, "time of the entry needed"), Field("*CHAR", 48, "queue manager")),
    "AMQ7472": _mq(Field("*CHAR", 48, "object"), Field("*CHAR", 10, "object type")),
    "CPI70E3": (Field("*CHAR", 10, "journal"), Field("*CHAR", 10, "journal library")),
}

Value = str | int | datetime | None


# --- *DTS ---------------------------------------------------------------------------------------------------------


def dts_encode(moment: datetime) -> bytes:
    if moment.tzinfo is None:
        raise ValueError("a *DTS needs an aware time")
    delta = moment.astimezone(UTC) - DTS_EPOCH
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return struct.pack(">Q", micros << 12)


def dts_decode(data: bytes) -> datetime:
    (value,) = struct.unpack(">Q", data)
    return DTS_EPOCH + timedelta(microseconds=value >> 12)


# --- whole replacement data ---------------------------------------------------------------------------------------


def encode(fields: tuple[Field, ...], values: tuple[Value, ...]) -> bytes:
    """The replacement data for `values`, field by field (a missing value: blanks, zero, or a zero time stamp)."""
    out = bytearray()
    for i, f in enumerate(fields):
        v = values[i] if i < len(values) else None
        if f.type in CHARACTER_TYPES or f.type == "*HEX":
            text = "" if v is None else (v.isoformat(sep="-") if isinstance(v, datetime) else str(v))
            raw = text[: f.length].encode(CCSID_CODEC) if f.type != "*HEX" else bytes.fromhex(text)[: f.length]
            out += (
                struct.pack(">I" if f.vary == 4 else ">H", len(raw)) + raw if f.vary else raw.ljust(f.length, b"\x40")
            )
        elif f.type in ("*BIN", "*UBIN"):
            if isinstance(v, datetime):
                raise TypeError(f"the {f.type} field {f.meaning!r} takes a number, not a time")
            out += int(v or 0).to_bytes(f.length, "big", signed=f.type == "*BIN")
        elif f.type == "*DEC":
            if isinstance(v, datetime):
                raise TypeError(f"the *DEC field {f.meaning!r} takes a number, not a time")
            out += _packed(int(v or 0), f.size)
        elif isinstance(v, datetime):
            out += dts_encode(v)
        else:
            out += bytes(8)
    return bytes(out)


def _packed(number: int, size: int) -> bytes:
    digits = str(abs(number)).rjust(2 * size - 1, "0")
    nibbles = [int(d) for d in digits] + [0xD if number < 0 else 0xF]
    return bytes(nibbles[i] << 4 | nibbles[i + 1] for i in range(0, len(nibbles), 2))


def _unpacked(chunk: bytes, decimals: int) -> int | str:
    nibbles = [n for b in chunk for n in (b >> 4, b & 0xF)]
    if any(n > 9 for n in nibbles[:-1]) or nibbles[-1] < 0xA:
        raise ValueError("not packed decimal")
    number = int("".join(str(n) for n in nibbles[:-1]) or "0")
    number = -number if nibbles[-1] in (0xB, 0xD) else number
    return number if decimals == 0 else f"{number / 10**decimals:.{decimals}f}"


def decode(fields: tuple[Field, ...], data: bytes) -> tuple[Value, ...] | None:
    """The field values of `data` laid out by `fields`; None when it is shorter than the layout says."""
    values: list[Value] = []
    at = 0
    for f in fields:
        size = f.size
        if f.vary:
            if at + f.vary > len(data):
                return None
            size = int.from_bytes(data[at : at + f.vary], "big")
            at += f.vary
        if at + size > len(data):
            return None
        chunk = data[at : at + size]
        at += size
        if f.type in CHARACTER_TYPES:
            values.append(chunk.decode(CCSID_CODEC).rstrip())
        elif f.type == "*HEX":
            values.append(chunk.hex().upper())
        elif f.type in ("*BIN", "*UBIN"):
            values.append(int.from_bytes(chunk, "big", signed=f.type == "*BIN"))
        elif f.type == "*DEC":
            values.append(_unpacked(chunk, f.decimals))
        else:
            values.append(dts_decode(chunk))
    return tuple(values)


def tokens_of(msg_id: str | None, tokens_hex: str | None) -> tuple[Value, ...] | None:
    """The decoded fields of a message whose layout is known; None when unknown, absent or malformed."""
    fields = LAYOUTS.get(msg_id or "")
    if fields is None or not tokens_hex:
        return None
    try:
        data = binascii.unhexlify(tokens_hex.strip())
    except (binascii.Error, ValueError):
        return None
    try:
        return decode(fields, data)
    except (UnicodeDecodeError, struct.error, OverflowError, ValueError):
        return None


# --- what mqjournal reads -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PointTokens:
    """AMQ7460 / AMQ7462: the entry's time and the receiver holding it (None: asterisks, the receiver is gone)."""

    at: datetime
    receiver: str | None
    library: str


def recovery_point(msg_id: str, tokens_hex: str | None) -> PointTokens | None:
    if msg_id not in ("AMQ7460", "AMQ7462"):
        raise ValueError(f"{msg_id} is not a recovery point message")
    values = tokens_of(msg_id, tokens_hex)
    if values is None:
        return None
    _, _, at, receiver, library = values
    assert isinstance(at, datetime) and isinstance(receiver, str) and isinstance(library, str)
    name = None if not receiver or set(receiver) == {"*"} else receiver
    return PointTokens(at=at, receiver=name, library=library)


def journal_of(tokens_hex: str | None) -> tuple[str, str] | None:
    """CPI70E3: (journal, library) whose system-managed change could not attach a new receiver."""
    values = tokens_of("CPI70E3", tokens_hex)
    if values is None or not values[0]:
        return None
    return str(values[0]), str(values[1])
