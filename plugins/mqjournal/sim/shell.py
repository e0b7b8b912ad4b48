"""The PASE shell an SSH session lands in, and Qshell behind `qsh -c`: split a command line, run the utilities.

An SSH exec request runs in the user's PASE shell: /QOpenSys/usr/bin/bsh unless QSYS2.SET_PASE_SHELL_INFO set
another ("If it is not set it will use /QOpenSys/usr/bin/bsh instead", IBM i SQL services, SET_PASE_SHELL_INFO,
ibm.com ssw_ibm_i_73 rzajq/rzajqprocsetpaseshellinfo.htm). PASE has `system`, `uname`, `hostname`, `echo`, `cat`,
`true`/`false` and /QOpenSys/usr/bin/qsh, but no `db2`: that is a Qshell utility (QSYS/QZDFMDB2), reached as
``qsh -c "db2 ..."`` (kadler, "Calling QSH utilities from PASE", 2018), or as a bare `db2` once an admin linked
/QOpenSys/usr/bin/db2 to qsh. Commands join with ``;``, ``&&`` or ``||``, in both shells (POSIX sh rules).

A command the shell cannot find:
- in Qshell: "qsh: 001-0019 Error found searching for command NAME. No such path or directory." on stderr, exit
  status 127 (a real capture: codefori/vscode-ibmi issue #3008, `qsh -c "system ..."` with a PATH lacking /usr/bin);
- in PASE bsh: "bsh: NAME: not found." on stderr, exit status 127. ASSUMED: no capture of bsh's message was found;
  this is the System V Bourne shell's "name: not found" with AIX's program prefix and period. The client does not
  rely on the wording (ibmi/db2out.runner_missing takes the exit status 126/127 or the words "not found").
"""

from __future__ import annotations

from collections.abc import Callable

from mqjournal.sim.protocol import ExecResult

Utility = Callable[[list[str]], ExecResult]

_OPERATORS = {";", "&&", "||"}
_BLANKS = " \t"
_NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
_NAME_CHARS = _NAME_START + "0123456789"


class _Unsupported(ValueError):
    """Shell syntax the simulated shells refuse: an unterminated quote, a pipe, `&`, a command substitution."""


def _expand(line: str, i: int) -> tuple[str, int]:
    """`$NAME` or `${NAME}` at line[i] (the `$`): the variable's value, and where the word goes on. The simulated
    sessions have no variables set, so a name expands to nothing, as an unset variable does in sh: a statement
    whose `$` was left outside single quotes loses text, as it would on the partition. A `$` before anything else
    stays a `$`."""
    if line.startswith("$(", i):
        raise _Unsupported("command substitution")
    if line.startswith("${", i):
        close = line.find("}", i)
        if close < 0:
            raise _Unsupported("unterminated ${")
        return "", close + 1
    j = i + 1
    if j < len(line) and line[j] in _NAME_START:
        while j < len(line) and line[j] in _NAME_CHARS:
            j += 1
        return "", j
    if j < len(line) and line[j] in "0123456789?#$!*@-":
        return "", j + 1  # special parameters: none are set in a fresh -c shell that matters here
    return "$", j


