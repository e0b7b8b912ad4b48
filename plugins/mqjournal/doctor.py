"""`mqjournal doctor`: is each partition ready for mqjournal? A read-only preflight, per host pass / fail / how to fix.
(A Linux host of the fleet is checked by linuxmq/doctor.py, in the same report; run_doctor checks both kinds.)

It sends only reads: `true` (the SSH login), SELECTs through the host's SQL runner, `cat` of MQ's mqs.ini, the digest
programs on /dev/null (`hostdigest.discover`), and CHKOBJ
(which checks an object's existence and the job user's authority to it, and changes nothing). With a data folder to
record it in (`routes`: the command line gives one; the DAGs' preflight does not, so that it only reads), it makes
one write, audited: the download probe (`routeprobe`) creates an empty scratch save file in the save library,
downloads it directly or through a stream file copy in the host's scratch directory (PASE cp, else CPYTOSTMF), and
deletes both, to record how this host's save files download. Nothing else it sends creates, changes or deletes
anything; a test holds it to that through the simulator's log of received commands.

What each mqjournal step needs (checked here; sources in docs/ibmi-interfaces.md, "assumed" where no IBM page was
retrieved):
- RCDMQMIMG, ENDMQM, STRMQM (MQ "group 1" commands): membership of QMQMADM or *ALLOBJ (IBM MQ for IBM i, "Access
  authorities for IBM MQ objects": verified).
- SAVOBJ of receivers: *SAVSYS, or *OBJEXIST to each receiver; *USE to the command (assumed, Security Reference).
- DLTJRNRCV: *OBJEXIST and *USE to the receiver; *USE to the command (assumed).
- RSTOBJ of receivers: *SAVSYS, or *OBJEXIST to the objects; *ADD and *READ to the queue manager library (assumed).
- CRTSAVF in the save library: *READ and *ADD to that library; *USE to the command (assumed). QSYS2.SAVE_FILE_OBJECTS:
  *USE to the save file's library and to the save file (SAVE_FILE_OBJECTS doc 7.5: verified).
- QSYS2.ASSOCIATE_JOURNAL_RECEIVER (recovery of restored receivers): *OBJMGT to the receivers, *OBJOPR and *OBJMGT to
  the journal, *EXECUTE to both libraries (ASSOCIATE_JOURNAL_RECEIVER doc 7.5: verified).
- reading AMQJRNINF: *USE to the user space (USER_SPACE doc: verified); ASP_INFO on 7.6: *IOSYSCFG or the
  QIBM_IOSYSCFG_VIEW function usage (ASP_INFO doc 7.6: verified).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from mqjournal import msgformats
from mqjournal.doctorreport import HostReport, answers_or_failures, checking_session
from mqjournal.fleet import FleetConfig, HostConfig
from mqjournal.ibmi import asp, capabilities, commands, hostdigest
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.db2out import Db2Failure, Db2OutputError, Row, parse_results, value
from mqjournal.ibmi.discovery import parse_mqs_ini
from mqjournal.ibmi.downloadroutes import DownloadRoutes
from mqjournal.ibmi.readings import UnknownTimeZone, db2_local_time, db2_time, partition_zone, utc_offset
from mqjournal.ibmi.routeprobe import PROBE_FILE, find_route
from mqjournal.ibmi.transport import (
    CommandOutput,
    ConnectFactory,
    IbmiSession,
)
from mqjournal.linuxmq.doctor import check_linux_host
from mqjournal.names import journal_name, receiver_prefix, save_library_for
from mqjournal.policy import Policy
from mqjournal.sizefmt import size

log = logging.getLogger(__name__)

SAVE_LIBRARY_AUTHORITIES = ("*OBJOPR", "*READ", "*EXECUTE", "*ADD")
"""*USE (*OBJOPR *READ *EXECUTE: SAVE_FILE_OBJECTS) and *ADD (CRTSAVF) to the save library, as CHKOBJ checks them."""

ASP_WARN_USED = 0.90  # IBM i's default storage threshold for the system ASP (QSTGLOWLMT-style warning): assumed
ASP_FAIL_USED = 0.98
MQ_ADMIN_GROUP = "QMQMADM"


@dataclass(frozen=True)
class Profile:
    name: str
    special: frozenset[str]
    groups: frozenset[str]
    status: str

    @property
    def mq_admin(self) -> bool:
        return "*ALLOBJ" in self.special or MQ_ADMIN_GROUP in self.groups


class _Host:
    """The reads of one host's checks, over one session."""

    def __init__(self, session: IbmiSession) -> None:
        self.session = session

    def sql(self, *statements: str) -> tuple[CommandOutput, list]:
        out = self.session.run(commands.sql(*statements, runner=self.session.sql_runner))
        try:
            results = parse_results(out.stdout)
        except Db2OutputError:
            results = []
        return out, results

    def chkobj(self, library: str, name: str, objtype: str, authorities: tuple[str, ...] = ()) -> str | None:
        """None when the object exists and the authorities are there; else the message ID (CPF9801/9802/9810)."""
        out = self.session.run(commands.check_object(library, name, objtype, authorities))
        if out.exit_status == 0:
            return None
        return next(iter(out.msg_ids[::-1]), f"exit status {out.exit_status}")


