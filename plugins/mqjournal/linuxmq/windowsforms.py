"""The commands mqjournal would send to a Windows queue manager host, and readers of their answers (issue #32).

Research: docs/windows-interfaces.md. In short, verified there: Win32-OpenSSH runs an exec request as
`"C:\\Windows\\system32\\cmd.exe" /c "<command>"` (PowerShell/openssh-portable `w32-doexec.c`, `pwd.c`), so cmd.exe
strips the quotes it added and parses the command line itself: `&`, `|`, `<`, `>` and `^` outside quotes run or
redirect something else, and `%NAME%` is expanded even inside quotes (ASSUMED: common knowledge, not retrieved), as
`!NAME!` is when a host enables delayed expansion (Microsoft's DelayedExpansion entry). Every form here is therefore
one program with arguments that hold none of those characters: queue manager names without `%`, directories matching
`WINDOWS_DIRECTORY` and always written inside double quotes (for cmd.exe and the program) or single quotes (inside a
PowerShell script, where nothing is expanded). MQSC still goes to runmqsc on its standard input, which sshd hands to
the program untouched.

Programs are named by their full path: cmd.exe looks for a bare name in the current directory before the PATH
(verified: Microsoft's NeedCurrentDirectoryForExePath page, ".;%PATH%"), and sshd starts it in the user's profile, so a
planted `certutil.bat` there would run instead. Built-ins (`type`, `del`, `ver`) have no such lookup.

The readers refuse what they cannot read whole (ReadingError naming the line), as linuxmq.readings does; Windows
programs end lines with CR LF, which `str.splitlines` takes as one break.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import PureWindowsPath

from mqjournal.errors import InvalidName
from mqjournal.ibmi.commands import Command
from mqjournal.linuxmq.commands import LOG_STATUS_ATTRIBUTES, object_type
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.readings import FileSystemUsage, ListedFile, ReadingError, extent_named
from mqjournal.names import mq_name, qmgr_name

__all__ = [
    "COMMAND_PROCESSOR_KEYS",
    "DEFAULT_MQ_BIN",
    "DEFAULT_SYSTEM32",
    "WINDOWS_DIRECTORY",
    "Group",
    "RemoveOutcome",
    "WindowsTools",
    "active_directory",
    "cmd_is_plain",
    "command_processor_settings",
    "data_path",
    "digest_probe",
    "directory",
    "display_image_schedule",
    "display_log_status",
    "display_queue_media_log",
    "extent_digest",
    "extent_sftp_path",
    "file_system_usage",
    "group_names",
    "in_mqm",
    "list_extents",
    "list_queue_managers",
    "listed_extents",
    "mq_administrator",
    "queue_manager_info",
    "queue_manager_status",
    "read_command_processor",
    "read_digest",
    "read_file_system_usage",
    "read_groups",
    "read_qm_ini",
    "read_removal",
    "read_windows_version",
    "record_media_images",
    "recreate_object",
    "remove_extent",
    "set_log_archived",
    "sftp_path",
    "shell_probe",
    "start_queue_manager",
    "user_groups",
    "windows_name",
]

DEFAULT_MQ_BIN = r"C:\Program Files\IBM\MQ\bin"
"""The installation's bin directory, IBM MQ 9.0 and later (q119400, q005870: InstPath `C:\\Program Files\\IBM\\MQ`)."""
DEFAULT_SYSTEM32 = r"C:\Windows\System32"
"""Where certutil, whoami and Windows PowerShell 5.1 are (ASSUMED: SystemRoot C:\\Windows, the installer's default)."""

POWERSHELL = r"WindowsPowerShell\v1.0\powershell.exe"
"""Windows PowerShell 5.1, in every Windows Server since 2016, under the system directory."""

_COMPONENT = r"[A-Za-z0-9_.-](?:[A-Za-z0-9_. -]*[A-Za-z0-9_-])?"
WINDOWS_DIRECTORY = re.compile(rf"[A-Za-z]:\\(?:{_COMPONENT}\\)*(?:{_COMPONENT})?")
"""An absolute local directory: a drive letter, backslashes, components of letters, digits, `_`, `-`, `.` and inner
blanks. Nothing cmd.exe or PowerShell reads inside quotes (`"`, `%`, `!`, `'`, `^`, `&`, `|`, `<`, `>`), no `~`
(8.3 short names alias other paths), no component ending in `.` or a blank (Windows drops those, so the path would
name another file), no `..`, no UNC or device path (`\\\\server\\share`, `\\\\?\\`)."""
_DEVICE_NAMES = re.compile(r"(?i)(CON|PRN|AUX|NUL|COM[1-9]|LPT[1-9])(\..*)?")
# A file named NUL or COM1.txt is the device, in any directory.


