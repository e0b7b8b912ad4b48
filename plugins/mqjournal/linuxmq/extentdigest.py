"""The host's own SHA-256 of an extent, by whichever of its platform's digest programs answers there (#32).

A copy in the backup store proves an extent only when its bytes hash to what the host computed of the extent
(linuxmq/archive.py), and a restored file is the copy only when the host's digest of it is the copy's
(linuxmq/restore.py). Which program computes it is found out on the host, as the IBM i side does
(ibmi/hostdigest.py): each of the platform's programs is run on /dev/null, whose SHA-256 is known, and the first that
answers it is used for the rest of the session. A platform with one program (Linux: sha256sum) is not probed: the
digest itself answers or fails. A host where none answers has no proof to give: no copy from it counts, nothing is
released on its account, and the error and `mqjournal doctor` say what to install (platforms.HostPlatform). On
Windows the one program is certutil, its answer read by windowsforms.read_digest (the first line must name the
file sent).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from mqjournal.ibmi.hostdigest import EMPTY_SHA256, parse_digest
from mqjournal.ibmi.transport import CommandOutput, IbmiSession
from mqjournal.linuxmq import commands
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.platforms import HostPlatform

__all__ = ["HostSha256", "digest_tool", "discover", "host_sha256"]

_FOUND: weakref.WeakKeyDictionary[IbmiSession, dict[str, commands.DigestTool | None]] = weakref.WeakKeyDictionary()


def discover(session: IbmiSession, platform: HostPlatform) -> tuple[commands.DigestTool | None, list[CommandOutput]]:
    """The first of the platform's programs that gives /dev/null's SHA-256 here (None: none does), and each answer
    read on the way. A program that is missing (exit 126/127), fails, or answers another digest is passed over."""
    said: list[CommandOutput] = []
    for tool in platform.digest_tools:
        out = session.run(commands.digest_probe(tool))
        said.append(out)
        if out.exit_status == 0 and parse_digest(out.stdout) == EMPTY_SHA256:
            _FOUND.setdefault(session, {})[platform.name] = tool
            return tool, said
    _FOUND.setdefault(session, {})[platform.name] = None
    return None, said


def digest_tool(session: IbmiSession, platform: HostPlatform) -> commands.DigestTool | None:
    """The program that digests extents on this host: found once per session (`discover`), or the platform's only
    one, unprobed."""
    if len(platform.digest_tools) == 1:
        return platform.digest_tools[0]
    known = _FOUND.get(session, {})
    if platform.name in known:
        return known[platform.name]
    return discover(session, platform)[0]


@dataclass(frozen=True)
class HostSha256:
    """The host's answer for one extent: its SHA-256, or None and what the host said instead."""

    sha256: str | None
    said: str


def host_sha256(session: IbmiSession, platform: HostPlatform, active: str, extent: Extent) -> HostSha256:
    """The host's SHA-256 of `extent` in the log's `active` directory, by its digest program."""
    tool = digest_tool(session, platform)
    if tool is None:
        return HostSha256(
            None,
            f"none of {platform.digest_programs} gives a SHA-256 on this host; to give one: {platform.digest_install}",
        )
    out = session.run(platform.extent_digest(active, extent, tool))
    path = platform.file_path(active, extent.name)
    sha256 = platform.read_digest(out.stdout, path) if out.exit_status == 0 else None
    if sha256 is not None:
        return HostSha256(sha256, out.stdout.strip())
    return HostSha256(None, (out.stderr or out.stdout).strip()[-300:] or f"exit status {out.exit_status}")