def _grant(user: str, library: str, name: str, objtype: str, aut: str) -> str:
    target = name if objtype == "*LIB" else f"{library}/{name}"
    return f"GRTOBJAUT OBJ({target}) OBJTYPE({objtype}) USER({user}) AUT({aut})"


def check_host(
    config: FleetConfig,
    host: HostConfig,
    *,
    connect: ConnectFactory | None = None,
    audit: AuditLog | None = None,
    session: IbmiSession | None = None,
    save_library: str = "QGPL",
    policy: Policy | None = None,
    now: datetime | None = None,
    routes: DownloadRoutes | None = None,
) -> HostReport:
    """Every check for one host; never raises for what the host answers (a failed check says it). Give `connect`
    and `audit` (the CLI), or an open `session` (Airflow's, from the host's connection)."""
    report = HostReport(host.name)
    policy = policy or Policy()
    user = session.user if session is not None else config.user_for(host)
    if session is None:
        if connect is None or audit is None:
            raise ValueError("give connect and audit, or a session")
        session = checking_session(host, user, connect, audit, command_timeout=30.0)
    host_key_fix = (
        "compare the key fingerprint with the partition's (on IBM i: "
        "ssh-keygen -lf /QOpenSys/QIBM/UserData/SC1/OpenSSH/etc/ssh_host_*_key.pub), then pin it in "
        f"the connection's host_key (Airflow) or {config.known_hosts}"
    )
    with session, answers_or_failures(report, host_key_fix):
        _checks(report, session, config, host, user, save_library, policy, now, routes)
    return report