def directory(path: str) -> str:
    """`path` as a directory mqjournal may name on a Windows host, without a trailing backslash (unless it is a drive's
    root); InvalidName naming it and what to do otherwise."""
    if not isinstance(path, str) or not WINDOWS_DIRECTORY.fullmatch(path):
        raise InvalidName(
            repr(path),
            "not a plain absolute Windows directory",
            'give a drive letter and backslashes, with letters, digits, "_", "-", "." and inner blanks only '
            "(no \" % ! ' ^ & | < > ~)",
        )
    parts = [part for part in path[3:].split("\\") if part]
    if any(part in (".", "..") or _DEVICE_NAMES.fullmatch(part) for part in parts):
        raise InvalidName(repr(path), "names a relative step or a device", "give the directory's real absolute path")
    return path[:3] + "\\".join(parts)


def windows_name(value: str, *, what: str = "queue manager") -> str:
    """A queue manager (or object) name as cmd.exe and MQ's programs may receive it: MQ's characters without `%`, which
    cmd.exe would expand as a variable even inside quotes, and not starting with `/`."""
    name = qmgr_name(value) if what == "queue manager" else mq_name(value, what=what)
    if "%" in name:
        raise InvalidName(
            repr(value),
            f"a {what} name with % cannot be sent through cmd.exe (it would be read as a variable)",
            "rename it, or leave this queue manager off the Windows host's list",
        )
    if name.startswith("/"):
        # The control commands on Windows take / for - (q019970): "/m" would be read as a flag, not a name.
        raise InvalidName(repr(value), f"a {what} name starting with / would be read as a flag on Windows", "rename it")
    return name


def _quoted(path: str) -> str:
    return f'"{path}"'


def _file(in_directory: str, name: str) -> str:
    return str(PureWindowsPath(directory(in_directory)) / name)


@dataclass(frozen=True)
class WindowsTools:
    """Where the programs are on one host: the MQ installation's bin and the Windows system directory."""

    mq_bin: str = DEFAULT_MQ_BIN
    system32: str = DEFAULT_SYSTEM32

    def __post_init__(self) -> None:
        directory(self.mq_bin)
        directory(self.system32)

    def mq(self, program: str) -> str:
        return _quoted(_file(self.mq_bin, f"{program}.exe"))

    def system(self, program: str) -> str:
        return _quoted(_file(self.system32, program))

    @property
    def powershell(self) -> str:
        # -NoProfile: no profile script of the user runs; -NonInteractive: a prompt fails instead of waiting.
        program = self.system(POWERSHELL)
        return f"{program} -NoLogo -NoProfile -NonInteractive -Command"


TOOLS = WindowsTools()


# --- MQ: the control commands and runmqsc, as on Linux (same programs, names and MQSC) -------------------------------


def _runmqsc(tools: WindowsTools, qmgr: str, mqsc: str) -> Command:
    return Command(text=f"{tools.mq('runmqsc')} {windows_name(qmgr)}", idempotent=True, stdin=mqsc)


def display_log_status(qmgr: str, tools: WindowsTools = TOOLS) -> Command:
    """DISPLAY QMSTATUS with the log attributes, on runmqsc's standard input (never on the command line)."""
    return _runmqsc(tools, qmgr, f"DISPLAY QMSTATUS {' '.join(LOG_STATUS_ATTRIBUTES)}\n")


def set_log_archived(qmgr: str, extent: Extent, tools: WindowsTools = TOOLS) -> Command:
    """SET LOG ARCHIVED of one `S` extent (Archive mode), as linuxmq.commands.set_log_archived."""
    if extent.reusable:
        raise ValueError(f"{extent.name} is an extent MQ keeps for reuse: only S extents are notified as archived")
    return _runmqsc(tools, qmgr, f"SET LOG ARCHIVED('{extent.name}')\n")


