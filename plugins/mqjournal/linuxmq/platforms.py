"""The platforms a queue manager with a linear log runs on (#32), each as the command forms and readers that differ.

IBM MQ lays out and logs a queue manager alike on Linux, AIX and Windows (docs/linux-interfaces.md sections 1 and 12,
docs/windows-interfaces.md section 2: the same qm.ini, extents, control commands and MQSC). What differs is how a
command reaches them and the base system's tools, so one frozen object per platform builds every command mqjournal
sends to such a host and reads every answer whose form is the platform's:
- Linux and AIX (`UnixPlatform`): a POSIX shell; the forms of linuxmq/commands.py, and where the two differ, the
  listing of the log's active directory (GNU `ls --time-style=+%s`; AIX's POSIX `ls -l`), the programs that can
  digest an extent (coreutils' `sha256sum`; AIX's `openssl dgst -sha256 -r`, then the AIX Toolbox's sha256sum) and
  the administrator's command that puts a user in group mqm (`usermod -a -G`; `chgrpmem -m +`);
- Windows (`WindowsPlatform`): cmd.exe, as Win32-OpenSSH hands it the line; the forms of linuxmq/windowsforms.py
  (programs by full path, directories in double quotes, certutil's digest, `del` read by its words, PowerShell for
  the listing and the volume's room) and Windows paths (`C:\\...`, SFTP's `/C:/...`).
A host's object comes from its fleet file entry (`LinuxHostConfig.host_platform`) and is handed to every step that
builds a command or reads an answer; nothing looks it up by itself.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from types import MappingProxyType

from mqjournal.errors import InvalidName
from mqjournal.ibmi.commands import Command
from mqjournal.ibmi.transport import CommandOutput
from mqjournal.linuxmq import commands, readings, windowsforms
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.readings import FileSystemUsage, ListedFile, ReadingError
from mqjournal.linuxmq.snapshot import PlatformName
from mqjournal.names import qmgr_name

__all__ = [
    "AIX",
    "CERTUTIL",
    "LINUX",
    "PLATFORMS",
    "WINDOWS",
    "HostPlatform",
    "UnixPlatform",
    "WindowsPlatform",
    "platform_of",
]


@dataclass(frozen=True)
class HostPlatform(ABC):
    """Every command mqjournal sends to a queue manager host, and the readers of the answers whose form is the
    platform's (MQ's own answers, dspmq's, runmqsc's and qm.ini, read the same everywhere: linuxmq/readings.py,
    qmstatus.py, qmini.py)."""

    name: PlatformName
    """The fleet file's `platform` value."""
    label: str
    """The platform in its own terms, for people (Linux, AIX, Windows)."""
    mq_bin: str
    """IBM MQ's control commands in a default installation."""
    data_root: str
    """IBM MQ's data directory in a default installation."""
    digest_tools: tuple[commands.DigestTool, ...]
    """The programs that may digest an extent, tried in this order; the first that answers is the host's."""
    digest_install: str
    """What to install (or what to do) when none answers."""
    join_group: str
    """The administrator's command that adds `{user}` to `{group}`."""

    @property
    def digest_programs(self) -> str:
        return ", ".join(" ".join(tool.words) for tool in self.digest_tools)

    # --- names and paths: checked before any command exists ------------------------------------------------------

    @abstractmethod
    def directory(self, path: str) -> str:
        """`path` as a directory this platform's commands may name; InvalidName naming it and what to do."""

    @abstractmethod
    def queue_manager_name(self, name: str) -> str:
        """`name` as a queue manager this platform's commands may name; InvalidName naming it and why not."""

    @abstractmethod
    def file_path(self, directory: str, name: str) -> str:
        """A file's path in `directory`, in the host's own form."""

    @abstractmethod
    def active_log_path(self, log_path: str) -> str:
        """qm.ini's LogPath's `active` directory, with its trailing separator, as DISPLAY QMSTATUS LOGPATH shows it."""

    @abstractmethod
    def sftp_path(self, active: str, extent: str) -> str:
        """An extent's path as the host's SFTP server takes it (archive's download, restore's upload)."""

    # --- MQ's control commands and runmqsc ---------------------------------------------------------------------------

    @abstractmethod
    def record_media_images(self, bin_dir: str, qmgr: str) -> Command: ...

    @abstractmethod
    def queue_manager_info(self, bin_dir: str, qmgr: str) -> Command: ...

    @abstractmethod
    def data_path(self, stanza: str) -> str:
        """The queue manager's data directory from dspmqinf's stanza; ReadingError when it gives none to name."""

    @abstractmethod
    def read_qm_ini(self, data: str) -> Command: ...

    @abstractmethod
    def display_log_status(self, bin_dir: str, qmgr: str) -> Command: ...

    @abstractmethod
    def set_log_archived(self, bin_dir: str, qmgr: str, extent: Extent) -> Command: ...

    @abstractmethod
    def display_image_schedule(self, bin_dir: str, qmgr: str) -> Command: ...

    @abstractmethod
    def display_queue_media_log(self, bin_dir: str, qmgr: str, queue: str) -> Command: ...

    @abstractmethod
    def list_queue_managers(self, bin_dir: str) -> Command: ...

    @abstractmethod
    def queue_manager_status(self, bin_dir: str, qmgr: str) -> Command: ...

    @abstractmethod
    def start_queue_manager(self, bin_dir: str, qmgr: str) -> Command: ...

    @abstractmethod
    def recreate_object(self, bin_dir: str, qmgr: str, kind: str, name: str) -> Command: ...

    @abstractmethod
    def missing_program(self, out: CommandOutput) -> bool:
        """Whether the answer says the program is not there (the shell's own words or status)."""

    # --- the log's files -------------------------------------------------------------------------------------------

    @abstractmethod
    def list_extents(self, active: str) -> Command: ...

    @abstractmethod
    def read_listing(self, answer: str, now: datetime) -> list[ListedFile]:
        """The listing's extents; `now` for a listing without years. ReadingError for a line of another form."""

    @abstractmethod
    def extent_digest(self, active: str, extent: Extent, tool: commands.DigestTool) -> Command: ...

    @abstractmethod
    def read_digest(self, answer: str, path: str) -> str | None:
        """The SHA-256 the digest program printed for `path`, or None for any other answer."""

    @abstractmethod
    def remove_extent(self, active: str, extent: Extent) -> Command: ...

    @abstractmethod
    def removal_refused(self, out: CommandOutput, path: str) -> str | None:
        """Why the removal of `path` did not happen, as the host said it; None when it says the file went (or was
        gone). Release lists the directory again after, whatever this says."""

    @abstractmethod
    def file_system_usage(self, directory: str) -> Command: ...

    @abstractmethod
    def read_file_system_usage(self, answer: str, directory: str) -> FileSystemUsage: ...

    @abstractmethod
    def user_groups(self) -> Command: ...


