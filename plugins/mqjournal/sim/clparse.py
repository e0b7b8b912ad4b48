"""Parse CL command text the way the IBM i command analyzer sees it: ``[LIB/]CMD KWD(value value) KWD('quoted')``.

Only keyword parameters are accepted (the planner never relies on positional ones). Values keep their form:
a quoted string stays quoted so that a command can tell `'*ALL'` from `*ALL`, and nested lists stay as text.
"""

from __future__ import annotations

from dataclasses import dataclass


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

    def values(self, keyword: str) -> list[str] | None:
        return self.params.get(keyword)

    def single(self, keyword: str, default: str | None = None) -> str | None:
        values = self.params.get(keyword)
        if values is None:
            return default
        if len(values) != 1:
            raise ClSyntaxError("CPD0074", keyword)
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
    while True:
        skip_blanks()
        if pos >= length:
            break
        keyword = word().upper()
        if not keyword or pos >= length or text[pos] != "(":
            # A positional value, or a keyword without its parenthesis.
            raise ClSyntaxError("CPD0013", keyword or text[pos:pos + 10])
        pos += 1
        values, pos = _values(text, pos)
        if keyword in params:
            raise ClSyntaxError("CPD0012", keyword)
        params[keyword] = values
    return ClCommand(name=name, library=library or None, params=params)


def _values(text: str, pos: int) -> tuple[list[str], int]:
    """Read blank-separated values up to the matching ')'; returns the values and the position after it."""
    values: list[str] = []
    current: list[str] = []
    depth = 0
    length = len(text)
    while pos < length:
        char = text[pos]
        if char == "'":
            end = pos + 1
            while True:
                end = text.find("'", end)
                if end == -1:
                    raise ClSyntaxError("CPD0010")
                if end + 1 < length and text[end + 1] == "'":
                    end += 2
                    continue
                break
            current.append(text[pos:end + 1])
            pos = end + 1
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