def _checks(
    report: HostReport,
    session: IbmiSession,
    config: FleetConfig,
    host: HostConfig,
    user: str,
    save_library: str,
    policy: Policy,
    now: datetime | None,
    routes: DownloadRoutes | None = None,
) -> None:
    h = _Host(session)
    login = session.run(commands.Command(text="true", idempotent=True))
    report.add(
        "SSH and host key",
        "pass",
        f"{user}@{host.address}:{host.port} signed on; the host key matched"
        + ("" if login.exit_status == 0 else f" (the shell answered {login.exit_status})"),
    )

    # The SQL runner, and the clock read through it.
    out, results = h.sql(commands.host_clock())
    if len(results) != 1 or isinstance(results[0], Db2Failure) or not results[0]:
        detail = (
            results[0].text
            if results and isinstance(results[0], Db2Failure)
            else (out.stderr.strip() or out.stdout.strip())[-200:] or f"exit status {out.exit_status}"
        )
        fix = (
            "set the host's sql_runner to qsh in the fleet file (the default, what a stock partition has)"
            if host.sql_runner == "db2"
            else "check that QShell (5770-SS1 option 30) is installed and /QOpenSys/usr/bin/qsh runs for the profile"
        )
        report.add(f"SQL runner ({host.sql_runner})", "fail", f"SQL does not run: {detail}", fix)
        return
    report.add(f"SQL runner ({host.sql_runner})", "pass", "SELECT through the db2 utility answered")
    row = results[0][0]
    # QUTCOFFSET is the offset in force now, so it reads NOW right whatever QTIMZON says; the times of the past are
    # read by QTIMZON's rules, checked below.
    tz = utc_offset(row.get("UTC_OFFSET"))
    partition_now = db2_time(value(row, "NOW"), tz)
    controller_now = now or datetime.now(UTC)
    skew = (partition_now - controller_now).total_seconds()
    if abs(skew) > policy.clock_skew_seconds:
        # A warning, not a failure: recovery points and AMQJRNINF are judged on the partition's own clock, so a skew
        # cannot make a needed receiver look deletable; it only shifts retention ages by that much.
        report.add(
            "clock",
            "warn",
            f"the partition's clock is {abs(skew):.0f} s {'ahead of' if skew > 0 else 'behind'} the "
            f"controller's (policy clock_skew_seconds: {policy.clock_skew_seconds:g}): retention days are "
            "counted on the controller's clock, so they shift by as much",
            "synchronize the partition with a time server (CHGNTPA, STRTCPSVR SERVER(*NTP)) and check "
            "QUTCOFFSET; or the controller's clock",
        )
    else:
        report.add("clock", "pass", f"partition and controller agree within {abs(skew):.0f} s (UTC offset {tz})")
    _check_time_zone(report, host, row)

    # Release, services and columns.
    try:
        caps = capabilities.read(session)
    except capabilities.CapabilitiesUnreadable as exc:
        report.add("IBM i release and SQL services", "fail", exc.problem, exc.action)
        caps = None
    if caps is not None:
        missing = [m for step in ("collect", "save", "delete", "restore", "asp") for m in caps.missing(step)]
        unique = list(dict.fromkeys(str(m) for m in missing))
        release = f"IBM i {caps.release}" if caps.release else "the release could not be read"
        if unique:
            brings = "; ".join(dict.fromkeys(f"{m.service.split('.')[1]}: {m.brought_by}" for m in missing))
            report.add(
                "IBM i release and SQL services",
                "fail",
                f"{release}: " + "; ".join(unique),
                f"install the named release or Db2 PTF group (WRKPTFGRP shows the levels installed): {brings}",
            )
        else:
            report.add(
                "IBM i release and SQL services", "pass", f"{release}: every QSYS2 service mqjournal uses is there"
            )
        for m in caps.missing_columns():
            report.add("SQL columns", "warn", str(m), f"install {m.brought_by}")

    _message_formats(report, h, caps)
    _digest(report, session)
    if routes is not None:
        _download_route(report, session, host.name, save_library, routes)
    profile = _profile(report, h, user)
    _mq_and_authorities(report, h, host, user, profile, save_library, caps)


def _check_time_zone(report: HostReport, host: HostConfig, clock: Row) -> None:
    """Whether the partition's past times can be read with the offset then in force (QTIMZON's DST rules)."""
    description = str(clock.get("TIME_ZONE") or "").strip().upper() or "(not readable)"
    try:
        zone = partition_zone(
            clock.get("TIME_ZONE"),
            clock.get("UTC_OFFSET"),
            db2_local_time(value(clock, "NOW")),
            rules=host.time_zone_rules,
        )
    except UnknownTimeZone as exc:
        report.add(
            "time zone",
            "warn",
            f"{exc}; its times are read with today's QUTCOFFSET, so a time from before a DST change is an hour off",
            f"name the Olson zone whose rules {description} follows as the host's time_zone_rules in the fleet file "
            "(WRKTIMZON shows the description's DST start and end), or set QTIMZON to an IBM-supplied description "
            "docs/ibmi-interfaces.md lists",
        )
        return
    rules = f"the rules of {zone.olson}" + (" (the fleet file's time_zone_rules)" if zone.from_fleet else "")
    report.add("time zone", "pass", f"QTIMZON {description}: {rules if zone.olson else 'a fixed offset, no DST'}")