def _said(out: CommandOutput) -> str:
    lines = (out.stderr or out.stdout).strip().splitlines()
    return lines[-1] if lines else "no output"


# --- Linux and AIX ---------------------------------------------------------------------------------------------------

_PLAIN_DIRECTORY = re.compile(r"/(?:[A-Za-z0-9._-]+/)*[A-Za-z0-9._-]*")


@dataclass(frozen=True)
class UnixPlatform(HostPlatform):
    """A POSIX host: linuxmq/commands.py's forms, with its own listing and digest programs."""

    listing: Callable[[str], Command]
    """The command that lists the log's active directory."""
    listing_reader: Callable[[str, datetime], list[ListedFile]]
    """Its reader: the answer and the moment it was read (a listing without years needs it)."""

    def directory(self, path: str) -> str:
        # A directory mqjournal names in a command: absolute, plain characters, no "..": nothing a shell expands.
        if not isinstance(path, str) or not _PLAIN_DIRECTORY.fullmatch(path) or ".." in path.split("/"):
            raise InvalidName(
                repr(path), "not an absolute directory of letters, digits, '.', '_', '-'", "give its plain path"
            )
        return path

    def queue_manager_name(self, name: str) -> str:
        return qmgr_name(name)

    def file_path(self, directory: str, name: str) -> str:
        return str(PurePosixPath(directory) / name)

    def active_log_path(self, log_path: str) -> str:
        return str(PurePosixPath(log_path) / "active") + "/"

    def sftp_path(self, active: str, extent: str) -> str:
        return str(PurePosixPath(active) / extent)

    def record_media_images(self, bin_dir: str, qmgr: str) -> Command:
        return commands.record_media_images(bin_dir, qmgr)

    def queue_manager_info(self, bin_dir: str, qmgr: str) -> Command:
        return commands.queue_manager_info(bin_dir, qmgr)

    def data_path(self, stanza: str) -> str:
        return readings.data_path(stanza)

    def read_qm_ini(self, data: str) -> Command:
        return commands.read_qm_ini(data)

    def display_log_status(self, bin_dir: str, qmgr: str) -> Command:
        return commands.display_log_status(bin_dir, qmgr)

    def set_log_archived(self, bin_dir: str, qmgr: str, extent: Extent) -> Command:
        return commands.set_log_archived(bin_dir, qmgr, extent)

    def display_image_schedule(self, bin_dir: str, qmgr: str) -> Command:
        return commands.display_image_schedule(bin_dir, qmgr)

    def display_queue_media_log(self, bin_dir: str, qmgr: str, queue: str) -> Command:
        return commands.display_queue_media_log(bin_dir, qmgr, queue)

    def list_queue_managers(self, bin_dir: str) -> Command:
        return commands.list_queue_managers(bin_dir)

    def queue_manager_status(self, bin_dir: str, qmgr: str) -> Command:
        return commands.queue_manager_status(bin_dir, qmgr)

    def start_queue_manager(self, bin_dir: str, qmgr: str) -> Command:
        return commands.start_queue_manager(bin_dir, qmgr)

    def recreate_object(self, bin_dir: str, qmgr: str, kind: str, name: str) -> Command:
        return commands.recreate_object(bin_dir, qmgr, kind, name)

    def missing_program(self, out: CommandOutput) -> bool:
        return out.exit_status in (126, 127)  # the shell's "not executable" and "not found" (POSIX)

    def list_extents(self, active: str) -> Command:
        return self.listing(active)

    def read_listing(self, answer: str, now: datetime) -> list[ListedFile]:
        return self.listing_reader(answer, now)

    def extent_digest(self, active: str, extent: Extent, tool: commands.DigestTool) -> Command:
        return commands.extent_digest(active, extent, tool)

    def read_digest(self, answer: str, path: str) -> str | None:
        return readings.extent_sha256(answer, path)

    def remove_extent(self, active: str, extent: Extent) -> Command:
        return commands.remove_extent(active, extent)

    def removal_refused(self, out: CommandOutput, path: str) -> str | None:
        # rm -f exits 0 when the file went or was not there, and >0 when it could not remove it (POSIX).
        if out.exit_status == 0:
            return None
        return f"the host refused it (status {out.exit_status}: {_said(out)})"

    def file_system_usage(self, directory: str) -> Command:
        return commands.file_system_usage(directory)

    def read_file_system_usage(self, answer: str, directory: str) -> FileSystemUsage:
        return readings.file_system_usage(answer)

    def user_groups(self) -> Command:
        return commands.user_groups()


