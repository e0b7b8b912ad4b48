"""`mqjournal doctor` for a Linux, AIX or Windows host of the fleet (#32): is it ready for mqjournal? Read only; per
check pass, warn or fail, and for each that is not a pass, what to do. The same report as a partition's
(doctor.HostReport). Every command is the host's platform's form (linuxmq/platforms.py); a Windows host is first
checked for a shell that runs mqjournal's lines as sent, its MQ authority read by SID, and certutil
(linuxmq/windowsdoctor.py, docs/windows-interfaces.md section 5), then as below.

What it sends, each through IbmiSession.run (audited: intent before, outcome after), built in linuxmq/commands.py
from the fleet file's checked names; none of it changes the host:
- `id -G -n`: the sign-on itself (SSH reach, the pinned host key) and the session's groups: mqm among them?
- the host's digest of /dev/null, the proof every extent copy is held to: `sha256sum /dev/null` on Linux; on AIX
  `openssl dgst -sha256 -r /dev/null`, then the AIX Toolbox's sha256sum, until one answers (linuxmq/extentdigest.py);
- `<mq_bin>/dspmq`: MQ's control commands run from the fleet file's `mq_bin`, and each queue manager's status;
and for each queue manager (those the fleet file names, else every one dspmq lists):
- `dspmqinf -o stanza QM`, `cat <DataPath>/qm.ini`: LogType, LogManagement, LogPath (collector.log_configuration);
- `runmqsc QM` with `DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG ARCHLOG LOGPATH` (collector.log_status), running only;
- the listing of <LOGPATH> (collector.log_extents): the log directory readable and listable;
- `runmqsc QM` with `DISPLAY QMGR IMGSCHED`, when the fleet file leaves media images to the queue manager;
- `df -P -k <LOGPATH>`: the log file system's room.
Why each is asked, and what IBM says of it, is docs/linux-interfaces.md section 11 (verified / assumed).
"""

from __future__ import annotations

from mqjournal.doctorreport import HostReport, answers_or_failures, checking_session
from mqjournal.fleet import FleetConfig
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import CommandOutput, ConnectFactory, IbmiSession
from mqjournal.linuxfleet import LinuxHostConfig
from mqjournal.linuxmq import readings, windowsdoctor
from mqjournal.linuxmq.collector import LinuxCollectError, log_configuration, log_extents, log_status
from mqjournal.linuxmq.extentdigest import discover
from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxmq.platforms import HostPlatform, WindowsPlatform
from mqjournal.linuxmq.qmini import LogConfig
from mqjournal.linuxmq.qmstatus import QMGR_DETAILS, QmStatusError, attributes, log_points
from mqjournal.linuxmq.snapshot import LogExtent
from mqjournal.sizefmt import size

__all__ = ["LOG_FILE_SYSTEM_WARN_USED", "MQM", "check_linux_host"]

MQM = "mqm"
"""The group IBM MQ's administrators belong to on Linux (docs section 8)."""
LOG_FILE_SYSTEM_WARN_USED = 0.90
"""A log file system this full is warned about. ASSUMED: the IBM i ASP warning's level; IBM names none for Linux."""
RUNNING = "Running"
"""dspmq's STATUS of a queue manager running here (captured; "Running as standby" and "Running elsewhere" are not)."""