def _message_formats(report: HostReport, h: _Host, caps: capabilities.Capabilities | None) -> None:
    """The layouts the partition declares for the messages mqjournal reads (QSYS2.MESSAGE_FILE_DATA), and whether
    mqjournal can read them: a message that does not decode is kept and moves no recovery point, so a layout it cannot
    read leaves those messages unused, which the admin should know before the first run."""
    title = "message formats (AMQ7460, AMQ7462, AMQ7432, AMQ7472, CPI70E3)"
    if caps is None or not caps.has("QSYS2.MESSAGE_FILE_DATA"):
        report.add(
            title,
            "warn",
            "QSYS2.MESSAGE_FILE_DATA is not on this partition: the messages are read by mqjournal's own layouts, each "
            "value checked, and one that does not read so is kept and moves nothing",
            "install the Db2 PTF group that brings QSYS2.MESSAGE_FILE_DATA; meanwhile DSPMSGD shows each format",
        )
        return
    _, results = h.sql(commands.message_formats(msgformats.MESSAGE_FILES))
    rows = results[0] if results and not isinstance(results[0], Db2Failure) else None
    declared = msgformats.declarations(rows, "" if rows is not None else "QSYS2.MESSAGE_FILE_DATA did not answer")
    problems = []
    for msg_id, d in declared.items():
        problem = d.note if d.layout is None else msgformats.layout_problem(msg_id, d.layout)
        if problem:
            problems.append((msg_id, problem))
    shown = "; ".join(f"{msg_id} {d.shown()}" for msg_id, d in declared.items())
    if problems:
        report.add(
            title,
            "warn",
            "; ".join(f"{msg_id}: {problem}" for msg_id, problem in problems) + f" (declared: {shown})",
            "; ".join(msgformats.dspmsgd(msg_id) for msg_id, _ in problems)
            + " shows the format: send it to mqjournal's maintainers; such messages are kept and move nothing",
        )
    else:
        report.add(title, "pass", f"every one decodes by its declared layout: {shown}")


def _digest(report: HostReport, session: IbmiSession) -> None:
    """Whether the partition can digest a save file: without it no copy off the partition proves a backup."""
    tool = hostdigest.discover(session)
    if tool is None:
        report.add(
            "SHA-256 of a save file on the host",
            "fail",
            f"none of {hostdigest.TRY_TOOLS} gives a file's SHA-256: no copy of this host's save files can be compared "
            "with the host's bytes, so none counts as a backup and no receiver is deleted on its account",
            hostdigest.INSTALL,
        )
    else:
        report.add("SHA-256 of a save file on the host", "pass", f"{tool.program} ({tool.brought_by})")


def _download_route(
    report: HostReport, session: IbmiSession, host: str, save_library: str, routes: DownloadRoutes
) -> None:
    """How this host's save files download (routeprobe: its one write, a scratch save file made and deleted),
    recorded for the copy step. Only with a data folder to record it in, and a digest to prove the bytes."""
    if hostdigest.discover(session) is None:
        return
    found = find_route(session, save_library)
    if not found.probed:
        # Most likely the probe file of a doctor stopped mid-probe: nothing is known of the host, nothing fails.
        report.add(
            "downloading a save file",
            "warn",
            found.detail + "; save files are downloaded directly until the probe runs",
            f"if {save_library}/{PROBE_FILE} is an earlier doctor's (its text reads 'mqjournal doctor: download "
            f"probe'), DLTF FILE({save_library}/{PROBE_FILE}); then run mqjournal doctor again",
        )
        return
    if found.route is None:
        report.add(
            "downloading a save file",
            "fail",
            found.detail,
            f"grant the profile *R to save files in {save_library} and let it create {session.scratch_directory} "
            "(or name another in the fleet file's scratch_directory, or check that sftp-server runs), then run "
            "mqjournal doctor again; until then no copy leaves this partition",
        )
        return
    routes.record(host, found.route, datetime.now(UTC), found.detail)
    report.add(
        "downloading a save file",
        "pass",
        f"{found.route}: {found.detail} (recorded for the copy step; scratch directory {session.scratch_directory})",
    )


def _profile(report: HostReport, h: _Host, user: str) -> Profile | None:
    _, results = h.sql(commands.user_profile(user))
    if len(results) != 1 or isinstance(results[0], Db2Failure) or not results[0]:
        report.add(
            "user profile",
            "fail",
            f"QSYS2.USER_INFO shows no profile {user}",
            f"sign on with an existing, enabled profile; check *READ authority to *USRPRF {user}",
        )
        return None
    row = results[0][0]
    special = frozenset((row.get("SPECIAL_AUTHORITIES") or "").split())
    groups = frozenset(
        g
        for g in [row.get("GROUP_PROFILE_NAME"), *(row.get("SUPPLEMENTAL_GROUP_LIST") or "").split()]
        if g and g != "*NONE"
    )
    profile = Profile(user, special, groups, (row.get("STATUS") or "").strip())
    if profile.status != "*ENABLED":
        report.add("user profile", "fail", f"{user} is {profile.status}", f"CHGUSRPRF USRPRF({user}) STATUS(*ENABLED)")
    else:
        report.add(
            "user profile",
            "pass",
            f"{user}: special authorities {' '.join(sorted(special)) or 'none'}; "
            f"groups {' '.join(sorted(groups)) or 'none'}",
        )
    if profile.mq_admin:
        report.add(
            "authority: RCDMQMIMG, ENDMQM, STRMQM",
            "pass",
            f"{user} is an MQ administrator ({'*ALLOBJ' if '*ALLOBJ' in special else MQ_ADMIN_GROUP})",
        )
    else:
        report.add(
            "authority: RCDMQMIMG, ENDMQM, STRMQM",
            "fail",
            f"{user} is neither in group {MQ_ADMIN_GROUP} nor has *ALLOBJ: the checkpoint (RCDMQMIMG) is refused",
            f"CHGUSRPRF USRPRF({user}) GRPPRF({MQ_ADMIN_GROUP}) (or add {MQ_ADMIN_GROUP} to its SUPGRPPRF)",
        )
    return profile