def _gnu_listing(answer: str, now: datetime) -> list[ListedFile]:
    return readings.listed_extents(answer)  # seconds since the epoch: no clock needed


LINUX = UnixPlatform(
    name="linux",
    label="Linux",
    mq_bin="/opt/mqm/bin",
    data_root="/var/mqm",
    listing=commands.list_extents,
    listing_reader=_gnu_listing,
    digest_tools=(commands.SHA256SUM,),
    digest_install="install GNU coreutils (it brings sha256sum) and check that it is on the PATH of the user's SSH "
    "commands",
    join_group="usermod -a -G {group} {user}",
)

AIX = UnixPlatform(
    name="aix",
    label="AIX",
    mq_bin="/usr/mqm/bin",
    data_root="/var/mqm",
    listing=commands.list_extents_posix,
    listing_reader=readings.listed_extents_posix,
    digest_tools=(commands.OPENSSL_DGST, commands.TOOLBOX_SHA256SUM),
    digest_install="install OpenSSL from the AIX base media (installp fileset openssl.base, which OpenSSH needs "
    "too) with /usr/bin on the PATH of the user's SSH commands, or coreutils from the AIX Toolbox (dnf install "
    "coreutils, /opt/freeware/bin/sha256sum)",
    join_group="chgrpmem -m + {user} {group}",
)