def display_image_schedule(qmgr: str, tools: WindowsTools = TOOLS) -> Command:
    return _runmqsc(tools, qmgr, "DISPLAY QMGR IMGSCHED\n")


def display_queue_media_log(qmgr: str, queue: str, tools: WindowsTools = TOOLS) -> Command:
    """DISPLAY QSTATUS of one queue with its MEDIALOG; the name quoted in MQSC, which expands nothing."""
    return _runmqsc(tools, qmgr, f"DISPLAY QSTATUS('{mq_name(queue, what='queue')}') TYPE(QUEUE) MEDIALOG\n")


def record_media_images(qmgr: str, tools: WindowsTools = TOOLS) -> Command:
    """rcdmqimg of every object. The `*` is quoted: a program linked with the C runtime's wildcard expansion would
    otherwise get the names of the files in its directory (ASSUMED: whether MQ's programs are is not known)."""
    return Command(text=f'{tools.mq("rcdmqimg")} -l -m {windows_name(qmgr)} -t all "*"', idempotent=True)


def queue_manager_info(qmgr: str, tools: WindowsTools = TOOLS) -> Command:
    """dspmqinf's stanza: Prefix and Directory (or DataPath) say where qm.ini is."""
    return Command(text=f"{tools.mq('dspmqinf')} -o stanza {windows_name(qmgr)}", idempotent=True)


def list_queue_managers(tools: WindowsTools = TOOLS) -> Command:
    return Command(text=tools.mq("dspmq"), idempotent=True)


def queue_manager_status(qmgr: str, tools: WindowsTools = TOOLS) -> Command:
    return Command(text=f"{tools.mq('dspmq')} -m {windows_name(qmgr)}", idempotent=True)


def start_queue_manager(qmgr: str, tools: WindowsTools = TOOLS) -> Command:
    return Command(text=f"{tools.mq('strmqm')} {windows_name(qmgr)}", idempotent=False)


def recreate_object(qmgr: str, kind: str, name: str, tools: WindowsTools = TOOLS) -> Command:
    """rcrmqobj of one object by its name (no generic name: an approval names what is re-created)."""
    target = windows_name(name, what="MQ object")
    return Command(
        text=f"{tools.mq('rcrmqobj')} -m {windows_name(qmgr)} -t {object_type(kind)} {target}", idempotent=False
    )


# --- files: cmd.exe's built-ins, certutil, and Windows PowerShell where cmd.exe has no locale-free form --------------


def read_qm_ini(data: str) -> Command:
    """cmd.exe's `type` of `<data path>\\qm.ini` (a built-in: no program is looked up)."""
    return Command(text=f"type {_quoted(_file(data, 'qm.ini'))}", idempotent=True)


def active_directory(log_path: str) -> str:
    """Where the extents are: qm.ini's LogPath (written with a trailing backslash) and `active`."""
    return _file(log_path, "active")


LISTING_SCRIPT = (
    "$ProgressPreference='SilentlyContinue'; Get-ChildItem -LiteralPath '{directory}' -File -ErrorAction Stop | "
    "ForEach-Object {{ [string]$_.Length + ' ' + [string][DateTimeOffset]::new($_.LastWriteTimeUtc).ToUnixTimeSeconds()"
    " + ' ' + $_.Name }}"
)
"""One line per file: its bytes, its modification time in seconds since 1970 (UTC) and its name. Numbers converted
with `[string]`, which PowerShell does in the invariant culture, so no locale adds separators (`dir` would)."""


def list_extents(active: str, tools: WindowsTools = TOOLS) -> Command:
    """The files of the log's active directory with sizes and times, in a form no locale changes."""
    script = LISTING_SCRIPT.format(directory=directory(active))
    return Command(text=f'{tools.powershell} "{script}"', idempotent=True)


def extent_digest(active: str, extent: Extent, tools: WindowsTools = TOOLS) -> Command:
    """The host's SHA-256 of one extent, by certutil (every Windows since 7 / Server 2008 R2 has `-hashfile`)."""
    return Command(
        text=f"{tools.system('certutil.exe')} -hashfile {_quoted(_file(active, extent.name))} SHA256", idempotent=True
    )