def _tokens(line: str) -> list[tuple[str, bool]]:
    """POSIX sh token recognition (XCU 2.2-2.3) for what a command line of ours can hold: blanks, '...' (all
    literal), "..." (backslash escapes only $ ` " \\ and newline; $ expands), backslash outside quotes, and the
    operators ; && ||. (word, is_operator) pairs: a quoted `;` is a word, never an operator."""
    tokens: list[tuple[str, bool]] = []
    word: list[str] = []
    in_word = False
    i = 0
    while i < len(line):
        c = line[i]
        if c in _BLANKS:
            if in_word:
                tokens.append(("".join(word), False))
                word, in_word = [], False
            i += 1
        elif c == ";" or line.startswith(("&&", "||"), i):
            if in_word:
                tokens.append(("".join(word), False))
                word, in_word = [], False
            op = ";" if c == ";" else line[i : i + 2]
            tokens.append((op, True))
            i += len(op)
        elif c in "|&`<>()":
            raise _Unsupported(c)  # pipes, background jobs, redirection, subshells: never sent by mqjournal
        elif c == "'":
            close = line.find("'", i + 1)
            if close < 0:
                raise _Unsupported("unterminated '")
            word.append(line[i + 1 : close])
            in_word, i = True, close + 1
        elif c == '"':
            i += 1
            while True:
                if i >= len(line):
                    raise _Unsupported('unterminated "')
                d = line[i]
                if d == '"':
                    i += 1
                    break
                if d == "\\" and i + 1 < len(line) and line[i + 1] in '$`"\\':
                    word.append(line[i + 1])
                    i += 2
                elif d == "$":
                    text, i = _expand(line, i)
                    word.append(text)
                elif d == "`":
                    raise _Unsupported("command substitution")
                else:
                    word.append(d)
                    i += 1
            in_word = True
        elif c == "\\":
            if i + 1 < len(line):
                word.append(line[i + 1])
            i += 2
            in_word = True
        elif c == "$":
            text, i = _expand(line, i)
            word.append(text)
            # An unquoted expansion to nothing makes no word (field splitting drops it), unless other text joins it.
            in_word = in_word or bool(text)
        else:
            word.append(c)
            in_word, i = True, i + 1
    if in_word:
        tokens.append(("".join(word), False))
    return tokens


def split(line: str) -> list[tuple[str, list[str]]] | None:
    """[(operator before, argv), ...], by POSIX sh rules as both bsh and Qshell apply them; None when the line
    does not parse or uses syntax the simulated shells do not have (pipes, redirection, substitution)."""
    try:
        tokens = _tokens(line)
    except _Unsupported:
        return None
    commands: list[tuple[str, list[str]]] = []
    operator = ";"
    argv: list[str] = []
    for token, is_operator in tokens:
        if is_operator:
            if argv:
                commands.append((operator, argv))
            operator, argv = token, []
        else:
            argv.append(token)
    if argv:
        commands.append((operator, argv))
    return commands


def bsh_not_found(name: str) -> ExecResult:
    return ExecResult(127, "", f"bsh: {name}: not found.\n")


def qsh_not_found(name: str) -> ExecResult:
    return ExecResult(127, "", f"qsh: 001-0019 Error found searching for command {name}. No such path or directory.\n")


def run_line(
    line: str, utilities: dict[str, Utility], not_found: Callable[[str], ExecResult] = bsh_not_found
) -> ExecResult:
    commands = split(line)
    if commands is None:
        return ExecResult(2, "", "bsh: syntax error in command line\n")
    out: list[str] = []
    err: list[str] = []
    status = 0
    for operator, argv in commands:
        if (operator == "&&" and status != 0) or (operator == "||" and status == 0):
            continue
        # A program installed outside the PATH (an RPM's, by its full path) is found only by that path.
        utility = utilities.get(argv[0]) if argv[0].startswith("/") else None
        utility = utility or utilities.get(argv[0].rsplit("/", 1)[-1])
        result = not_found(argv[0]) if utility is None else utility(argv[1:])
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


def qsh(utilities: dict[str, Utility]) -> Utility:
    """/QOpenSys/usr/bin/qsh: ``qsh -c COMMAND`` runs COMMAND in Qshell, whose own utilities are `utilities`.

    Qshell parses COMMAND with POSIX sh rules (quotes, `;`, `&&`, `||`): the same `split` as the PASE shell. Its
    exit status is the last command's (0 success, 127 a command not found: IBM's qsh page, ssw_ibm_i_71
    rzahz/rzahzqsh.htm, and the capture in vscode-ibmi issue #3008)."""

    def run(args: list[str]) -> ExecResult:
        if not args:
            return ExecResult(0)  # an interactive Qshell meeting an empty stdin
        if args[0] != "-c" or len(args) < 2:
            return ExecResult(1, "", f"qsh: 001-0003 Option {args[0]} not valid.\n")
        return run_line(args[1], utilities, not_found=qsh_not_found)

    return run