# --- Windows ---------------------------------------------------------------------------------------------------------

CERTUTIL = commands.DigestTool(
    "certutil", (rf"{windowsforms.DEFAULT_SYSTEM32}\certutil.exe", "-hashfile"), "Windows (certutil.exe, every Windows)"
)
"""certutil's `-hashfile FILE SHA256` (docs/windows-interfaces.md section 3): the only digest program a Windows host
is asked for, so it is not probed (a failure is the digest's own, and proves nothing). Its `words` name it for people;
the command itself is windowsforms.extent_digest's, from the platform's system directory."""

_RC_NOT_RECOGNIZED, _RC_PATH_NOT_FOUND = 9009, 3  # cmd.exe: no such program / no such directory (errorlevels)


@dataclass(frozen=True)
class WindowsPlatform(HostPlatform):
    """A Windows host through cmd.exe: linuxmq/windowsforms.py's forms, programs by full path under `bin_dir` and
    `system32`."""

    system32: str = windowsforms.DEFAULT_SYSTEM32

    def tools(self, bin_dir: str) -> windowsforms.WindowsTools:
        return windowsforms.WindowsTools(mq_bin=bin_dir, system32=self.system32)

    def directory(self, path: str) -> str:
        return windowsforms.directory(path)

    def queue_manager_name(self, name: str) -> str:
        checked = windowsforms.windows_name(name)
        if "." in checked or "/" in checked:
            # MQ keeps such a queue manager in a directory with '!' or '&' (filenames), which cmd.exe may expand or
            # read as an operator: windowsforms.data_path refuses it, so it is refused before anything is sent.
            raise InvalidName(
                repr(name),
                "a queue manager name with '.' or '/' is kept by MQ in a directory named with '!' or '&', which "
                "cmd.exe may read as a variable (delayed expansion) or an operator",
                "leave this queue manager off the Windows host's list: mqjournal cannot name its log safely "
                "(docs/windows-interfaces.md section 3)",
            )
        return checked

    def file_path(self, directory: str, name: str) -> str:
        return f"{windowsforms.directory(directory).rstrip(chr(92))}\\{name}"

    def active_log_path(self, log_path: str) -> str:
        return windowsforms.active_directory(log_path) + "\\"

    def sftp_path(self, active: str, extent: str) -> str:
        return windowsforms.extent_sftp_path(active, Extent.parse(extent))

    def record_media_images(self, bin_dir: str, qmgr: str) -> Command:
        return windowsforms.record_media_images(qmgr, self.tools(bin_dir))

    def queue_manager_info(self, bin_dir: str, qmgr: str) -> Command:
        return windowsforms.queue_manager_info(qmgr, self.tools(bin_dir))

    def data_path(self, stanza: str) -> str:
        return windowsforms.data_path(stanza)

    def read_qm_ini(self, data: str) -> Command:
        return windowsforms.read_qm_ini(data)

    def display_log_status(self, bin_dir: str, qmgr: str) -> Command:
        return windowsforms.display_log_status(qmgr, self.tools(bin_dir))

    def set_log_archived(self, bin_dir: str, qmgr: str, extent: Extent) -> Command:
        return windowsforms.set_log_archived(qmgr, extent, self.tools(bin_dir))

    def display_image_schedule(self, bin_dir: str, qmgr: str) -> Command:
        return windowsforms.display_image_schedule(qmgr, self.tools(bin_dir))

    def display_queue_media_log(self, bin_dir: str, qmgr: str, queue: str) -> Command:
        return windowsforms.display_queue_media_log(qmgr, queue, self.tools(bin_dir))

    def list_queue_managers(self, bin_dir: str) -> Command:
        return windowsforms.list_queue_managers(self.tools(bin_dir))

    def queue_manager_status(self, bin_dir: str, qmgr: str) -> Command:
        return windowsforms.queue_manager_status(qmgr, self.tools(bin_dir))

    def start_queue_manager(self, bin_dir: str, qmgr: str) -> Command:
        return windowsforms.start_queue_manager(qmgr, self.tools(bin_dir))

    def recreate_object(self, bin_dir: str, qmgr: str, kind: str, name: str) -> Command:
        return windowsforms.recreate_object(qmgr, kind, name, self.tools(bin_dir))

    def missing_program(self, out: CommandOutput) -> bool:
        return out.exit_status in (_RC_NOT_RECOGNIZED, _RC_PATH_NOT_FOUND)

    def list_extents(self, active: str) -> Command:
        return windowsforms.list_extents(active, self.tools(self.mq_bin))

    def read_listing(self, answer: str, now: datetime) -> list[ListedFile]:
        return windowsforms.listed_extents(answer)

    def extent_digest(self, active: str, extent: Extent, tool: commands.DigestTool) -> Command:
        return windowsforms.extent_digest(active, extent, self.tools(self.mq_bin))

    def read_digest(self, answer: str, path: str) -> str | None:
        try:
            return windowsforms.read_digest(answer, path)
        except ReadingError:
            return None

    def remove_extent(self, active: str, extent: Extent) -> Command:
        return windowsforms.remove_extent(active, extent)

    def removal_refused(self, out: CommandOutput, path: str) -> str | None:
        # del exits 0 whether or not the file went (docs/windows-interfaces.md section 3): its words decide.
        try:
            windowsforms.read_removal(out.stdout, out.stderr, path)
        except ReadingError as exc:
            return f"the host did not remove it ({exc})"
        return None

    def file_system_usage(self, directory: str) -> Command:
        return windowsforms.file_system_usage(directory, self.tools(self.mq_bin))

    def read_file_system_usage(self, answer: str, directory: str) -> FileSystemUsage:
        return windowsforms.read_file_system_usage(answer, directory)

    def user_groups(self) -> Command:
        return windowsforms.user_groups(self.tools(self.mq_bin))


WINDOWS = WindowsPlatform(
    name="windows",
    label="Windows",
    mq_bin=windowsforms.DEFAULT_MQ_BIN,
    data_root=r"C:\ProgramData\IBM\MQ",
    digest_tools=(CERTUTIL,),
    digest_install=rf"check that {windowsforms.DEFAULT_SYSTEM32}\certutil.exe runs for the user over SSH and may "
    "read the log's files (group mqm); mqjournal proves no copy without it",
    join_group="net localgroup {group} {user} /add",
)

PLATFORMS: Mapping[str, HostPlatform] = MappingProxyType({p.name: p for p in (LINUX, AIX, WINDOWS)})


def platform_of(name: str) -> HostPlatform:
    """The platform a fleet file names (`platform: linux`, `aix` or `windows`)."""
    try:
        return PLATFORMS[name]
    except KeyError:
        raise ValueError(f"{name!r} is not a platform mqjournal knows ({', '.join(PLATFORMS)})") from None
