"""Parse CL command text the way the IBM i command analyzer sees it: ``[LIB/]CMD value value KWD(value) KWD('q')``.

Parameters come in keyword form, ``KWD(value ...)``, or in positional form, a bare value (``QMX/AMQA000000``,
``*SAVF``, ``'text'``) or a parenthesised list (``(A B)``) in the order the command defines. IBM's CL reference marks
each parameter "Positional n" and says how many a command takes; positional values come first, and once a keyword is
used the rest must be keywords too ("Specifying parameters in positional form", IBM i CL concepts; the parameter
tables of each command, e.g. https://www.ibm.com/docs/en/i/7.5?topic=ssw_ibm_i_75/cl/savobj.html: OBJ Positional 1,
LIB 2, DEV 3, OBJTYPE 4). The parser keeps positional values in order; the command runner maps them to keywords.

Values keep their form: a quoted string stays quoted so that a command can tell `'*ALL'` from `*ALL`, and nested lists
stay as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import overload


class ClSyntaxError(ValueError):
    """The text is not a well-formed CL command; `msg_id` is the diagnostic IBM i sends."""

    def __init__(self, msg_id: str, *tokens: str) -> None:
        self.msg_id = msg_id
        self.tokens = tokens
        super().__init__(f"{msg_id} {' '.join(tokens)}")


@dataclass(frozen=True)
class ClCommand:
    name: str
    library: str | None
    params: dict[str, list[str]]
    # Values given in positional form, in order, before any keyword; each is the list of its values.
    positional: tuple[tuple[str, ...], ...] = ()

    def values(self, keyword: str) -> list[str] | None:
        return self.params.get(keyword)

    @overload
    def single(self, keyword: str, default: str) -> str: ...
    @overload
    def single(self, keyword: str, default: None = None) -> str | None: ...

    def single(self, keyword: str, default: str | None = None) -> str | None:
        values = self.params.get(keyword)
        if values is None:
            return default
        if len(values) != 1:
            # More values than the parameter takes: reported as a value not valid for it (CPD0084; the analyzer's
            # own message for a list given to a single-value parameter was not found, so this is an approximation).
            raise ClSyntaxError("CPD0084", "", keyword, " ".join(values))
        return values[0]


def unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def parse(text: str) -> ClCommand:
    pos = 0
    length = len(text)

    def skip_blanks() -> None:
        nonlocal pos
        while pos < length and text[pos] in " \t\r\n":
            pos += 1

    def word() -> str:
        nonlocal pos
        start = pos
        while pos < length and text[pos] not in " \t\r\n()'":
            pos += 1
        return text[start:pos]

    skip_blanks()
    head = word().upper()
    if not head:
        raise ClSyntaxError("CPD0020")
    library, _, name = head.rpartition("/")
    params: dict[str, list[str]] = {}
    positional: list[tuple[str, ...]] = []
    while True:
        skip_blanks()
        if pos >= length:
            break
        if text[pos] == "(":
            # A positional list, e.g. SAVOBJ (AMQA000001 AMQA000002) QMX *SAVF.
            if params:
                raise ClSyntaxError("CPD0013", text[pos : pos + 10])
            values, pos = _values(text, pos + 1)
            positional.append(tuple(values))
            continue
        start = pos
        keyword = word().upper()
        if pos < length and text[pos] == "(" and keyword:
            pos += 1
            values, pos = _values(text, pos)
            if keyword in params:
                raise ClSyntaxError("CPD0012", keyword)
            params[keyword] = values
            continue
        # A positional value: a bare word, or a quoted string (with what follows it up to a blank).
        pos = start
        value, pos = _positional_value(text, pos)
        if params:
            # Positional values must come before the first keyword.
            raise ClSyntaxError("CPD0013", value)
        positional.append((value,))
    return ClCommand(name=name, library=library or None, params=params, positional=tuple(positional))


def _quoted_end(text: str, pos: int) -> int:
    """The position after the quoted string that opens at `pos` ('' inside it is a quote); CPD0010 if unclosed."""
    end = pos + 1
    while True:
        end = text.find("'", end)
        if end == -1:
            raise ClSyntaxError("CPD0010")
        if text.startswith("''", end):
            end += 2
            continue
        return end + 1


def _positional_value(text: str, pos: int) -> tuple[str, int]:
    """One positional value up to the next blank: letters upper-cased outside quotes, quotes kept."""
    out: list[str] = []
    length = len(text)
    while pos < length and text[pos] not in " \t\r\n":
        char = text[pos]
        if char == "'":
            end = _quoted_end(text, pos)
            out.append(text[pos:end])
            pos = end
            continue
        if char in "()":
            raise ClSyntaxError("CPD0013", text[pos : pos + 10])
        out.append(char.upper())
        pos += 1
    return "".join(out), pos


def _values(text: str, pos: int) -> tuple[list[str], int]:
    """Read blank-separated values up to the matching ')'; returns the values and the position after it."""
    values: list[str] = []
    current: list[str] = []
    depth = 0
    length = len(text)
    while pos < length:
        char = text[pos]
        if char == "'":
            end = _quoted_end(text, pos)
            current.append(text[pos:end])
            pos = end
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                if current:
                    values.append("".join(current))
                return values, pos + 1
            depth -= 1
        if char in " \t" and depth == 0:
            if current:
                values.append("".join(current))
                current = []
        else:
            current.append(char.upper() if char not in "'" else char)
        pos += 1
    raise ClSyntaxError("CPD0011")