def digest_probe(data: str, tools: WindowsTools = TOOLS) -> Command:
    """certutil of the queue manager's qm.ini: an answer read by `read_digest` shows the host can vouch for a file's
    bytes (Windows has no /dev/null whose digest is known: `NUL` is a device certutil may not open, ASSUMED)."""
    return Command(
        text=f"{tools.system('certutil.exe')} -hashfile {_quoted(_file(data, 'qm.ini'))} SHA256", idempotent=True
    )


def remove_extent(active: str, extent: Extent) -> Command:
    """Manual mode's release of an extent (a proven copy first, as on Linux). cmd.exe's `del` says nothing by its
    exit status (0 whether the file went or not: docs, section 4), so `read_removal` reads its words and the caller
    lists the directory again; never an R extent, never a name with a wildcard."""
    if extent.reusable:
        raise ValueError(f"{extent.name} is an extent MQ keeps for reuse: mqjournal never removes one")
    return Command(text=f"del {_quoted(_file(active, extent.name))}", idempotent=True)


def user_groups(tools: WindowsTools = TOOLS) -> Command:
    """The session's groups as CSV without a header: `"HOST\\mqm","Alias","S-1-5-21-…","Mandatory group, …"`."""
    return Command(text=f"{tools.system('whoami.exe')} /groups /fo csv /nh", idempotent=True)


USAGE_SCRIPT = (
    "$d = [IO.DriveInfo]::new('{drive}'); "
    "[string]$d.TotalSize + ' ' + [string]$d.TotalFreeSpace + ' ' + [string]$d.AvailableFreeSpace"
)
"""The volume's size, free bytes and bytes free to this user (quotas), one line. ASSUMED: the log directory is on the
drive letter's own volume, not a volume mounted in a folder of it (DriveInfo sees only the drive's)."""


def file_system_usage(path: str, tools: WindowsTools = TOOLS) -> Command:
    drive = directory(path)[0].upper()
    return Command(text=f'{tools.powershell} "{USAGE_SCRIPT.format(drive=drive)}"', idempotent=True)


def shell_probe() -> Command:
    """cmd.exe's `ver`: its answer shows the SSH server hands commands to cmd.exe (a PowerShell DefaultShell has no
    `ver`), and which Windows build it is."""
    return Command(text="ver", idempotent=True)


def sftp_path(path: str) -> str:
    """A file's path as Win32-OpenSSH's SFTP server takes and shows it: `/C:/ProgramData/...` (verified: its
    realpath, "our first slash in /x:/users/test1 format", contrib/win32/win32compat/misc.c)."""
    windows = directory(path)
    return "/" + windows.replace("\\", "/")


def extent_sftp_path(active: str, extent: Extent) -> str:
    return sftp_path(_file(active, extent.name))


# --- readers ---------------------------------------------------------------------------------------------------------

_KEY = re.compile(r"^\s+([A-Za-z]+)=(.*)$")


def data_path(stanza: str) -> str:
    """The queue manager's data directory from `dspmqinf -o stanza QM`: DataPath, else Prefix\\qmgrs\\Directory (as on
    Linux: mq-container's reading, section 1 of docs/linux-interfaces.md), checked as a Windows directory."""
    keys: dict[str, str] = {}
    for line in stanza.splitlines():
        if match := _KEY.match(line):
            keys[match.group(1)] = match.group(2).strip()
    if keys.get("DataPath"):
        found = keys["DataPath"]
    elif keys.get("Prefix") and keys.get("Directory"):
        found = str(PureWindowsPath(keys["Prefix"]) / "qmgrs" / keys["Directory"])
    else:
        raise ReadingError(f"dspmqinf gave neither DataPath nor Prefix and Directory: {stanza[:200]!r}")
    try:
        return directory(found)
    except InvalidName as exc:
        raise ReadingError(f"dspmqinf's data directory {found!r} is not one mqjournal can name: {exc}") from None


_LISTING_LINE = re.compile(r"^(?P<size>\d+) (?P<epoch>-?\d+) (?P<name>\S.*)$")


