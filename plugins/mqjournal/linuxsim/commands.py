"""The control commands and shell utilities of a simulated Linux or AIX MQ host: each a function of the host, the user,
the arguments and stdin, giving back what the command prints and its exit status (`ExecResult`).

Answers and their sources (docs/linux-interfaces.md, "What the simulator must answer"):
- `dspmq [-m QM] [-x] [-o all|status]`: `QMNAME(QM1)` padded to column 59, then `STATUS(Running)` (+ the `-o all`
  fields) on one line, `    INSTANCE(host) MODE(Active)` under it with -x; exit 72 for an unknown name (verified:
  instana capture, mq-ansible). AMQ7048E's text for that is ASSUMED.
- `dspmqinf [-o stanza] QM`: `QueueManager:` and three-blank-indented `Name=`, `Directory=`, `Prefix=`,
  `InstallationName=` (verified: mq-container's dspmqinf*.txt), with a final newline (ASSUMED).
- `rcdmqimg -m QM [-z] [-l] -t TYPE [name]`: nothing printed on success (ASSUMED: output not captured); `-l` prints
  AMQ7467I and AMQ7468I (texts verified from lab-spike and mq-helm#4, the option's meaning ASSUMED); a damaged object
  is reported with AMQ7472 ("Object <name>, type <type> damaged.", descriptions.pl; severity E ASSUMED) and exit 1.
- `rcrmqobj -m QM [-z] -t TYPE NAME`: nothing printed on success; a missing extent gives AMQ6767E (text ASSUMED:
  IBM's not found) and exit 1 (ASSUMED).
- `strmqm QM`: the start-up lines of the container mirror (verified texts: AMQ7229I-AMQ7233I, AMQ8003I; printed here
  without their IDs as strmqm's own stdout does: ASSUMED); exit 5 when running (mq-ansible), 16 when it does not
  exist, 23 when a log extent is missing ("log not available": from memory of IBM's strmqm return codes, ASSUMED).
- `endmqm [-c|-w|-i|-p] QM`: exit 40 when not running, 16 when it does not exist (mq-ansible); texts ASSUMED.
- `cat` of `/var/mqm/mqs.ini` or `<data path>/qm.ini` (stanzas, three-blank indent; the Log: stanza as in section 1;
  no LogManagement line for Manual, which is what "absent = Manual" assumes); any other file does not exist.
- `ls -l [--time-style=+%s] <LogPath>active/`: `total N`, then `-rw-rw---- 1 mqm mqm SIZE MTIME NAME` sorted by name
  (coreutils format; modes and owner ASSUMED: section 8); size LogFilePages x 4096 (nominal; real size not captured),
  or what arrived of a restore cut short.
- `sha256sum FILE...`: `<hex>  FILE` (GNU coreutils), of extents and of `/dev/null` (the empty file's digest: what
  `mqjournal doctor` asks to see the program answer); `rm [-f] FILE...` of extents only.
- `id -G -n`: the names of the invoking process's groups, space-separated, on one line (POSIX `id`, verified); the
  user's own group first (ASSUMED: useradd's user private group), then `mqm` for its members.
- `df -P [-k] PATH`: POSIX's portable format (verified: the header `Filesystem 1024-blocks Used Available Capacity
  Mounted on`, then `%s %d %d %d %d%% %s`, quantities rounded up, capacity = used / (used + available) rounded up),
  spaced in columns as GNU df does (allowed by POSIX); for a path under `/var/mqm/log` the log file system
  (model.LogFileSystem: its other bytes plus every queue manager's extents), else the root file system (ASSUMED
  sizes); a path that does not exist gives `No such file or directory`, exit 1.
- a program the host lacks (`LinuxHost.missing_programs`) is `bash: NAME: command not found`, exit 127, as bash says.
- Leading `NAME=value` words (`LC_ALL=C ls ...`) are the environment of the command, as a shell takes them.
An AIX host (`LinuxHost.platform == "aix"`, docs/linux-interfaces.md section 12) differs only where AIX's base system
does: MQ in /usr/mqm/bin (verified: IBM's default installation path); `ls` without GNU's options, refusing one as its
getopt does (`ls: Not a recognized flag: -` and its usage line, exit 2: the flag message captured from an AIX ls,
the exit status ASSUMED) and listing as captured AIX listings do (`-rw-rw----    1 mqm      mqm         262144 Sep 05
14:59 S0000001.LOG`: zero-padded day; older than six months `Jun 10 2020  NAME`, the year then two blanks), a missing
path `ls: 0653-341 The file PATH does not exist.` (captured); no `sha256sum` (not in the AIX base: docs section 12) but
`openssl dgst -sha256 [-r] FILE` (openssl.base, `/usr/bin/openssl`: path ASSUMED) answering as OpenSSL 3 does
(`SHA2-256(FILE)= hex`, or `hex *FILE` with -r); ksh's `ksh: NAME:  not found.` for a program it lacks (text ASSUMED,
exit 127 as POSIX reserves it); the user's primary group `staff` (mkuser's default: ASSUMED).
Paths are normalised as the kernel would (no symlinks here); anything under the MQ tree but outside an `active/`
directory is refused with "Permission denied" by rm (SIMPLIFICATION: the simulator has no other files; cat and
sha256sum say "No such file or directory" outside the MQ tree), and a user outside
group mqm gets "Permission denied" for the log and data files and AMQ7077E for MQ commands (ASSUMED exit 36).
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Callable
from datetime import datetime, timedelta

from mqjournal.errors import InvalidName
from mqjournal.linuxmq.extents import Extent, LogManagement
from mqjournal.linuxsim import logger, mqsc
from mqjournal.linuxsim.model import (
    INSTALLATION_NAME,
    INSTALLATION_VERSION,
    MQM_PREFIX,
    LinuxHost,
    LinuxQueueManager,
    LogExtent,
    LogFileSystem,
)
from mqjournal.sim.protocol import ExecResult

Command = Callable[[LinuxHost, str, list[str], str], ExecResult]

RC_NOT_KNOWN_DSPMQ = 72
RC_NOT_EXISTING = 16
RC_NOT_AVAILABLE = 40
RC_RUNNING = 5
RC_LOG_NOT_AVAILABLE = 23
RC_FAILED = 1
RC_USAGE = 20  # ASSUMED for every control command's usage error
RC_NOT_AUTHORIZED = 36
NOT_KNOWN = "AMQ7048E: The queue manager name is either not valid or not known.\n"
NOT_AUTHORIZED = "AMQ7077E: You are not authorized to perform the requested operation.\n"
MISSING_EXTENT = "AMQ6767E: Log file {name} for queue manager {qm} could not be found.\n"  # ASSUMED text
MQS_INI = f"{MQM_PREFIX}/mqs.ini"
DEV_NULL = "/dev/null"
DSPMQ_NAME_WIDTH = 58


def _usage(command: str) -> ExecResult:
    return ExecResult(RC_USAGE, "", f"Usage: {command} (the simulator's subset: see linuxsim/commands.py)\n")


def _options(args: list[str], flags: str, valued: str) -> tuple[dict[str, str], list[str]] | None:
    """getopt-style: single-letter `flags`, `valued` options taking the next argument; None for anything else."""
    found: dict[str, str] = {}
    rest: list[str] = []
    at = 0
    while at < len(args):
        arg = args[at]
        if arg.startswith("-") and len(arg) == 2 and arg[1] in flags:
            found[arg[1]] = ""
        elif arg.startswith("-") and len(arg) == 2 and arg[1] in valued and at + 1 < len(args):
            found[arg[1]] = args[at + 1]
            at += 1
        elif arg.startswith("-") and arg != "-":
            return None
        else:
            rest.append(arg)
        at += 1
    return found, rest


def _mqm(host: LinuxHost, user: str) -> bool:
    return user in host.mqm_members


# --- dspmq, dspmqinf ------------------------------------------------------------------------------------------


def _dspmq_status(qm: LinuxQueueManager) -> str:
    return "Running" if qm.running else f"Ended {qm.ended or 'normally'}"


def dspmq(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    parsed = _options(args, "x", "mo")
    if parsed is None or parsed[1] or parsed[0].get("o", "status") not in ("all", "status"):
        return _usage("dspmq")
    options = parsed[0]
    names = [options["m"]] if "m" in options else sorted(host.queue_managers)
    lines: list[str] = []
    for name in names:
        qm = host.queue_manager(name)
        if qm is None:
            return ExecResult(RC_NOT_KNOWN_DSPMQ, "", NOT_KNOWN)
        fields = [f"STATUS({_dspmq_status(qm)})"]
        if options.get("o") == "all":
            standby = "Not permitted" if qm.running else ""
            fields += [
                "DEFAULT(no)",
                f"STANDBY({standby})",
                f"INSTNAME({INSTALLATION_NAME})",
                f"INSTPATH({host.installation_path})",
                f"INSTVER({INSTALLATION_VERSION})",
                "ROLE(Not configured)",
                "INSTANCE()",
                "INSYNC()",
                "QUORUM()",
                "GRPLSN()",
                "GRPNAME()",
                "GRPROLE(Not configured)",
            ]
        head = f"QMNAME({qm.name})"
        lines.append(f"{head.ljust(DSPMQ_NAME_WIDTH - 1)} {' '.join(fields)}")
        if "x" in options and qm.running:
            lines.append(f"    INSTANCE({host.name}) MODE(Active)")
    return ExecResult(0, "".join(f"{line}\n" for line in lines))


def dspmqinf(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    parsed = _options(args, "", "o")
    if parsed is None or len(parsed[1]) != 1 or parsed[0].get("o", "stanza") != "stanza":
        return _usage("dspmqinf")
    qm = host.queue_manager(parsed[1][0])
    if qm is None:
        return ExecResult(RC_NOT_KNOWN_DSPMQ, "", NOT_KNOWN)
    return ExecResult(0, _qm_stanza(qm))


def _qm_stanza(qm: LinuxQueueManager) -> str:
    return (
        f"QueueManager:\n   Name={qm.name}\n   Directory={qm.directory}\n   Prefix={MQM_PREFIX}\n"
        f"   InstallationName={INSTALLATION_NAME}\n"
    )


# --- MQ commands that need a queue manager --------------------------------------------------------------------


def _running_qm(host: LinuxHost, user: str, name: str | None) -> LinuxQueueManager | ExecResult:
    if not _mqm(host, user):
        return ExecResult(RC_NOT_AUTHORIZED, "", NOT_AUTHORIZED)
    qm = host.queue_manager(name) if name else None
    if qm is None:
        return ExecResult(RC_NOT_EXISTING, "", "AMQ8118E: IBM MQ queue manager does not exist.\n")
    if not qm.running:
        return ExecResult(RC_NOT_AVAILABLE, "", "AMQ8146E: IBM MQ queue manager not available.\n")
    return qm


def oldest_needed_lines(qm: LinuxQueueManager) -> str:
    """AMQ7467I and AMQ7468I, as the queue manager writes them (texts verified: lab-spike, mq-helm#4)."""
    return (
        f"AMQ7467I: The oldest log file required to start queue manager {qm.name} is {Extent(qm.restart).name}.\n"
        f"AMQ7468I: The oldest log file required to perform media recovery of queue manager {qm.name} is "
        f"{Extent(qm.media).name}.\n"
    )


def rcdmqimg(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    parsed = _options(args, "zl", "mt")
    if parsed is None or "t" not in parsed[0] or len(parsed[1]) > 1:
        return _usage("rcdmqimg")
    options, rest = parsed
    object_type = options["t"].lower()
    if object_type not in logger.OBJECT_TYPES or (not rest and object_type != "qmgr"):
        return _usage("rcdmqimg")
    found = _running_qm(host, user, options.get("m"))
    if isinstance(found, ExecResult):
        return found
    qm = found
    try:
        images = logger.record_media_images(qm, rest[0] if rest else qm.name, object_type, at=host.now)
    except logger.ObjectNotFound as exc:
        return ExecResult(RC_FAILED, "", f"AMQ8147E: IBM MQ object {exc.subject} not found.\n")
    out = oldest_needed_lines(qm) if "l" in options else ""
    damaged = "".join(
        f"AMQ7472E: Object {o.name}, type {o.type} damaged.\n" for o in qm.objects if o.name in images.damaged
    )
    return ExecResult(RC_FAILED if damaged else 0, out, "" if "z" in options else damaged)


def rcrmqobj(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    parsed = _options(args, "z", "mt")
    if parsed is None or "t" not in parsed[0] or len(parsed[1]) != 1:
        return _usage("rcrmqobj")
    options, rest = parsed
    if options["t"].lower() not in logger.OBJECT_TYPES:
        return _usage("rcrmqobj")
    found = _running_qm(host, user, options.get("m"))
    if isinstance(found, ExecResult):
        return found
    try:
        logger.recreate_objects(found, options["t"], rest[0])
    except logger.ObjectNotFound as exc:
        return ExecResult(RC_FAILED, "", f"AMQ8147E: IBM MQ object {exc.subject} not found.\n")
    except logger.ExtentMissing as exc:
        return ExecResult(RC_FAILED, "", MISSING_EXTENT.format(name=exc.subject, qm=found.name))
    return ExecResult(0)


def strmqm(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    if len(args) != 1 or args[0].startswith("-"):
        return _usage("strmqm")
    if not _mqm(host, user):
        return ExecResult(RC_NOT_AUTHORIZED, "", NOT_AUTHORIZED)
    qm = host.queue_manager(args[0])
    if qm is None:
        return ExecResult(RC_NOT_EXISTING, "", "AMQ8118E: IBM MQ queue manager does not exist.\n")
    name = qm.name
    if qm.running:
        return ExecResult(RC_RUNNING, f"IBM MQ queue manager '{name}' running.\n")
    starting = (
        f"IBM MQ queue manager '{name}' starting.\n"
        f"The queue manager is associated with installation '{INSTALLATION_NAME}'.\n"
    )
    replayed = logger.behind(qm.restart, qm.current) + 1
    try:
        logger.start(qm, at=host.now)
    except logger.ExtentMissing as exc:
        return ExecResult(RC_LOG_NOT_AVAILABLE, starting, MISSING_EXTENT.format(name=exc.subject, qm=name))
    return ExecResult(
        0,
        starting
        + f"{replayed} log records accessed on queue manager '{name}' during the log replay phase.\n"
        + f"Log replay for queue manager '{name}' complete.\n"
        + f"Transaction manager state recovered for queue manager '{name}'.\n"
        + f"IBM MQ queue manager '{name}' started using V{INSTALLATION_VERSION}.\n",
    )


def endmqm(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    parsed = _options(args, "cwip", "")
    if parsed is None or len(parsed[1]) != 1:
        return _usage("endmqm")
    options, (name,) = parsed
    found = _running_qm(host, user, name)
    if isinstance(found, ExecResult):
        return found
    immediate = "i" in options or "p" in options
    logger.end(found, immediate=immediate)
    if "w" in options:
        text = f"Waiting for queue manager '{name}' to end.\nIBM MQ queue manager '{name}' ended.\n"
    elif immediate:
        text = f"IBM MQ queue manager '{name}' ending.\nIBM MQ queue manager '{name}' ended.\n"
    else:
        text = "Quiesce request accepted. The queue manager will stop when all outstanding work is complete.\n"
    return ExecResult(0, text)


def runmqsc(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    if not _mqm(host, user):
        return ExecResult(mqsc.RC_NOT_RUN, "", NOT_AUTHORIZED)
    return mqsc.runmqsc(host, args, stdin)


# --- files ----------------------------------------------------------------------------------------------------


def qm_ini(qm: LinuxQueueManager) -> str:
    """qm.ini as crtmqm writes it (the usual stanzas; LogManagement only when not Manual)."""
    management = "" if qm.log_management is LogManagement.MANUAL else f"   LogManagement={qm.log_management.value}\n"
    return (
        "#*******************************************************************#\n"
        "#* Module Name: qm.ini                                             *#\n"
        "#* Type       : IBM MQ queue manager configuration file            *#\n"
        "#  Function   : Define the configuration of a single queue manager *#\n"
        "#*******************************************************************#\n"
        "ExitPath:\n   ExitsDefaultPath=/var/mqm/exits/\n   ExitsDefaultPath64=/var/mqm/exits64/\n"
        "Log:\n"
        f"   LogPrimaryFiles={qm.log_primary_files}\n"
        f"   LogSecondaryFiles={qm.log_secondary_files}\n"
        f"   LogFilePages={qm.log_file_pages}\n"
        f"   LogType={qm.log_type}\n"
        "   LogBufferPages=0\n"
        f"   LogPath={qm.log_path}\n"
        "   LogWriteIntegrity=TripleWrite\n"
        f"{management}"
        "Service:\n   Name=AuthorizationService\n   EntryPoints=14\n   SecurityPolicy=UserExternal\n"
        "ServiceComponent:\n   Service=AuthorizationService\n   Name=MQSeries.UNIX.auth.service\n"
        "   Module=amqzfu\n   ComponentDataSize=0\n"
        "Channels:\n   ChlauthEarlyAdopt=Y\n"
        "TCP:\n   SndBuffSize=0\n   RcvBuffSize=0\n   SecureCommsOnly=NO\n"
    )


def mqs_ini(host: LinuxHost) -> str:
    head = f"AllQueueManagers:\n   DefaultPrefix={MQM_PREFIX}\n"
    return head + "".join(_qm_stanza(qm) for _, qm in sorted(host.queue_managers.items()))


def _normal(path: str) -> str:
    return posixpath.normpath(path) if path.startswith("/") else posixpath.normpath(posixpath.join("/", path))


def in_active(host: LinuxHost, path: str) -> tuple[LinuxQueueManager, str] | None:
    """The queue manager whose `active/` directory holds `path`, and the file's name there; None elsewhere."""
    directory, name = posixpath.split(_normal(path))
    for qm in host.queue_managers.values():
        if directory == posixpath.normpath(qm.active_path):
            return qm, name
    return None


def active_directory(host: LinuxHost, path: str) -> LinuxQueueManager | None:
    for qm in host.queue_managers.values():
        if _normal(path) == posixpath.normpath(qm.active_path):
            return qm
    return None


def _under_mq(path: str) -> bool:
    return _normal(path) == MQM_PREFIX or _normal(path).startswith(f"{MQM_PREFIX}/")


def cat(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    out, err, rc = [], [], 0
    for path in args:
        normal = _normal(path)
        qm = next((q for q in host.queue_managers.values() if normal == f"{q.data_path}/qm.ini"), None)
        if normal == MQS_INI:
            out.append(mqs_ini(host))
        elif qm is not None and _mqm(host, user):
            out.append(qm_ini(qm))
        elif qm is not None or (_under_mq(path) and not _mqm(host, user)):
            err.append(f"cat: {path}: Permission denied\n")
            rc = 1
        else:
            err.append(f"cat: {path}: No such file or directory\n")
            rc = 1
    return ExecResult(rc, "".join(out), "".join(err))


def ls(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    if host.platform == "aix":
        return _aix_ls(host, user, args)
    epoch = "--time-style=+%s" in args
    flags = [a for a in args if a.startswith("-") and a != "--time-style=+%s"]
    paths = [a for a in args if not a.startswith("-")]
    if flags != ["-l"] or len(paths) != 1:
        return ExecResult(2, "", "ls: the simulator lists one directory with -l [--time-style=+%s]\n")
    path = paths[0]
    qm = active_directory(host, path)
    if qm is None:
        return ExecResult(2, "", f"ls: cannot access '{path}': No such file or directory\n")
    if not _mqm(host, user):
        return ExecResult(2, "", f"ls: cannot open directory '{path}': Permission denied\n")
    files, sizes, total = _listed(qm)
    width = len(str(max(sizes, default=0)))
    lines = [f"total {total}"] + [
        f"-rw-rw---- 1 mqm mqm {str(size).rjust(width)} {_mtime(e.modified, epoch)} {e.name}"
        for e, size in zip(files, sizes, strict=True)
    ]
    return ExecResult(0, "".join(f"{line}\n" for line in lines))


def _listed(qm: LinuxQueueManager) -> tuple[list[LogExtent], list[int], int]:
    """The files of the queue manager's active directory by name, each one's size (an upload cut short is shorter than
    the extent), and ls's `total` line's 1 KiB blocks."""
    files = sorted(qm.extents.values(), key=lambda e: e.name)
    sizes = [qm.file_size(e) for e in files]
    return files, sizes, sum(-(-size // 1024) for size in sizes)


def _mtime(moment: datetime, epoch: bool) -> str:
    return str(int(moment.timestamp())) if epoch else moment.strftime("%b %e %H:%M")


_AIX_LS_FLAGS = "1ACEFHLNRSUXabcdefgiklmnopqrstux"
_SIX_MONTHS = timedelta(days=182)


def _aix_ls(host: LinuxHost, user: str, args: list[str]) -> ExecResult:
    flags = "".join(a[1:] for a in args if a.startswith("-") and a != "-")
    paths = [a for a in args if not a.startswith("-") or a == "-"]
    unknown = next((f for f in flags if f not in _AIX_LS_FLAGS), None)
    if unknown is not None:
        usage = f"Usage: ls [-{_AIX_LS_FLAGS}] [File...]\n"
        return ExecResult(2, "", f"ls: Not a recognized flag: {unknown}\n{usage}")
    if flags != "l" or len(paths) != 1:
        return ExecResult(2, "", "ls: the simulator lists one directory with -l\n")
    path = paths[0]
    qm = active_directory(host, path)
    if qm is None:
        return ExecResult(2, "", f"ls: 0653-341 The file {path} does not exist.\n")
    if not _mqm(host, user):
        return ExecResult(2, "", f"ls: {path}: The file access permissions do not allow the specified action.\n")
    files, sizes, total = _listed(qm)
    lines = [f"total {total}"] + [
        f"-rw-rw---- {1:>4} {'mqm':<8} {'mqm':<8} {size:>10} {_aix_mtime(e.modified, host.now)} {e.name}"
        for e, size in zip(files, sizes, strict=True)
    ]
    return ExecResult(0, "".join(f"{line}\n" for line in lines))


def _aix_mtime(moment: datetime, now: datetime) -> str:
    """`Sep 05 14:59` within the last six months, else `Jun 10 2020 ` (its blank keeps the names in one column)."""
    local = moment.astimezone(now.tzinfo)
    if now - _SIX_MONTHS <= moment <= now:
        return local.strftime("%b %d %H:%M")
    return local.strftime("%b %d %Y ")


def sha256sum(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    out, err, rc = [], [], 0
    for path in args:
        if path.startswith("-"):
            return ExecResult(1, "", f"sha256sum: unrecognized option '{path}'\n")
        if _normal(path) == DEV_NULL:
            out.append(f"{hashlib.sha256(b'').hexdigest()}  {path}\n")
            continue
        found = in_active(host, path)
        extent = found[0].extents.get(found[1]) if found else None
        if found is None or extent is None:
            reason = "Permission denied" if _under_mq(path) and not _mqm(host, user) else "No such file or directory"
            err.append(f"sha256sum: {path}: {reason}\n")
            rc = 1
        elif not _mqm(host, user):
            err.append(f"sha256sum: {path}: Permission denied\n")
            rc = 1
        else:
            out.append(f"{file_digest(found[0], extent.name)}  {path}\n")
    return ExecResult(rc, "".join(out), "".join(err))


def file_digest(qm: LinuxQueueManager, name: str) -> str:
    """SHA-256 of the file `name` of `active/` as it is on disk (a damaged restore has other bytes)."""
    extent = qm.extents[name]
    if not extent.intact:
        return hashlib.sha256(f"damaged {qm.name} {name}".encode()).hexdigest()  # SIMPLIFICATION: not the bytes
    return logger.extent_digest(qm.name, extent.number, qm.extent_size)


def openssl(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    """`openssl dgst -sha256 [-r] FILE...` of AIX's openssl.base, reading what `sha256sum` reads; any other use is
    refused as OpenSSL refuses an unknown command or option (texts as sim/digest.py's)."""
    if not args or args[0] != "dgst":
        return ExecResult(1, "", f"Invalid command '{args[0] if args else ''}'; type \"help\" for a list.\n")
    options = [a for a in args[1:] if a.startswith("-")]
    files = [a for a in args[1:] if not a.startswith("-")]
    if "-sha256" not in options or set(options) - {"-sha256", "-r"} or not files:
        return ExecResult(1, "", f"dgst: Unrecognized flag {next(iter(set(options) - {'-sha256', '-r'}), '')}\n")
    out, err, rc = [], [], 0
    for path in files:
        found = in_active(host, path)
        extent = found[0].extents.get(found[1]) if found else None
        if _normal(path) == DEV_NULL:
            digest = hashlib.sha256(b"").hexdigest()
        elif found is None or extent is None or not _mqm(host, user):
            denied = (found is not None and extent is not None) or (_under_mq(path) and not _mqm(host, user))
            reason = "Permission denied" if denied else "No such file or directory"
            err.append(f'Can\'t open "{path}" for reading, {reason}\n')
            rc = 1
            continue
        else:
            digest = file_digest(found[0], extent.name)
        out.append(f"{digest} *{path}\n" if "-r" in options else f"SHA2-256({path})= {digest}\n")
    return ExecResult(rc, "".join(out), "".join(err))


def rm(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    force = "-f" in args
    paths = [a for a in args if a != "-f"]
    if any(p.startswith("-") for p in paths):
        return ExecResult(1, "", "rm: the simulator takes -f only\n")
    err: list[str] = []
    for path in paths:
        found = in_active(host, path)
        if found is None or not _mqm(host, user):
            # Not one of the files the simulator has: whatever is there is not the mqm user's to remove.
            err.append(f"rm: cannot remove '{path}': Permission denied\n")
            continue
        qm, name = found
        try:
            logger.remove_extent(qm, name)
        except (InvalidName, logger.ExtentNotFound):
            if not force:
                err.append(f"rm: cannot remove '{path}': No such file or directory\n")
        except logger.ExtentBusy:
            err.append(f"rm: cannot remove '{path}': Operation not permitted\n")
    return ExecResult(1 if err else 0, "", "".join(err))


def id_(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    if sorted("".join(a.lstrip("-") for a in args)) != ["G", "n"] or not all(a.startswith("-") for a in args):
        return ExecResult(1, "", "id: the simulator answers -G -n only\n")
    primary = "staff" if host.platform == "aix" else user
    return ExecResult(0, " ".join([primary, *(["mqm"] if _mqm(host, user) else [])]) + "\n")


# --- df -------------------------------------------------------------------------------------------------------

ROOT_DEVICE, ROOT_BYTES, ROOT_USED_BYTES = "/dev/mapper/vg_root-root", 40 * 1024**3, 9 * 1024**3  # ASSUMED sizes


def log_file_system_used(host: LinuxHost) -> int:
    """The log file system's used bytes: its other files and every extent of every queue manager's log."""
    fs = host.log_file_system
    logs = sum(len(qm.extents) * qm.extent_size for qm in host.queue_managers.values() if _under(qm.log_path, fs))
    return fs.other_bytes + logs


def _under(path: str, fs: LogFileSystem) -> bool:
    mount = posixpath.normpath(fs.mounted_on)
    return _normal(path) == mount or _normal(path).startswith(f"{mount}/")


def _exists(host: LinuxHost, path: str) -> bool:
    """The directories the simulator has: the MQ tree's own, each queue manager's data and log directories."""
    normal = _normal(path)
    known = {"/", MQM_PREFIX, f"{MQM_PREFIX}/qmgrs", f"{MQM_PREFIX}/log"}
    known.add(posixpath.normpath(host.log_file_system.mounted_on))
    for qm in host.queue_managers.values():
        known |= {qm.data_path, posixpath.normpath(qm.log_path), posixpath.normpath(qm.active_path)}
        known |= {posixpath.join(qm.active_path, name) for name in qm.extents}
    return normal in known


def df(host: LinuxHost, user: str, args: list[str], stdin: str) -> ExecResult:
    flags = "".join(a[1:] for a in args if a.startswith("-"))
    paths = [a for a in args if not a.startswith("-")]
    if "P" not in flags or set(flags) - {"P", "k"} or len(paths) != 1:
        return ExecResult(1, "", "df: the simulator answers -P [-k] PATH only\n")
    path = paths[0]
    if not _exists(host, path):
        return ExecResult(1, "", f"df: {path}: No such file or directory\n")
    fs = host.log_file_system
    if _under(path, fs):
        used = min(fs.size_bytes, log_file_system_used(host))
        device, mount, size = fs.device, fs.mounted_on, fs.size_bytes
    else:
        device, mount, size, used = ROOT_DEVICE, "/", ROOT_BYTES, ROOT_USED_BYTES
    unit = 1024 if "k" in flags else 512
    total, taken, free = (-(-n // unit) for n in (size, used, size - used))
    capacity = -(-taken * 100 // (taken + free)) if taken + free else 0
    header = f"{'Filesystem':<24} {f'{unit}-blocks':>11} {'Used':>10} {'Available':>10} Capacity Mounted on"
    line = f"{device:<24} {total:>11} {taken:>10} {free:>10} {f'{capacity}%':>8} {mount}"
    return ExecResult(0, f"{header}\n{line}\n")


COMMANDS: dict[str, Command] = {
    "dspmq": dspmq,
    "dspmqinf": dspmqinf,
    "rcdmqimg": rcdmqimg,
    "rcrmqobj": rcrmqobj,
    "strmqm": strmqm,
    "endmqm": endmqm,
    "runmqsc": runmqsc,
    "cat": cat,
    "ls": ls,
    "sha256sum": sha256sum,
    "rm": rm,
    "id": id_,
    "df": df,
}
"""Every command the simulated Linux host knows; the rest is `bash: X: command not found` (exit 127)."""

AIX_COMMANDS: dict[str, Command] = {name: c for name, c in COMMANDS.items() if name != "sha256sum"} | {
    "openssl": openssl
}
"""An AIX host's: no sha256sum in its base system, openssl from openssl.base."""

CHANGES_STATE = frozenset({"rcdmqimg", "rcrmqobj", "strmqm", "endmqm", "runmqsc", "rm"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")


def _not_found(host: LinuxHost, word: str) -> ExecResult:
    if host.platform == "aix":
        return ExecResult(127, "", f"ksh: {word}:  not found.\n")
    said = "No such file or directory" if word.startswith("/") else "command not found"
    return ExecResult(127, "", f"bash: {word}: {said}\n")


def run(host: LinuxHost, user: str, args: list[str], stdin: str = "") -> ExecResult:
    """Run one simple command (its words already split)."""
    while args and _ASSIGNMENT.fullmatch(args[0]):
        args = args[1:]  # the command's environment: nothing the simulator reads
    if not args:
        return ExecResult(0)
    known, paths = (AIX_COMMANDS, _AIX_PATHS) if host.platform == "aix" else (COMMANDS, _PATHS)
    if posixpath.basename(args[0]) in host.missing_programs:
        return _not_found(host, args[0])
    if args[0].startswith("/"):
        if args[0] not in paths:
            return _not_found(host, args[0])
        command: Command | None = known[posixpath.basename(args[0])]
    else:
        command = known.get(args[0])
    if command is None:
        return _not_found(host, args[0])
    return command(host, user, args[1:], stdin)


_MQ_PROGRAMS = ("dspmq", "dspmqinf", "rcdmqimg", "rcrmqobj", "strmqm", "endmqm", "runmqsc")
_PATHS = {f"/opt/mqm/bin/{name}" for name in _MQ_PROGRAMS}
_PATHS |= {"/usr/bin/cat", "/usr/bin/ls", "/usr/bin/sha256sum", "/usr/bin/rm"}
_PATHS |= {"/bin/cat", "/bin/ls", "/bin/sha256sum", "/bin/rm", "/usr/bin/id", "/usr/bin/df", "/bin/id", "/bin/df"}
# AIX: /bin is a link to /usr/bin (ASSUMED as every AIX since 4 has it).
_AIX_PATHS = {f"/usr/mqm/bin/{name}" for name in _MQ_PROGRAMS}
_AIX_PATHS |= {f"{d}/{p}" for d in ("/usr/bin", "/bin") for p in ("cat", "ls", "rm", "id", "df", "openssl")}