def check_linux_host(
    config: FleetConfig,
    host: LinuxHostConfig,
    *,
    connect: ConnectFactory | None = None,
    audit: AuditLog | None = None,
    session: IbmiSession | None = None,
) -> HostReport:
    """Every check for one Linux host; never raises for what the host answers (a failed check says it). Give
    `connect` and `audit` (the CLI), or an open `session` (Airflow's, from the host's connection)."""
    report = HostReport(host.name)
    if session is None:
        if connect is None or audit is None:
            raise ValueError("give connect and audit, or a session")
        session = checking_session(host, host.user, connect, audit, command_timeout=30.0)
    # Win32-OpenSSH keeps its host keys under %ProgramData%\ssh (its sshd_config: docs/windows-interfaces.md, 1).
    keys = (
        "C:\\ProgramData\\ssh\\ssh_host_<type>_key.pub"
        if isinstance(host.host_platform, WindowsPlatform)
        else "/etc/ssh/ssh_host_<type>_key.pub"
    )
    host_key_fix = (
        f"compare the key fingerprint with the host's (on the host: ssh-keygen -lf {keys} "
        f"for the key type named above), then pin it in the connection's host_key (Airflow) or {config.known_hosts}"
    )
    with session, answers_or_failures(report, host_key_fix):
        _checks(report, session, host)
    return report


def _said(out: CommandOutput) -> str:
    lines = (out.stderr or out.stdout).strip().splitlines()
    return lines[-1][:200] if lines else f"exit status {out.exit_status}"


def _checks(report: HostReport, session: IbmiSession, host: LinuxHostConfig) -> None:
    platform = host.host_platform
    if isinstance(platform, WindowsPlatform):
        if not windowsdoctor.shell(report, session, host):
            return  # not cmd.exe, or one that may run more than the line: nothing else is sent
        windowsdoctor.authority(report, session, host, platform)
    else:
        groups = session.run(platform.user_groups())
        report.add(
            "SSH and host key", "pass", f"{host.user}@{host.address}:{host.port} signed on; the host key matched"
        )
        _group(report, host, groups)
        _digest(report, session, host)
    listed = _control_commands(report, session, host)
    if listed is None:
        return
    wanted = [q.name for q in host.queue_managers] or sorted(listed)
    if isinstance(platform, WindowsPlatform) and wanted:
        windowsdoctor.digest(report, session, host, platform, wanted[0])
    if not wanted:
        report.add(
            "queue managers",
            "fail",
            "the fleet file names no queue manager for this host and dspmq lists none",
            "name the host's queue managers under its queue_managers in the fleet file",
        )
        return
    for name in wanted:
        _queue_manager(report, session, host, name, listed)


def _group(report: HostReport, host: LinuxHostConfig, out: CommandOutput) -> None:
    """Group mqm: IBM asks it of whoever issues MQ's control commands (rcdmqimg among them), and the log's files are
    the group's. setmqaut can grant runmqsc's authorities to others, but neither a control command nor the files."""
    title = f"group {MQM}"
    try:
        names = readings.group_names(out.stdout) if out.exit_status == 0 else None
    except readings.ReadingError:
        names = None
    if names is None:
        report.add(title, "fail", f"id -G -n named no groups ({_said(out)})", "check that id runs for this user")
        return
    if MQM in names:
        report.add(title, "pass", f"{host.user} is in group {MQM} (its groups: {' '.join(names)})")
        return
    needs = ["qm.ini and the log extents (files of group mqm)", "DISPLAY QMSTATUS and SET LOG ARCHIVED (runmqsc)"]
    if host.media_images == "rcdmqimg":
        needs.insert(0, "rcdmqimg at each collection (a control command)")
    report.add(
        title,
        "fail",
        f"{host.user} is not in group {MQM} (its groups: {' '.join(names) or 'none'}); mqjournal needs it for "
        + "; ".join(needs),
        f"as root: {host.host_platform.join_group.format(group=MQM, user=host.user)}; then mqjournal signs on again "
        "(a session keeps the groups it began with)",
    )


def _digest(report: HostReport, session: IbmiSession, host: LinuxHostConfig) -> None:
    """Whether the host can digest an extent: without its SHA-256 no copy off the host proves an archive."""
    platform = host.host_platform
    tool, said = discover(session, platform)
    title = "SHA-256 of an extent on the host"
    if tool is not None:
        report.add(title, "pass", f"{' '.join(tool.words)} answers ({tool.brought_by})")
        return
    tried = "; ".join(f"{' '.join(t.words)}: {_said(out)}" for t, out in zip(platform.digest_tools, said, strict=True))
    report.add(
        title,
        "fail",
        f"no program gives a SHA-256 ({tried}): no copy of this host's extents can be compared with the host's "
        "bytes, so none counts as archived and no extent is released (SET LOG ARCHIVED, rm) on its account",
        platform.digest_install,
    )