def listed_extents(answer: str) -> list[ListedFile]:
    """The extents of the listing `list_extents` asks for, by name; other files (amqhlctl.lfh is in the parent, none
    are expected here) are left out. A line not of the form is refused: half a listing could hide an extent."""
    found: list[ListedFile] = []
    for line in answer.splitlines():
        if not line.strip():
            continue
        match = _LISTING_LINE.match(line)
        if match is None:
            raise ReadingError(f"not a line of the extent listing (size, seconds, name): {line!r}")
        if (extent := extent_named(match.group("name"))) is None:
            continue
        moment = datetime.fromtimestamp(int(match.group("epoch")), UTC)
        found.append(ListedFile(extent, int(match.group("size")), moment))
    return sorted(found, key=lambda f: f.extent.name)


_HEX_LINE = re.compile(r"^(?:[0-9A-Fa-f]{64}|[0-9A-Fa-f]{2}(?: [0-9A-Fa-f]{2}){31})$")


def read_digest(answer: str, path: str) -> str:
    """The SHA-256 (lower-case hex) certutil printed for `path`. Three lines: `SHA256 hash of <path>:` (older
    releases: `SHA256 hash of file <path>:`, and the other words in the host's language), the digest (older releases
    space the byte pairs: `5a 5c b5 …`), then `CertUtil: …` (docs, section 4). The first line must end with the path
    as sent, so the digest is that file's; anything else is refused."""
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    if len(lines) != 3:
        raise ReadingError(f"certutil gave {len(lines)} lines, not three: {answer[:300]!r}")
    head, digest, tail = lines
    if not head.endswith(f"{path}:"):
        raise ReadingError(f"certutil's first line does not name {path}: {head!r}")
    if not _HEX_LINE.match(digest):
        raise ReadingError(f"not a SHA-256 line of certutil: {digest!r}")
    if not tail.startswith("CertUtil:"):
        raise ReadingError(f"not certutil's closing line: {tail!r}")
    return digest.replace(" ", "").lower()


class RemoveOutcome(StrEnum):
    """What `del` said of one file (its exit status says nothing)."""

    REMOVED = "removed"  # no words: del found the file and removed it
    NOT_FOUND = "not_found"  # "Could Not Find <path>": gone already (a repeat after a lost answer)


def read_removal(stdout: str, stderr: str, path: str) -> RemoveOutcome:
    """`del <path>`'s words read: nothing (removed), or `Could Not Find <path>` (gone before). Anything else, such as
    "Access is denied." or "The process cannot access the file because it is being used by another process.", or
    the same words in another language, is a ReadingError: the file is taken to be there, and kept."""
    lines = [line.strip() for line in (stdout + "\n" + stderr).splitlines() if line.strip()]
    if not lines:
        return RemoveOutcome.REMOVED
    if lines == [f"Could Not Find {path}"]:
        return RemoveOutcome.NOT_FOUND
    raise ReadingError(f"del did not remove {path}: {' / '.join(lines)[:300]!r}")


@dataclass(frozen=True)
class Group:
    """One line of `whoami /groups /fo csv /nh`: the group's name (`DOMAIN\\name`), its SID and its attributes (in
    the host's language, so only the SIDs are read for decisions)."""

    name: str
    sid: str
    attributes: str


ADMINISTRATORS_SID = "S-1-5-32-544"
HIGH_LABELS = frozenset({"S-1-16-12288", "S-1-16-16384"})
"""The mandatory labels of an elevated (High) or SYSTEM token: only then is BUILTIN\\Administrators more than a
group "used for deny only" (UAC)."""


def read_groups(answer: str) -> list[Group]:
    """The groups of `whoami /groups /fo csv /nh`: four quoted fields a line (name, type, SID, attributes); a line of
    another shape is refused."""
    groups: list[Group] = []
    for row in csv.reader(line for line in answer.splitlines() if line.strip()):
        if len(row) != 4 or not row[2].startswith("S-1-"):
            raise ReadingError(f"not a line of whoami /groups /fo csv /nh: {row!r}")
        groups.append(Group(row[0], row[2], row[3]))
    if not groups:
        raise ReadingError("whoami named no group")
    return groups


def group_names(answer: str) -> list[str]:
    return [group.name for group in read_groups(answer)]


def in_mqm(names: list[str]) -> bool:
    """Whether one of the groups is the local group mqm (`HOST\\mqm`, as whoami qualifies a local group)."""
    return any(name.rsplit("\\", 1)[-1].lower() == "mqm" for name in names)


