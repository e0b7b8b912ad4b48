"""The UNIX platforms a queue manager with a linear log runs on (#32), each as the few command forms that differ.

IBM MQ lays out and logs a queue manager alike on Linux and AIX (docs/linux-interfaces.md, sections 1 and 12: the
same /var/mqm, qm.ini, extents, control commands and MQSC), and both hosts answer `df -P -k`, `id -G -n` and `rm -f`
as POSIX says. What differs is the base system's tools, so one frozen object per platform holds those forms:
- the listing of the log's active directory and its reader: GNU `ls --time-style=+%s` on Linux; POSIX `ls -l` on AIX,
  whose ls has no GNU option and no way to print seconds (its dates have a minute's precision, or a year only);
- the programs that can digest an extent, in the order they are tried: coreutils' `sha256sum` on Linux; on AIX, whose
  base system has no `sha256sum`, `openssl dgst -sha256 -r` (the openssl.base fileset), then the AIX Toolbox's
  sha256sum; and what to install when none answers;
- the administrator's command that puts a user in group mqm (`usermod -a -G`; AIX's `chgrpmem -m +`), which the
  doctor names.
A host's object comes from its fleet file entry (`LinuxHostConfig.platform`) and is handed to every step that builds
a command or reads an answer; nothing looks it up by itself. A platform to come (Windows) is another such object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType

from mqjournal.ibmi.commands import Command
from mqjournal.linuxmq import commands, readings
from mqjournal.linuxmq.readings import ListedFile

__all__ = ["AIX", "LINUX", "PLATFORMS", "UnixPlatform", "platform_of"]


@dataclass(frozen=True)
class UnixPlatform:
    """The forms of one platform's commands and answers that are not the same everywhere."""

    name: str
    mq_bin: str
    """IBM MQ's control commands in a default installation (MQ_INSTALLATION_PATH/bin)."""
    list_extents: Callable[[str], Command]
    """The command that lists the log's active directory."""
    read_listing: Callable[[str, datetime], list[ListedFile]]
    """Its reader: the answer and the moment it was read (a listing without years needs it)."""
    digest_tools: tuple[commands.DigestTool, ...]
    """The programs that may digest an extent, tried in this order; the first that answers is the host's."""
    digest_install: str
    """What to install when none answers."""
    join_group: str
    """The administrator's command that adds `{user}` to `{group}` (its primary group stays)."""

    @property
    def digest_programs(self) -> str:
        return ", ".join(" ".join(tool.words) for tool in self.digest_tools)


def _gnu_listing(answer: str, now: datetime) -> list[ListedFile]:
    return readings.listed_extents(answer)  # seconds since the epoch: no clock needed


LINUX = UnixPlatform(
    name="linux",
    mq_bin="/opt/mqm/bin",
    list_extents=commands.list_extents,
    read_listing=_gnu_listing,
    digest_tools=(commands.SHA256SUM,),
    digest_install="install GNU coreutils (it brings sha256sum) and check that it is on the PATH of the user's SSH "
    "commands",
    join_group="usermod -a -G {group} {user}",
)

AIX = UnixPlatform(
    name="aix",
    mq_bin="/usr/mqm/bin",
    list_extents=commands.list_extents_posix,
    read_listing=readings.listed_extents_posix,
    digest_tools=(commands.OPENSSL_DGST, commands.TOOLBOX_SHA256SUM),
    digest_install="install OpenSSL from the AIX base media (installp fileset openssl.base, which OpenSSH needs "
    "too) with /usr/bin on the PATH of the user's SSH commands, or coreutils from the AIX Toolbox (dnf install "
    "coreutils, /opt/freeware/bin/sha256sum)",
    join_group="chgrpmem -m + {user} {group}",
)

PLATFORMS: Mapping[str, UnixPlatform] = MappingProxyType({p.name: p for p in (LINUX, AIX)})


def platform_of(name: str) -> UnixPlatform:
    """The platform a fleet file names (`platform: linux` or `aix`)."""
    try:
        return PLATFORMS[name]
    except KeyError:
        raise ValueError(f"{name!r} is not a UNIX platform mqjournal knows ({', '.join(PLATFORMS)})") from None