def _mq_and_authorities(
    report: HostReport,
    h: _Host,
    host: HostConfig,
    user: str,
    profile: Profile | None,
    save_library: str,
    caps: capabilities.Capabilities | None,
) -> None:
    # The commands themselves.
    lacking = [c for c in ("SAVOBJ", "DLTJRNRCV", "RSTOBJ", "CRTSAVF") if h.chkobj("QSYS", c, "*CMD", ("*USE",))]
    if lacking:
        report.add(
            "authority: commands",
            "fail",
            f"{user} may not use {', '.join(lacking)} (*USE to the command)",
            "; ".join(_grant(user, "QSYS", c, "*CMD", "*USE") for c in lacking),
        )
    else:
        report.add("authority: commands", "pass", "*USE to SAVOBJ, DLTJRNRCV, RSTOBJ, CRTSAVF")

    # The save library: CRTSAVF in it needs *READ and *ADD; QSYS2.SAVE_FILE_OBJECTS, which proves what a save file
    # holds, needs *USE to the library (and to the save file, which mqjournal creates and owns).
    try:
        library = save_library_for(save_library, "QM")  # the name's rules; the queue manager library is checked per run
    except ValueError as exc:
        report.add(f"save library {save_library}", "fail", str(exc), "choose another save library")
        library = None
    if library is not None:
        answer = h.chkobj("QSYS", library, "*LIB", SAVE_LIBRARY_AUTHORITIES)
        if answer is None:
            report.add(
                f"save library {library}",
                "pass",
                "exists; CRTSAVF may create save files in it and SAVE_FILE_OBJECTS read them (*USE, *ADD)",
            )
        elif answer == "CPF9801":
            report.add(
                f"save library {library}",
                "fail",
                f"library {library} does not exist (CPF9801)",
                f"CRTLIB LIB({library}) TEXT('mqjournal receiver saves'), then "
                + _grant(user, "QSYS", library, "*LIB", "*CHANGE"),
            )
        else:
            report.add(
                f"save library {library}",
                "fail",
                f"{user} may not create save files in {library} or list what they hold ({answer})",
                _grant(user, "QSYS", library, "*LIB", " ".join(SAVE_LIBRARY_AUTHORITIES)),
            )

    # MQ installed: mqs.ini readable.
    ini = h.session.run(commands.read_mqs_ini())
    if ini.exit_status != 0:
        report.add(
            "MQ installed",
            "fail",
            f"{commands.MQS_INI} cannot be read: {ini.stderr.strip()[:200]}",
            "install IBM MQ (5724-H72), or give the profile *R (DSPAUT) to /QIBM/UserData/mqm/mqs.ini",
        )
        in_ini: dict[str, str] = {}
    else:
        in_ini = parse_mqs_ini(ini.stdout)
        report.add("MQ installed", "pass", f"mqs.ini lists {', '.join(sorted(in_ini)) or 'no queue managers'}")

    wanted = [(q.name, q.qmgr_library, q.instance) for q in host.queue_managers] or [
        (name, lib, "A") for name, lib in sorted(in_ini.items())
    ]
    if not wanted:
        report.add(
            "queue managers",
            "fail",
            "no queue manager is named in the fleet file or found in mqs.ini",
            "name the queue managers under the host's queue_managers in the fleet file",
        )
        return
    _, results = h.sql(commands.mq_journals(sorted({lib for _, lib, _ in wanted})))
    journals = results[0] if results and not isinstance(results[0], Db2Failure) else []
    for name, library, instance in wanted:
        _queue_manager(report, h, user, profile, name, library, instance, in_ini, journals, caps)