def _control_commands(report: HostReport, session: IbmiSession, host: LinuxHostConfig) -> dict[str, str] | None:
    """dspmq from the fleet file's mq_bin: the installation is there, and what it lists (None when it does not)."""
    title = f"MQ control commands ({host.mq_bin})"
    out = session.run(host.host_platform.list_queue_managers(host.mq_bin))
    if host.host_platform.missing_program(out):
        report.add(
            title,
            "fail",
            f"no dspmq runs from {host.mq_bin} ({_said(out)})",
            "set the host's mq_bin in the fleet file to the bin directory of the installation its queue managers "
            f"belong to ({host.host_platform.mq_bin} by default; dspmq -o installation on the host names each queue "
            "manager's)",
        )
        return None
    try:
        listed = readings.queue_manager_statuses(out.stdout) if out.exit_status == 0 else None
    except readings.ReadingError as exc:
        report.add(title, "fail", str(exc), "report this answer of dspmq: it does not read as dspmq's")
        return None
    if listed is None:
        report.add(
            title,
            "fail",
            f"dspmq ended with status {out.exit_status} ({_said(out)})",
            "check the installation (dspmqver) and that the user may run its control commands (group mqm)",
        )
        return None
    shown = ", ".join(f"{name} {status}" for name, status in sorted(listed.items())) or "no queue managers"
    report.add(title, "pass", f"dspmq answers: {shown}")
    return listed


def _queue_manager(
    report: HostReport, session: IbmiSession, host: LinuxHostConfig, name: str, listed: dict[str, str]
) -> None:
    status = listed.get(name)
    if status is None:
        report.add(
            f"queue manager {name}",
            "fail",
            f"dspmq lists no {name} ({', '.join(sorted(listed)) or 'none'} on this host)",
            "spell the name in the fleet file as dspmq shows it (queue manager names are case-sensitive)",
        )
        return
    running = status == RUNNING
    if running:
        report.add(f"queue manager {name}", "pass", f"dspmq: STATUS({status})")
    else:
        report.add(
            f"queue manager {name}",
            "fail",
            f"dspmq: STATUS({status}): its log status (DISPLAY QMSTATUS) and media images are read and recorded only "
            "while it runs, so nothing of its log can be planned",
            f"start it (strmqm {name}); a multi-instance queue manager is worked on where its active instance runs: "
            "name that host in the fleet file",
        )
    try:
        config = log_configuration(session, name, bin_dir=host.mq_bin, platform=host.host_platform)
    except LinuxCollectError as exc:
        report.add(f"qm.ini ({name})", "fail", exc.problem, exc.action)
        return
    if not _log_type(report, name, config):
        return
    _log_management(report, name, config)
    found = _log_status(report, session, host, name) if running else None
    log_path = (found or {}).get("LOGPATH") or host.host_platform.active_log_path(config.log_path)
    extents = _log_path(report, session, name, log_path, host.host_platform)
    _media_images(report, session, host, name, running)
    _log_file_system(report, session, host.host_platform, name, log_path, config, found, extents)


