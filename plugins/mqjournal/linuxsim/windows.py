"""A simulated Windows MQ host's answers: the command line Win32-OpenSSH hands to `cmd.exe /c`, answered for a
`LinuxHost` model whose queue managers keep data and log under `C:\\ProgramData\\IBM\\MQ` (docs/windows-interfaces.md).

cmd.exe (verified: the `/c` quote rule in sshd's own code and cmd's help, docs section 1): sshd wraps the command in
one more pair of quotes, which cmd.exe strips, so the line is parsed as sent. `%NAME%` is expanded from the session's
variables wherever it stands, even inside quotes (a name that is not set stays as written); `&`, `|`, `<`, `>` and `^`
outside quotes would start or redirect another command: the simulator refuses them (exit 255, SIMPLIFICATION: cmd.exe
would run them), since mqjournal never sends them. A program is found by its full path, case-insensitively; a name
without a path that is no built-in is `'x' is not recognized as an internal or external command, operable program or
batch file.` (exit 9009), a path whose directory does not exist `The system cannot find the path specified.` (exit 3).
Arguments are split as the C runtime splits them (quotes group, and are removed).

Answers (CR LF line ends, as Windows programs write; sources in docs section 4):
- the MQ programs under `C:\\Program Files\\IBM\\MQ\\bin`: those of the Linux simulator (linuxsim.commands, mqsc),
  answered alike (ASSUMED: IBM documents one set of outputs for AIX, Linux and Windows); dspmqinf's Prefix is the
  Windows data directory;
- `type FILE` of mqs.ini or a queue manager's qm.ini; `del FILE` of an extent, exit 0 whatever happened (the words
  say: `Could Not Find <path>`, `Access is denied.`, `The process cannot access the file because it is being used by
  another process.`); `ver`;
- `certutil.exe -hashfile FILE SHA256` (`SHA256 hash of <path>:`, the hex, `CertUtil: -hashfile command completed
  successfully.`; with `legacy_certutil`, Server 2012 R2's `SHA256 hash of file <path>:` and spaced byte pairs); a
  missing file `CertUtil: -hashfile command FAILED: 0x80070002 (WIN32: 2 ERROR_FILE_NOT_FOUND)` and exit 0x80070002
  (ASSUMED: certutil exits with the HRESULT, as it prints it);
- `reg.exe query "HKLM|HKCU\\Software\\Microsoft\\Command Processor"` (`WindowsLayout.command_processor`; a key
  that is not there: `ERROR: The system was unable to find the specified registry key or value.`, exit 1);
- `whoami.exe /groups /fo csv /nh`: Everyone, BUILTIN\\Users, the logon's well-known groups, `HOST\\mqm` for its
  members, and the mandatory label;
- `powershell.exe -NoLogo -NoProfile -NonInteractive -Command "<script>"`: the two scripts of linuxmq.windowsforms
  (the active directory's listing, a drive's size and free bytes); Get-ChildItem's errors as PowerShell words them,
  exit 1 (ASSUMED: -Command exits 1 when its last statement failed); any other script is refused (exit 1).
"""

from __future__ import annotations

import hashlib
import ntpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from mqjournal.errors import InvalidName
from mqjournal.linuxsim import commands, logger
from mqjournal.linuxsim.model import (
    INSTALLATION_NAME,
    WINDOWS_DATA_PREFIX,
    LinuxHost,
    LinuxQueueManager,
    WindowsQueueManager,
    directory_name,
    on_platform,
)
from mqjournal.sim.protocol import ExecResult

__all__ = [
    "DATA_PREFIX",
    "MQ_BIN",
    "SYSTEM32",
    "WindowsLayout",
    "WindowsQueueManager",
    "active_queue_manager",
    "answer",
    "extent_at",
    "split_arguments",
]

DATA_PREFIX = WINDOWS_DATA_PREFIX
MQ_BIN = r"C:\Program Files\IBM\MQ\bin"
SYSTEM32 = r"C:\Windows\System32"
NOT_RECOGNIZED = "'{name}' is not recognized as an internal or external command,\r\noperable program or batch file.\r\n"
PATH_NOT_FOUND = "The system cannot find the path specified.\r\n"
RC_NOT_RECOGNIZED, RC_PATH_NOT_FOUND = 9009, 3
ERROR_FILE_NOT_FOUND = 0x80070002
ERROR_ACCESS_DENIED = 0x80070005