def _queue_manager(
    report: HostReport,
    h: _Host,
    user: str,
    profile: Profile | None,
    name: str,
    library: str,
    instance: str,
    in_ini: dict[str, str],
    journals: list,
    caps,
) -> None:
    title = f"queue manager {name} ({library})"
    if in_ini and in_ini.get(name) != library:
        report.add(
            title,
            "fail",
            f"mqs.ini has {'no ' + name if name not in in_ini else name + ' in ' + in_ini[name]}",
            "correct the queue manager's name or library in the fleet file",
        )
        return
    journal = journal_name(instance)
    row = next((r for r in journals if r["JOURNAL_LIBRARY"] == library and r["JOURNAL_NAME"] == journal), None)
    if row is None:
        report.add(
            title,
            "fail",
            f"journal {library}/{journal} not found (QSYS2.JOURNAL_INFO)",
            "check the library and the journal instance letter in the fleet file, and *OBJOPR to the journal",
        )
        return
    queue = (row.get("MESSAGE_QUEUE_LIBRARY") or "QSYS", row.get("MESSAGE_QUEUE") or "QSYSOPR")
    problem = h.chkobj(queue[0], queue[1], "*MSGQ", ("*USE",))
    if problem:
        report.add(
            title,
            "fail",
            f"journal {library}/{journal}: its message queue {queue[0]}/{queue[1]} cannot be read ({problem})",
            _grant(user, queue[0], queue[1], "*MSGQ", "*USE"),
        )
    else:
        report.add(
            title,
            "pass",
            f"journal {library}/{journal}, attached receiver "
            f"{row.get('ATTACHED_JOURNAL_RECEIVER_NAME') or '(none)'}, message queue {queue[0]}/{queue[1]}",
        )
    if h.chkobj(library, "AMQJRNINF", "*USRSPC", ("*USE",)):
        report.add(
            f"authority: AMQJRNINF ({name})",
            "fail",
            f"{user} may not read {library}/AMQJRNINF",
            _grant(user, library, "AMQJRNINF", "*USRSPC", "*USE"),
        )
    attached = row.get("ATTACHED_JOURNAL_RECEIVER_NAME")
    if attached:
        receivers = f"{receiver_prefix(instance)}*"
        lacks_objexist = h.chkobj(library, attached, "*JRNRCV", ("*OBJEXIST", "*USE")) is not None
        grant = _grant(user, library, receivers, "*JRNRCV", "*OBJEXIST *USE")
        savsys = profile is not None and ("*SAVSYS" in profile.special or "*ALLOBJ" in profile.special)
        if lacks_objexist:
            report.add(
                f"authority: DLTJRNRCV ({name})",
                "fail",
                f"{user} lacks *OBJEXIST/*USE to the receivers in {library} (checked on {attached})",
                f"{grant} (receivers MQ creates later need it too: or give {user} *ALLOBJ)",
            )
        else:
            report.add(f"authority: DLTJRNRCV ({name})", "pass", f"*OBJEXIST *USE to {library}/{receivers}")
        if lacks_objexist and not savsys:
            report.add(
                f"authority: SAVOBJ, RSTOBJ ({name})",
                "fail",
                f"{user} has neither *SAVSYS nor *OBJEXIST to the receivers",
                f"CHGUSRPRF USRPRF({user}) SPCAUT(... *SAVSYS) (add *SAVSYS to its list), or {grant}",
            )
        else:
            report.add(
                f"authority: SAVOBJ, RSTOBJ ({name})",
                "pass",
                "*SAVSYS" if savsys else f"*OBJEXIST to {library}/{receivers}",
            )
        _restored_receivers(report, h, user, name, library, journal, attached, receivers)
    if h.chkobj("QSYS", library, "*LIB", ("*READ", "*ADD")):
        report.add(
            f"authority: RSTOBJ into {library}",
            "fail",
            f"{user} may not add objects to {library}",
            _grant(user, "QSYS", library, "*LIB", "*READ *ADD"),
        )
    _asp(report, h, name, library, journal, caps)


