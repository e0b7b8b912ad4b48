"""The YAML files an admin writes (the fleet file, the policy file), read so that a syntax error names the file it is
in, the line and column, and what YAML found there: the admin who edited one of them is sent back to that one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mqjournal.errors import MqJournalError


class NotValidYaml(MqJournalError, ValueError):
    """A fleet or policy file YAML cannot parse; nothing was read from it."""


def read_yaml(path: Path, what: str) -> Any:
    """The document in `path` (`what`: "fleet file", "policy file"); NotValidYaml on a syntax error, OSError when the
    file cannot be read."""
    text = path.read_text(encoding="utf-8")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise NotValidYaml(
            f"{what} {path}", f"not valid YAML: {_where(exc)}", "fix the file and run the command again"
        ) from None


def _where(exc: yaml.YAMLError) -> str:
    """`line 2, column 22: mapping values are not allowed here`, counted from 1 as an editor counts."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None or problem is None:
        return " ".join(str(exc).split())  # a reader error: an undecodable character, already with its position
    where = f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and start is not None and start.line != mark.line:
        # An unclosed bracket or quote is reported where the file ends: where it opened is the line to look at.
        where += f" ({context} that starts at line {start.line + 1}, column {start.column + 1})"
    return where