def _log_type(report: HostReport, name: str, config: LogConfig) -> bool:
    """Whether the log is linear: only a linear log has extents mqjournal archives; another is said, not planned."""
    title = f"log type ({name})"
    if config.linear:
        report.add(title, "pass", f"LogType=LINEAR, LogPath {config.log_path}, extents of {size(config.extent_bytes)}")
        return True
    if config.log_type == "CIRCULAR":
        report.add(
            title,
            "warn",
            "LogType=CIRCULAR: the log serves restart only and reuses its extents itself; none may ever be removed "
            "(IBM: for circular logging, never delete data from the log directory): nothing to plan, mqjournal reads "
            "and reports this queue manager only",
            "nothing to do if that is intended; for its log to be archived and media recovery possible, the queue "
            f"manager needs linear logging (IBM's migmqlog changes the log type while {name} is ended)",
        )
    else:
        report.add(
            title,
            "warn",
            f"LogType={config.log_type}: a Native HA queue manager's replicated log is out of mqjournal's scope: "
            "nothing to plan, it is read and reported only",
            "nothing to do: the Native HA group keeps its own log",
        )
    return False


def _log_management(report: HostReport, name: str, config: LogConfig) -> None:
    title = f"log management ({name})"
    if config.management is LogManagement.AUTOMATIC:
        report.add(
            title,
            "warn",
            "LogManagement=Automatic: MQ reuses or deletes each extent neither restart nor media recovery needs by "
            "itself, archived or not: mqjournal only watches this log (it copies and releases nothing)",
            "for its extents to be archived before MQ lets them go, set LogManagement=Archive in the Log: stanza of "
            f"{name}'s qm.ini and restart it",
        )
    elif config.management is LogManagement.ARCHIVE:
        report.add(
            title,
            "pass",
            "LogManagement=Archive: MQ reuses an extent only once told it is archived; mqjournal copies and proves "
            "each, then tells it (SET LOG ARCHIVED)",
        )
    else:
        report.add(
            title,
            "pass",
            "LogManagement=Manual: MQ keeps every extent; mqjournal copies and proves each, then removes those "
            "neither restart nor media recovery needs",
        )


def _log_status(report: HostReport, session: IbmiSession, host: LinuxHostConfig, name: str) -> dict[str, str] | None:
    title = f"DISPLAY QMSTATUS ({name})"
    try:
        found = log_status(session, name, bin_dir=host.mq_bin, platform=host.host_platform)
        points = log_points(found)
    except LinuxCollectError as exc:
        report.add(title, "fail", exc.problem, exc.action)
        return None
    except QmStatusError as exc:
        report.add(title, "fail", f"its log points do not read: {exc}", "report this answer of runmqsc")
        return None
    waiting = f", ARCHLOG {found['ARCHLOG']}" if found.get("ARCHLOG") else ""
    report.add(
        title,
        "pass",
        f"CURRLOG {points.current.name}, RECLOG {points.restart.name}, MEDIALOG {points.media.name}{waiting}",
    )
    return found


def _log_path(
    report: HostReport, session: IbmiSession, name: str, log_path: str, platform: HostPlatform
) -> list[LogExtent] | None:
    title = f"log path ({name})"
    try:
        extents = log_extents(session, name, log_path, platform=platform)
    except LinuxCollectError as exc:
        report.add(title, "fail", exc.problem, exc.action)
        return None
    held = size(sum(e.size_bytes for e in extents))
    report.add(title, "pass", f"{log_path} is listed: {len(extents)} extents, {held}")
    return extents


def _media_images(report: HostReport, session: IbmiSession, host: LinuxHostConfig, name: str, running: bool) -> None:
    """What moves MEDIALOG on: rcdmqimg at each collection, or the queue manager's own images (IMGSCHED(AUTO)). Without
    either MEDIALOG stays, and every extent from it on is kept."""
    title = f"media images ({name})"
    if host.media_images == "rcdmqimg":
        report.add(title, "pass", "each collection runs rcdmqimg (the fleet file's media_images: rcdmqimg)")
        return
    if not running:
        report.add(title, "skip", "DISPLAY QMGR IMGSCHED is read from a running queue manager only")
        return
    out = session.run(host.host_platform.display_image_schedule(host.mq_bin, name))
    try:
        schedule = attributes(out.stdout, QMGR_DETAILS).get("IMGSCHED", "")
    except QmStatusError as exc:
        report.add(
            title,
            "fail",
            f"DISPLAY QMGR IMGSCHED: {exc}",
            "check that the user may run runmqsc on the queue manager (group mqm)",
        )
        return
    if schedule == "AUTO":
        report.add(title, "pass", "IMGSCHED(AUTO): the queue manager records its media images (media_images: imgsched)")
        return
    report.add(
        title,
        "warn",
        f"IMGSCHED({schedule or ' '}): the fleet file leaves media images to the queue manager (media_images: "
        "imgsched) but it records none by itself: MEDIALOG will not move, and every extent from it on is kept",
        f"ALTER QMGR IMGSCHED(AUTO) in runmqsc {name} (IMGINTVL and IMGLOGLN say how often), or set the host's "
        "media_images to rcdmqimg in the fleet file",
    )


