"""Collect one Linux queue manager's linear log over SSH: media images, then what the log is and where it stands.

In order, each a command the audit log records before it is sent (linuxmq/commands.py):
1. `rcdmqimg -l -m QM -t all *`: media images of every object, which moves MEDIALOG forward (q083360: "Running
   rcdmqimg moves the log sequence number (LSN) forwards and frees up old log files for archival or deletion"). Only
   where the host's policy says so (`media_images: rcdmqimg`); with `imgsched` the queue manager's own automatic
   imaging (IMGSCHED(AUTO)) is relied on and nothing is forced.
2. `dspmqinf -o stanza QM`, then `cat <DataPath>/qm.ini`: the log's type, management and extent size.
3. `runmqsc QM` with `DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG ARCHLOG LOGPATH` on its standard input.
4. The listing of `<LOGPATH>` in its platform's form (linuxmq/platforms.py: `ls -l --time-style=+%s` on Linux,
   `LC_ALL=C ls -l` on AIX, a PowerShell listing on Windows): the extents on disk, by name.
Each command is the host's platform's form of it (linuxmq/platforms.py: on Windows the same programs by full path
through cmd.exe, and `type` for qm.ini); the answers are MQ's, read alike.
What fails is raised as LinuxCollectError naming the queue manager and what to do; nothing is half recorded.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Literal

from mqjournal.errors import MqJournalError
from mqjournal.ibmi.transport import CommandOutput, IbmiSession
from mqjournal.linuxmq.platforms import LINUX, HostPlatform
from mqjournal.linuxmq.qmini import LogConfig, QmIniError, log_config
from mqjournal.linuxmq.qmstatus import QmStatusError, attributes
from mqjournal.linuxmq.readings import ReadingError
from mqjournal.linuxmq.snapshot import DamagedObject, LinuxSnapshot, LogExtent, MediaImages

__all__ = ["LinuxCollectError", "collect", "damaged_objects", "log_configuration", "log_extents", "log_status"]

_AMQ = re.compile(r"\b(AMQ\d{4}[IWES])\b")
_DAMAGED = re.compile(r"\bAMQ7472[IWES]?:?\s+Object (?P<name>\S+), type (?P<type>[A-Za-z]+) damaged\.")


class LinuxCollectError(MqJournalError):
    """A Linux queue manager's log state could not be read."""


def _ids(out: CommandOutput) -> list[str]:
    return _AMQ.findall(out.stdout + "\n" + out.stderr)


def damaged_objects(said: str) -> list[DamagedObject]:
    """The objects rcdmqimg reported damaged (AMQ7472), once each, in its order. A name MQ would not take is left
    out rather than recorded: it could not be re-created by name anyway, and MEDIALOG's "stuck" alert still says it."""
    found: dict[tuple[str, str], DamagedObject] = {}
    for match in _DAMAGED.finditer(said):
        try:
            damaged = DamagedObject(name=match.group("name"), type=match.group("type"))
        except ValueError:
            continue
        found.setdefault((damaged.name, damaged.type), damaged)
    return list(found.values())


def _checked(out: CommandOutput, where: str, what: str, action: str) -> str:
    if out.exit_status != 0:
        said = (out.stderr or out.stdout).strip().splitlines()
        raise LinuxCollectError(
            where, f"{what} ended with status {out.exit_status}: {said[-1] if said else 'no output'}", action
        )
    return out.stdout


def collect(
    session: IbmiSession,
    qmgr: str,
    *,
    host: str,
    run_id: str,
    bin_dir: str,
    media_images: Literal["rcdmqimg", "imgsched"] = "rcdmqimg",
    platform: HostPlatform = LINUX,
) -> LinuxSnapshot:
    images = MediaImages(forced=False, ok=False)
    if media_images == "rcdmqimg":
        out = session.run(platform.record_media_images(bin_dir, qmgr))
        images = MediaImages(
            forced=True,
            ok=out.exit_status == 0,
            at=datetime.now(UTC),
            messages=_ids(out),
            damaged=damaged_objects(out.stdout + "\n" + out.stderr),
        )
    config = log_configuration(session, qmgr, bin_dir=bin_dir, platform=platform)
    found = log_status(session, qmgr, bin_dir=bin_dir, platform=platform)
    points = {key: found.get(key) or None for key in ("CURRLOG", "RECLOG", "MEDIALOG", "ARCHLOG")}
    log_path = found.get("LOGPATH") or platform.active_log_path(config.log_path)
    extents = log_extents(session, qmgr, log_path, platform=platform) if config.linear else []
    return LinuxSnapshot(
        run_id=run_id,
        platform=platform.name,
        collected_at=datetime.now(UTC),
        host=host,
        qmgr=qmgr,
        log_type=config.log_type,  # type: ignore[arg-type]
        log_management=config.management,
        log_path=log_path,
        extent_bytes=config.extent_bytes,
        current_extent=points["CURRLOG"],
        restart_extent=points["RECLOG"],
        media_extent=points["MEDIALOG"],
        archive_extent=points["ARCHLOG"],
        media_images=images,
        extents=extents,
    )


def log_configuration(
    session: IbmiSession, qmgr: str, *, bin_dir: str, where: str | None = None, platform: HostPlatform = LINUX
) -> LogConfig:
    """qm.ini's Log: stanza, found through dspmqinf: what the log is and where, read whether or not the queue manager
    runs (a recovery reads it of one that does not start)."""
    where = where or f"{session.host} {qmgr}"
    info = _checked(
        session.run(platform.queue_manager_info(bin_dir, qmgr)),
        where,
        "dspmqinf",
        "check that the queue manager exists on this host (dspmq) and that the fleet file spells it as MQ does",
    )
    try:
        data = platform.data_path(info)
    except ReadingError as exc:
        raise LinuxCollectError(where, str(exc), "check the queue manager's entry in mqs.ini (dspmqinf)") from exc
    ini_text = _checked(
        session.run(platform.read_qm_ini(data)),
        where,
        "reading qm.ini",
        "give the user read access to the queue manager's data directory (membership of group mqm)",
    )
    try:
        return log_config(ini_text)
    except QmIniError as exc:
        raise LinuxCollectError(where, str(exc), "check the Log: stanza of the queue manager's qm.ini") from exc


def log_status(session: IbmiSession, qmgr: str, *, bin_dir: str, platform: HostPlatform = LINUX) -> dict[str, str]:
    """DISPLAY QMSTATUS's log attributes, as runmqsc answers them."""
    status = session.run(platform.display_log_status(bin_dir, qmgr))
    try:
        return attributes(status.stdout)
    except QmStatusError as exc:
        raise LinuxCollectError(
            f"{session.host} {qmgr}",
            f"DISPLAY QMSTATUS: {exc}",
            "start the queue manager, or grant the user +connect +dsp on it",
        ) from exc


def log_extents(session: IbmiSession, qmgr: str, log_path: str, *, platform: HostPlatform = LINUX) -> list[LogExtent]:
    """The extent files of the log's active directory, by name, listed and read in the `platform`'s form."""
    where = f"{session.host} {qmgr}"
    listing = _checked(
        session.run(platform.list_extents(log_path)),
        where,
        f"listing {log_path}",
        "give the user read access to the log directory (membership of group mqm)",
    )
    try:
        listed = platform.read_listing(listing, datetime.now(UTC))
    except ReadingError as exc:
        raise LinuxCollectError(
            where, str(exc), f"report this listing: it does not read as the {platform.label} host's listing"
        ) from exc
    return [LogExtent(name=f.extent.name, size_bytes=f.size_bytes, modified_at=f.modified_at) for f in listed]
