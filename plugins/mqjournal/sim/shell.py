"""The PASE shell an SSH session lands in: split a command line and run the utilities IBM i has.

Supported: ``system [-flags] CL``, ``db2 [-flags] SQL``, ``uname``, ``hostname``, ``echo``, ``true``/``false``,
joined by ``;``, ``&&`` or ``||``. Anything else is "not found" with status 127, as bash says it.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from mqjournal.sim.protocol import ExecResult

Utility = Callable[[list[str]], ExecResult]

_OPERATORS = {";", "&&", "||"}


def split(line: str) -> list[tuple[str, list[str]]] | None:
    """[(operator before, argv), ...]; None when the line does not parse (an unterminated quote)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    commands: list[tuple[str, list[str]]] = []
    operator, argv = ";", []
    for token in tokens:
        if token in _OPERATORS:
            if argv:
                commands.append((operator, argv))
            operator, argv = token, []
        elif token and set(token) <= set(";&|"):
            return None  # a pipe or background job: not something our client sends
        else:
            argv.append(token)
    if argv:
        commands.append((operator, argv))
    return commands


def run_line(line: str, utilities: dict[str, Utility]) -> ExecResult:
    commands = split(line)
    if commands is None:
        return ExecResult(2, "", "bash: syntax error in command line\n")
    out: list[str] = []
    err: list[str] = []
    status = 0
    for operator, argv in commands:
        if (operator == "&&" and status != 0) or (operator == "||" and status == 0):
            continue
        program = argv[0].rsplit("/", 1)[-1]
        utility = utilities.get(program)
        if utility is None:
            result = ExecResult(127, "", f"bash: {argv[0]}: command not found\n")
        else:
            result = utility(argv[1:])
        out.append(result.stdout)
        err.append(result.stderr)
        status = result.exit_status
    return ExecResult(status, "".join(out), "".join(err))


def system_arguments(args: list[str]) -> tuple[set[str], str]:
    """`system` flags (-b -e -i -k -K -n -p -q -s -v ...) and the CL text that follows them."""
    flags: set[str] = set()
    rest = list(args)
    while rest and rest[0].startswith("-") and len(rest[0]) > 1:
        flags.update(rest.pop(0)[1:])
    return flags, " ".join(rest)