def _restored_receivers(
    report: HostReport, h: _Host, user: str, name: str, library: str, journal: str, attached: str, receivers: str
) -> None:
    """QSYS2.ASSOCIATE_JOURNAL_RECEIVER, which joins restored receivers to the journal in a recovery, needs *OBJMGT to
    the receivers and *OBJOPR *OBJMGT to the journal (ASSOCIATE_JOURNAL_RECEIVER, ssw_ibm_i_75: verified). Only a
    recovery needs it, so a lack warns: maintenance runs without it."""
    title = f"authority: restored receivers ({name})"
    lacking = [
        grant
        for lacks, grant in (
            (
                h.chkobj(library, attached, "*JRNRCV", ("*OBJMGT",)),
                _grant(user, library, receivers, "*JRNRCV", "*OBJMGT"),
            ),
            (
                h.chkobj(library, journal, "*JRN", ("*OBJOPR", "*OBJMGT")),
                _grant(user, library, journal, "*JRN", "*OBJOPR *OBJMGT"),
            ),
        )
        if lacks
    ]
    if lacking:
        report.add(
            title,
            "warn",
            f"{user} could not join restored receivers to {library}/{journal} in a recovery (ASSOCIATE_JOURNAL_RECEIVER"
            f" needs *OBJMGT to the receivers, checked on {attached}, and *OBJOPR *OBJMGT to the journal)",
            "; ".join(lacking),
        )
    else:
        report.add(title, "pass", f"*OBJMGT to {library}/{receivers}, *OBJOPR *OBJMGT to {library}/{journal}")


def _asp(report: HostReport, h: _Host, name: str, library: str, journal: str, caps) -> None:
    title = f"ASP usage ({name})"
    if caps is not None and not caps.has("QSYS2.ASP_INFO"):
        return  # reported with the services
    try:
        usage = asp.read_journal_asp(h.session, library, journal)
    except Db2OutputError:
        usage = None
    if usage is None or usage.used_fraction is None or usage.capacity_bytes is None or usage.available_bytes is None:
        report.add(
            title,
            "warn",
            "QSYS2.ASP_INFO gave no row for the journal's ASP",
            "on IBM i 7.6 give the profile *IOSYSCFG or the QIBM_IOSYSCFG_VIEW function usage (CHGFCNUSG)",
        )
        return
    used = usage.used_fraction
    text = (
        f"ASP {usage.asp_number}: {used:.0%} used, {size(usage.available_bytes)} free of {size(usage.capacity_bytes)}"
    )
    if used >= ASP_FAIL_USED:
        report.add(
            title,
            "fail",
            text,
            "free storage now (WRKSYSSTS, RTVDSKINF/PRTDSKINF): the system stops when "
            "the ASP is full; save and delete receivers MQ no longer needs",
        )
    elif used >= ASP_WARN_USED:
        report.add(title, "warn", text, "plan storage: receivers MQ no longer needs can be saved and deleted")
    else:
        report.add(title, "pass", text)


# --- the fleet ------------------------------------------------------------------------------------------------------


def run_doctor(
    config: FleetConfig,
    connectors: dict[str, ConnectFactory],
    *,
    hosts: list[str] | None = None,
    audit: AuditLog,
    save_library: str = "QGPL",
    policy: Policy | None = None,
    routes: DownloadRoutes | None = None,
) -> list[HostReport]:
    """Each selected host's report: the partitions', then the Linux hosts' (linuxmq/doctor.py), in the fleet file's
    order; `connectors` has one for each."""
    selected = [h for h in config.hosts if not hosts or h.name in hosts]
    linux = [h for h in config.linux_hosts if not hosts or h.name in hosts]
    return [
        check_host(
            config,
            h,
            connect=connectors[h.name],
            audit=audit,
            save_library=save_library,
            policy=policy,
            routes=routes,
        )
        for h in selected
    ] + [check_linux_host(config, h, connect=connectors[h.name], audit=audit) for h in linux]


_MARK = {"pass": "ok", "fail": "FAIL", "warn": "warn", "skip": "-"}


def render(reports: list[HostReport]) -> str:
    """A table per host, for an admin: check, result, detail, and how to fix what failed."""
    lines: list[str] = []
    for report in reports:
        verdict = "READY" if report.ready else f"NOT READY ({len(report.failed())} failed)"
        lines += [f"== {report.host}: {verdict}", ""]
        width = max((len(c.name) for c in report.checks), default=10)
        for c in report.checks:
            lines.append(f"  {c.name:<{width}}  {_MARK[c.status]:<4}  {c.detail}")
            if c.fix and c.status != "pass":
                lines.append(f"  {'':<{width}}  {'':<4}  fix: {c.fix}")
        lines.append("")
    return "\n".join(lines)