def mq_administrator(groups: list[Group]) -> bool:
    """Whether the session may administer IBM MQ: a member of the local mqm group, or of Administrators in an
    elevated token (q014040: "on Windows only, local accounts can administer IBM MQ if they are members of the
    Administrators group"; q013300: SYSTEM, mqm, Administrators are its privileged users). Read by SID where Windows
    fixes one, since whoami words the rest in the host's language."""
    sids = {group.sid for group in groups}
    return in_mqm([group.name for group in groups]) or (ADMINISTRATORS_SID in sids and bool(sids & HIGH_LABELS))


COMMAND_PROCESSOR_KEYS = (
    r"HKLM\Software\Microsoft\Command Processor",
    r"HKCU\Software\Microsoft\Command Processor",
)
"""Where cmd.exe reads AutoRun (a command run before every `cmd /c`, as sshd starts it without /D) and
DelayedExpansion (`!NAME!` expanded inside quotes): Microsoft's registry reference and `cmd /?` (docs, section 1)."""


def command_processor_settings(key: str, tools: WindowsTools = TOOLS) -> Command:
    """`reg query` of one of COMMAND_PROCESSOR_KEYS: what the doctor must see absent before it trusts cmd.exe."""
    if key not in COMMAND_PROCESSOR_KEYS:
        raise ValueError(f"{key!r} is not a key of cmd.exe's settings")
    return Command(text=f"{tools.system('reg.exe')} query {_quoted(key)}", idempotent=True)


_REG_VALUE = re.compile(r"^\s{4}(?P<name>\S(?:.*?\S)?)\s{4}(?P<type>REG_[A-Z_]+)(?:\s{4}(?P<data>.*))?$")


def read_command_processor(stdout: str, exit_status: int) -> dict[str, str]:
    """The values `reg query KEY` lists (`    Name    REG_TYPE    data`), none when the key does not exist (reg's
    `ERROR: The system was unable to find the specified registry key or value.`, exit 1: the default, as HKCU's key
    is on a new profile). A line of another form is refused."""
    if exit_status == 1 and not stdout.strip():
        return {}
    if exit_status != 0:
        raise ReadingError(f"reg query ended {exit_status}: {stdout[:200]!r}")
    values: dict[str, str] = {}
    for line in stdout.splitlines():
        if not line.strip() or line.startswith("HKEY_"):
            continue
        match = _REG_VALUE.match(line)
        if match is None:
            raise ReadingError(f"not a line of reg query: {line!r}")
        values[match.group("name")] = match.group("data") or ""
    return values


def cmd_is_plain(values: dict[str, str]) -> bool:
    """Whether cmd.exe runs mqjournal's lines as sent: no AutoRun command, delayed expansion off (DelayedExpansion
    absent or 0x0, Microsoft's default)."""
    autorun = {name.lower(): data for name, data in values.items()}
    return not autorun.get("autorun", "").strip() and autorun.get("delayedexpansion", "0x0").lower() in ("0x0", "0")


def read_file_system_usage(answer: str, path: str) -> FileSystemUsage:
    """The volume of `path` from the one line `file_system_usage` asks for (total, free, free to this user)."""
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    if len(lines) != 1 or not re.fullmatch(r"\d+ \d+ \d+", lines[0]):
        raise ReadingError(f"not the volume's size, free and available bytes: {answer[:300]!r}")
    total, free, available = (int(n) for n in lines[0].split())
    if not available <= free <= total:
        raise ReadingError(f"the volume's bytes do not add up: {lines[0]!r}")
    drive = directory(path)[0].upper()
    return FileSystemUsage(f"{drive}:", f"{drive}:\\", total, total - free, available)


_VER = re.compile(r"^Microsoft Windows \[\w+ (?P<version>\d+\.\d+\.\d+(?:\.\d+)?)\]$")


def read_windows_version(answer: str) -> str:
    """The version `ver` prints (`Microsoft Windows [Version 10.0.17763.1879]`: 17763 is Windows Server 2019)."""
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    match = _VER.match(lines[0]) if len(lines) == 1 else None
    if match is None:
        raise ReadingError(f"not cmd.exe's ver (is the SSH server's DefaultShell cmd.exe?): {answer[:200]!r}")
    return match.group("version")