def _log_file_system(
    report: HostReport,
    session: IbmiSession,
    platform: HostPlatform,
    name: str,
    log_path: str,
    config: LogConfig,
    found: dict[str, str] | None,
    extents: list[LogExtent] | None,
) -> None:
    """The room left where the log grows: MQ stops working well when it cannot format a new extent (IBM, "Log file
    location"), and a linear log only grows until extents are let go."""
    title = f"log file system ({name})"
    out = session.run(platform.file_system_usage(log_path))
    try:
        usage = platform.read_file_system_usage(out.stdout, log_path) if out.exit_status == 0 else None
    except readings.ReadingError:
        usage = None
    if usage is None:
        report.add(
            title,
            "warn",
            f"`{platform.file_system_usage(log_path).text}` gave no usage ({_said(out)}): the room left for the log "
            "is not known",
            "check that the command runs for the user and may see the log path",
        )
        return
    text = (
        f"{usage.mounted_on} ({usage.device}): {usage.used_fraction:.0%} used, {size(usage.available_bytes)} free "
        f"of {size(usage.size_bytes)}"
    )
    room = (config.primary_files + config.secondary_files) * config.extent_bytes
    short = []
    if usage.used_fraction >= LOG_FILE_SYSTEM_WARN_USED:
        short.append(f"{LOG_FILE_SYSTEM_WARN_USED:.0%} used or more")
    if usage.available_bytes < room:
        counted = f"{config.primary_files} + {config.secondary_files} extents"
        short.append(f"less room than the log's {counted} ({size(room)})")
    if not short:
        report.add(title, "pass", text)
        return
    report.add(title, "warn", f"{text}: {' and '.join(short)}", _what_fills(config, found, extents, log_path))


def _what_fills(config: LogConfig, found: dict[str, str] | None, extents: list[LogExtent] | None, log_path: str) -> str:
    """What holds the log's room, in the words of the log's own points and mode (docs section 3 and 7)."""
    held = (
        f"its {len(extents)} in {log_path}, {size(sum(e.size_bytes for e in extents))}"
        if extents is not None
        else f"those in {log_path}"
    )
    found = found or {}
    points = f" (RECLOG {found['RECLOG']}, MEDIALOG {found['MEDIALOG']})" if found.get("RECLOG") else ""
    if config.management is LogManagement.ARCHIVE:
        waiting = f"; ARCHLOG {found['ARCHLOG']} is the oldest waiting" if found.get("ARCHLOG") else ""
        behind = f"those behind both stay until MQ is told they are archived (SET LOG ARCHIVED{waiting})"
    elif config.management is LogManagement.MANUAL:
        behind = "those behind both stay until they are removed (in Manual mode MQ removes none)"
    else:
        behind = "MQ reuses or deletes those behind both itself"
    return (
        f"what fills it: the log's extents ({held}). Every extent from the older of RECLOG and MEDIALOG{points} on "
        f"stays, restart or media recovery needs it; {behind}. Let mqjournal archive and release what is behind both "
        "(approve the gate), see to a MEDIALOG that does not move (media images, a damaged object) or a RECLOG held "
        "by a long unit of work, or grow the file system"
    )