@dataclass(frozen=True)
class WindowsLayout:
    """What differs between Windows hosts: its name, its build, certutil's older format, the session's variables."""

    computer_name: str = "MQWIN1"
    version: str = "10.0.17763.6414"  # Windows Server 2019
    legacy_certutil: bool = False
    locked: frozenset[str] = frozenset()
    """Extent files another process holds open without delete sharing (a fault: an antivirus or backup agent, or MQ's
    own share mode, docs section 2): `del` of one says "being used by another process", and exits 0."""
    drive_bytes: int = 200 * 1024**3
    other_bytes: int = 60 * 1024**3
    variables: dict[str, str] = field(
        default_factory=lambda: {
            "SYSTEMROOT": r"C:\Windows",
            "PROGRAMDATA": r"C:\ProgramData",
            "PROGRAMFILES": r"C:\Program Files",
            "COMSPEC": r"C:\Windows\system32\cmd.exe",
        }
    )
    command_processor: dict[str, dict[str, tuple[str, str]]] = field(
        default_factory=lambda: {
            "HKLM": {
                "CompletionChar": ("REG_DWORD", "0x40"),
                "DefaultColor": ("REG_DWORD", "0x0"),
                "EnableExtensions": ("REG_DWORD", "0x1"),
                "PathCompletionChar": ("REG_DWORD", "0x40"),
            }
        }
    )
    """`Software\\Microsoft\\Command Processor` of HKLM and HKCU (absent: no such key): a host's AutoRun runs before
    each command and its output comes first; DelayedExpansion 0x1 expands `!NAME!` and drops a lone `!`."""

    def setting(self, name: str) -> str | None:
        for hive in ("HKCU", "HKLM"):  # the user's value wins (Microsoft's registry reference)
            if name in self.command_processor.get(hive, {}):
                return self.command_processor[hive][name][1]
        return None


# --- cmd.exe ---------------------------------------------------------------------------------------------------------

_VARIABLE = re.compile(r"%([^%\r\n]+)%")


def _expand(line: str, layout: WindowsLayout, user: str) -> str:
    names = {**layout.variables, "USERNAME": user, "COMPUTERNAME": layout.computer_name}
    return _VARIABLE.sub(lambda m: names.get(m.group(1).upper(), m.group(0)), line)


_DELAYED = re.compile(r"!([^!\r\n]*)!?")


def _expand_delayed(line: str, layout: WindowsLayout, user: str) -> str:
    names = {**layout.variables, "USERNAME": user, "COMPUTERNAME": layout.computer_name}
    return _DELAYED.sub(lambda m: names.get(m.group(1).upper(), "") if m.group(0).endswith("!") else m.group(1), line)


def _unquoted_operator(line: str) -> str | None:
    quoted = False
    for char in line:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "&|<>^":
            return char
    return None


def split_arguments(text: str) -> list[str]:
    """A command line's arguments as the Microsoft C runtime splits them: blanks separate, double quotes group and are
    removed, `2n` backslashes before a quote are `n` and the quote groups, `2n+1` are `n` and a literal quote."""
    args: list[str] = []
    current: list[str] = []
    quoted = started = False
    at = 0
    while at < len(text):
        char = text[at]
        if char == "\\":
            run = len(text[at:]) - len(text[at:].lstrip("\\"))
            if text[at + run : at + run + 1] == '"':
                current.append("\\" * (run // 2))
                if run % 2:
                    current.append('"')
                    at += run + 1
                else:
                    at += run
                started = True
                continue
            current.append("\\" * run)
            at += run
            started = True
            continue
        if char == '"':
            if quoted and text[at + 1 : at + 2] == '"':
                current.append('"')
                at += 2
                continue
            quoted = not quoted
            started = True
        elif char in " \t" and not quoted:
            if started:
                args.append("".join(current))
                current, started = [], False
        else:
            current.append(char)
            started = True
        at += 1
    if started:
        args.append("".join(current))
    return args


def _program_word(line: str) -> tuple[str, str]:
    """cmd.exe's first word (a quoted program path, or up to a blank) and the rest of the line."""
    line = line.lstrip(" \t")
    if line.startswith('"'):
        end = line.find('"', 1)
        end = len(line) if end < 0 else end
        return line[1:end], line[end + 1 :]
    word = re.match(r"[^ \t]*", line)
    name = word.group(0) if word else ""
    return name, line[len(name) :]


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _crlf(result: ExecResult) -> ExecResult:
    return ExecResult(result.exit_status, _lines(result.stdout), _lines(result.stderr))


def answer(
    host: LinuxHost, user: str, command_line: str, stdin: str = "", layout: WindowsLayout | None = None
) -> ExecResult:
    """What `cmd.exe /c "<command_line>"` gives back on a Windows host holding `host`'s queue managers."""
    layout = layout or WindowsLayout()
    if any(c in command_line for c in "\r\n\0"):
        return ExecResult(255, "", "the simulator runs one command line\r\n")
    line = _expand(command_line, layout, user)
    if (operator := _unquoted_operator(line)) is not None:
        return ExecResult(255, "", f"the simulator runs one program, not {operator!r}\r\n")
    if (layout.setting("DelayedExpansion") or "0x0") != "0x0":
        line = _expand_delayed(line, layout, user)
    autorun = layout.setting("AutoRun")
    result = _run(host, user, line, stdin, layout)
    if autorun:
        # SIMPLIFICATION: the AutoRun command is taken to print its own text, as `echo` would.
        return ExecResult(result.exit_status, f"{autorun}\r\n{result.stdout}", result.stderr)
    return result


def _run(host: LinuxHost, user: str, line: str, stdin: str, layout: WindowsLayout) -> ExecResult:
    name, rest = _program_word(line)
    if not name:
        return ExecResult(0)
    builtin = _BUILTINS.get(name.lower())
    if builtin is not None and not line.lstrip(" \t").startswith('"'):
        return builtin(host, user, rest, layout)
    program = _program(host, name)
    if isinstance(program, ExecResult):
        return program
    return program(host, user, split_arguments(rest), stdin, layout)


Program = Callable[[LinuxHost, str, list[str], str, WindowsLayout], ExecResult]


def _program(host: LinuxHost, name: str) -> Program | ExecResult:
    folder, leaf = ntpath.split(name)
    if not folder:
        return ExecResult(RC_NOT_RECOGNIZED, "", NOT_RECOGNIZED.format(name=name))
    programs = _PROGRAMS.get(ntpath.normcase(ntpath.normpath(folder)))
    if programs is None:
        return ExecResult(RC_PATH_NOT_FOUND, "", PATH_NOT_FOUND)
    found = programs.get(leaf.lower()) or programs.get(f"{leaf.lower()}.exe")
    missing = {p.lower() for p in host.missing_programs}
    if found is None or leaf.lower() in missing or ntpath.splitext(leaf.lower())[0] in missing:
        return ExecResult(RC_NOT_RECOGNIZED, "", NOT_RECOGNIZED.format(name=name))
    return found


# --- files -----------------------------------------------------------------------------------------------------------


def _normal(path: str) -> str:
    """A path as Windows compares it: `/C:/x/y` (SFTP's form) or `C:\\x\\y`, either case, normalised."""
    if re.match(r"^/[A-Za-z]:/", path):
        path = path[1:]
    return ntpath.normcase(ntpath.normpath(path.replace("/", "\\")))


def extent_at(host: LinuxHost, path: str) -> tuple[LinuxQueueManager, str] | None:
    """The queue manager whose active directory holds `path` (`C:\\...` or SFTP's `/C:/...`), and the file's name as
    the queue manager wrote it; None elsewhere."""
    folder, leaf = ntpath.split(_normal(path))
    for qm in host.queue_managers.values():
        if folder == _normal(qm.active_path):
            named = next((n for n in qm.extents if n.lower() == leaf), leaf.upper())
            return qm, named
    return None


def active_queue_manager(host: LinuxHost, path: str) -> LinuxQueueManager | None:
    """The queue manager whose active directory is `path` (`C:\\...` or SFTP's `/C:/...`); None for another path."""
    return next((q for q in host.queue_managers.values() if _normal(path) == _normal(q.active_path)), None)


def _mqm(host: LinuxHost, user: str) -> bool:
    return user in host.mqm_members


def _qm_ini(host: LinuxHost, path: str) -> LinuxQueueManager | None:
    return next(
        (qm for qm in host.queue_managers.values() if _normal(path) == _normal(f"{qm.data_path}\\qm.ini")), None
    )


def _type(host: LinuxHost, user: str, rest: str, layout: WindowsLayout) -> ExecResult:
    args = split_arguments(rest)
    if len(args) != 1:
        return ExecResult(1, "", "The syntax of the command is incorrect.\r\n")
    if _normal(args[0]) == _normal(f"{DATA_PREFIX}\\mqs.ini"):
        return ExecResult(0, _lines(_mqs_ini(host)))
    qm = _qm_ini(host, args[0])
    if qm is None:
        return ExecResult(1, "", "The system cannot find the file specified.\r\n")
    if not _mqm(host, user):
        return ExecResult(1, "", "Access is denied.\r\n")
    text = commands.qm_ini(qm).replace("/var/mqm/exits/", f"{DATA_PREFIX}\\exits\\")
    text = text.replace("/var/mqm/exits64/", f"{DATA_PREFIX}\\exits64\\")
    return ExecResult(0, _lines(text.replace("MQSeries.UNIX.auth.service", "MQSeries.WindowsNT.auth.service")))


def _del(host: LinuxHost, user: str, rest: str, layout: WindowsLayout) -> ExecResult:
    args = split_arguments(rest)
    if not args or any(a.startswith("/") for a in args):
        return ExecResult(1, "", "The syntax of the command is incorrect.\r\n")
    err: list[str] = []
    for path in args:
        found = extent_at(host, path)
        if found is None or not _mqm(host, user):
            err.append("Access is denied.")  # SIMPLIFICATION: nothing else is the session's to delete
            continue
        qm, name = found
        if name.lower() in {n.lower() for n in layout.locked}:
            err.append("The process cannot access the file because it is being used by another process.")
            continue
        try:
            logger.remove_extent(qm, name)
        except (InvalidName, logger.ExtentNotFound):
            err.append(f"Could Not Find {path}")
        except logger.ExtentBusy:
            err.append("The process cannot access the file because it is being used by another process.")
    return ExecResult(0, "", "".join(f"{e}\r\n" for e in err))  # del's exit status is 0 for every one of these


def _ver(host: LinuxHost, user: str, rest: str, layout: WindowsLayout) -> ExecResult:
    return ExecResult(0, f"\r\nMicrosoft Windows [Version {layout.version}]\r\n")


_BUILTINS: dict[str, Callable[[LinuxHost, str, str, WindowsLayout], ExecResult]] = {
    "type": _type,
    "del": _del,
    "erase": _del,
    "ver": _ver,
}


def _mqs_ini(host: LinuxHost) -> str:
    head = f"AllQueueManagers:\n   DefaultPrefix={DATA_PREFIX}\n"
    return head + "".join(_stanza(qm) for _, qm in sorted(host.queue_managers.items()))


def _stanza(qm: LinuxQueueManager) -> str:
    return (
        f"QueueManager:\n   Name={qm.name}\n   Directory={directory_name(qm.name)}\n   Prefix={DATA_PREFIX}\n"
        f"   InstallationName={INSTALLATION_NAME}\n"
    )


# --- programs --------------------------------------------------------------------------------------------------------


def _mq(run: commands.Command) -> Program:
    def program(host: LinuxHost, user: str, args: list[str], stdin: str, layout: WindowsLayout) -> ExecResult:
        return _crlf(run(host, user, args, stdin))

    return program


def _dspmqinf(host: LinuxHost, user: str, args: list[str], stdin: str, layout: WindowsLayout) -> ExecResult:
    found = commands.dspmqinf(host, user, args, stdin)
    if found.exit_status != 0:
        return _crlf(found)
    qm = host.queue_manager(args[-1])
    return ExecResult(0, _lines(_stanza(qm))) if qm else _crlf(found)


def _certutil(host: LinuxHost, user: str, args: list[str], stdin: str, layout: WindowsLayout) -> ExecResult:
    if len(args) != 3 or args[0].lower() != "-hashfile" or args[2].upper() != "SHA256":
        return ExecResult(1, "", "CertUtil: the simulator answers -hashfile FILE SHA256 only\r\n")
    path = args[1]
    found = extent_at(host, path)
    qm_ini = _qm_ini(host, path)
    if (found is None or found[1] not in found[0].extents) and qm_ini is None:
        return _certutil_failed(
            ERROR_FILE_NOT_FOUND, "WIN32: 2 ERROR_FILE_NOT_FOUND", "The system cannot find the file specified."
        )
    if not _mqm(host, user):
        return _certutil_failed(ERROR_ACCESS_DENIED, "WIN32: 5 ERROR_ACCESS_DENIED", "Access is denied.")
    if found is not None and found[1] in found[0].extents:
        digest = commands.file_digest(found[0], found[1])
    else:
        assert qm_ini is not None
        digest = hashlib.sha256(_lines(commands.qm_ini(qm_ini)).encode()).hexdigest()
    if layout.legacy_certutil:
        spaced = " ".join(digest[i : i + 2] for i in range(0, 64, 2))
        return ExecResult(
            0, f"SHA256 hash of file {path}:\r\n{spaced}\r\nCertUtil: -hashfile command completed successfully.\r\n"
        )
    return ExecResult(
        0, f"SHA256 hash of {path}:\r\n{digest}\r\nCertUtil: -hashfile command completed successfully.\r\n"
    )


def _certutil_failed(code: int, win32: str, text: str) -> ExecResult:
    return ExecResult(code, f"CertUtil: -hashfile command FAILED: 0x{code:08x} ({win32})\r\nCertUtil: {text}\r\n")


def _whoami(host: LinuxHost, user: str, args: list[str], stdin: str, layout: WindowsLayout) -> ExecResult:
    if [a.lower() for a in args] != ["/groups", "/fo", "csv", "/nh"]:
        return ExecResult(1, "", "ERROR: the simulator answers /groups /fo csv /nh only.\r\n")
    enabled = "Mandatory group, Enabled by default, Enabled group"
    rows = [
        ("Everyone", "Well-known group", "S-1-1-0", enabled),
        ("BUILTIN\\Users", "Alias", "S-1-5-32-545", enabled),
        ("NT AUTHORITY\\NETWORK", "Well-known group", "S-1-5-2", enabled),
        ("NT AUTHORITY\\Authenticated Users", "Well-known group", "S-1-5-11", enabled),
        ("NT AUTHORITY\\This Organization", "Well-known group", "S-1-5-15", enabled),
    ]
    if _mqm(host, user):
        rows.append((f"{layout.computer_name}\\mqm", "Alias", "S-1-5-21-3623811015-3361044348-30300820-1013", enabled))
    rows.append(("Mandatory Label\\Medium Mandatory Level", "Label", "S-1-16-8192", ""))
    return ExecResult(0, "".join(",".join(f'"{v}"' for v in row) + "\r\n" for row in rows))


_LISTING = re.compile(
    r"\$ProgressPreference='SilentlyContinue'; Get-ChildItem -LiteralPath '(?P<path>[^']*)' -File -ErrorAction Stop \| "
    r"ForEach-Object \{ \[string\]\$_\.Length \+ ' ' \+ \[string\]\[DateTimeOffset\]::new\(\$_\.LastWriteTimeUtc\)"
    r"\.ToUnixTimeSeconds\(\) \+ ' ' \+ \$_\.Name \}"
)
_USAGE = re.compile(
    r"\$d = \[IO\.DriveInfo\]::new\('(?P<drive>[A-Za-z])'\); \[string\]\$d\.TotalSize \+ ' ' \+ "
    r"\[string\]\$d\.TotalFreeSpace \+ ' ' \+ \[string\]\$d\.AvailableFreeSpace"
)


def _powershell(host: LinuxHost, user: str, args: list[str], stdin: str, layout: WindowsLayout) -> ExecResult:
    flags = ["-NoLogo", "-NoProfile", "-NonInteractive", "-Command"]
    if [a.lower() for a in args[:4]] != [f.lower() for f in flags] or len(args) < 5:
        return ExecResult(1, "", "the simulator runs -NoLogo -NoProfile -NonInteractive -Command SCRIPT only\r\n")
    script = " ".join(args[4:])  # PowerShell joins the words after -Command into one script
    if match := _LISTING.fullmatch(script):
        return _listing(host, user, match.group("path"))
    if match := _USAGE.fullmatch(script):
        return _usage(host, match.group("drive"), layout)
    return ExecResult(1, "", "the simulator runs the extent listing and the drive usage scripts only\r\n")


def _ps_error(command: str, text: str, category: str, target: str) -> ExecResult:
    return ExecResult(
        1,
        "",
        f"{command} : {text}\r\nAt line:1 char:48\r\n"
        f"+ CategoryInfo          : {category}: ({target}:String) [{command}], ItemNotFoundException\r\n",
    )


def _listing(host: LinuxHost, user: str, path: str) -> ExecResult:
    qm = active_queue_manager(host, path)
    if qm is None:
        return _ps_error(
            "Get-ChildItem", f"Cannot find path '{path}' because it does not exist.", "ObjectNotFound", path
        )
    if not _mqm(host, user):
        return _ps_error("Get-ChildItem", f"Access to the path '{path}' is denied.", "PermissionDenied", path)
    files = sorted(qm.extents.values(), key=lambda e: e.name)
    lines = [f"{qm.file_size(e)} {int(e.modified.timestamp())} {e.name}" for e in files]
    return ExecResult(0, "".join(f"{line}\r\n" for line in lines))


def _usage(host: LinuxHost, drive: str, layout: WindowsLayout) -> ExecResult:
    if drive.upper() != "C":
        return ExecResult(
            1, "", f'Exception calling ".ctor" with "1" argument(s): "Could not find the drive \'{drive}:\\\'."\r\n'
        )
    logs = sum(len(qm.extents) * qm.extent_size for qm in host.queue_managers.values())
    free = max(0, layout.drive_bytes - layout.other_bytes - logs)
    return ExecResult(0, f"{layout.drive_bytes} {free} {free}\r\n")


def _reg(host: LinuxHost, user: str, args: list[str], stdin: str, layout: WindowsLayout) -> ExecResult:
    hive, _, key = args[1].partition("\\") if len(args) == 2 and args[0].lower() == "query" else ("", "", "")
    if key.lower() != r"software\microsoft\command processor" or hive.upper() not in ("HKLM", "HKCU"):
        return ExecResult(1, "", "ERROR: the simulator queries the Command Processor keys only.\r\n")
    values = layout.command_processor.get(hive.upper())
    if values is None:
        return ExecResult(1, "", "ERROR: The system was unable to find the specified registry key or value.\r\n")
    root = "HKEY_LOCAL_MACHINE" if hive.upper() == "HKLM" else "HKEY_CURRENT_USER"
    lines = ["", f"{root}\\{key}"] + [f"    {n}    {t}    {d}" for n, (t, d) in sorted(values.items())] + [""]
    return ExecResult(0, "\r\n".join(lines) + "\r\n")


_PROGRAMS: dict[str, dict[str, Program]] = {
    ntpath.normcase(MQ_BIN): {
        f"{name}.exe": _mq(run)
        for name, run in commands.COMMANDS.items()
        if name in ("dspmq", "rcdmqimg", "rcrmqobj", "strmqm", "endmqm", "runmqsc")
    }
    | {"dspmqinf.exe": _dspmqinf},
    ntpath.normcase(SYSTEM32): {"certutil.exe": _certutil, "whoami.exe": _whoami, "reg.exe": _reg},
    ntpath.normcase(f"{SYSTEM32}\\WindowsPowerShell\\v1.0"): {"powershell.exe": _powershell},
}


def new_windows_queue_manager(qm: LinuxQueueManager) -> WindowsQueueManager:
    """The same queue manager, kept under Windows' directories."""
    found = on_platform(qm, "windows")
    assert isinstance(found, WindowsQueueManager)
    return found
