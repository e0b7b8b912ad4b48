"""`mqjournal doctor`'s checks that only a Windows host needs (#32, docs/windows-interfaces.md section 5): read only,
each command through the session (audited), built in linuxmq/windowsforms.py.

- `ver`: the first command, so the sign-on itself (SSH reach, the pinned host key), and that the SSH server hands
  commands to cmd.exe: a DefaultShell of PowerShell answers no `ver`, and then nothing else is sent;
- `reg query` of both `Command Processor` keys: no AutoRun (cmd.exe would run it before every line, sshd starts it
  without /D) and DelayedExpansion off (`!` would be expanded inside quotes): else a fail, naming the value to remove,
  and nothing else is sent;
- `whoami /groups /fo csv /nh`: MQ authority by SID (the local group mqm, or Administrators in an elevated token:
  q014040, q013300), since the host words group names in its own language;
- certutil of a queue manager's qm.ini (after dspmqinf): the host can give a file's SHA-256, the proof every extent
  copy is held to (Windows has no /dev/null whose digest is known, so a file that is there is digested).
"""

from __future__ import annotations

from mqjournal.doctorreport import HostReport
from mqjournal.ibmi.transport import CommandOutput, IbmiSession
from mqjournal.linuxfleet import LinuxHostConfig
from mqjournal.linuxmq import windowsforms
from mqjournal.linuxmq.platforms import WindowsPlatform
from mqjournal.linuxmq.readings import ReadingError

__all__ = ["authority", "digest", "shell"]

MQM = "mqm"


def _said(out: CommandOutput) -> str:
    # cmd.exe wraps its messages over lines ("... is not recognized as an internal or external command,\r\noperable
    # program or batch file."): the whole message, not its last line.
    lines = [line.strip() for line in (out.stderr or out.stdout).splitlines() if line.strip()]
    return " ".join(lines)[:300] if lines else f"exit status {out.exit_status}"


def shell(report: HostReport, session: IbmiSession, host: LinuxHostConfig) -> bool:
    """Whether the host's SSH server runs mqjournal's lines in a plain cmd.exe; the report says why not."""
    out = session.run(windowsforms.shell_probe())
    report.add("SSH and host key", "pass", f"{host.user}@{host.address}:{host.port} signed on; the host key matched")
    try:
        version = windowsforms.read_windows_version(out.stdout)
    except ReadingError:
        report.add(
            "the shell is cmd.exe",
            "fail",
            f"`ver` gave no Windows version ({_said(out)}): the SSH server's shell is not cmd.exe (DefaultShell set "
            "to PowerShell?), or something printed before its answer (an AutoRun command); mqjournal's lines are "
            "written for cmd.exe only, so nothing else was sent",
            "remove HKLM\\SOFTWARE\\OpenSSH\\DefaultShell (cmd.exe is Win32-OpenSSH's default) and any AutoRun value "
            "under HKLM and HKCU\\Software\\Microsoft\\Command Processor, then run the doctor again",
        )
        return False
    report.add("the shell is cmd.exe", "pass", f"cmd.exe answers `ver`: Windows {version}")
    tools = host.host_platform
    assert isinstance(tools, WindowsPlatform)
    settings: dict[str, str] = {}
    for key in windowsforms.COMMAND_PROCESSOR_KEYS:  # HKLM first: HKCU's values win (Microsoft's registry reference)
        out = session.run(windowsforms.command_processor_settings(key, tools.tools(host.mq_bin)))
        try:
            values = windowsforms.read_command_processor(out.stdout, out.exit_status)
        except ReadingError as exc:
            report.add(
                "cmd.exe runs lines as sent",
                "fail",
                f"{key} does not read ({exc}): whether cmd.exe runs an AutoRun command or expands ! is not known, so "
                "nothing else was sent",
                "check that reg.exe runs for the user, then run the doctor again",
            )
            return False
        settings |= {name.lower(): data for name, data in values.items()}
    if not windowsforms.cmd_is_plain(settings):
        found = [
            f"{name}={settings[name.lower()]}" for name in ("AutoRun", "DelayedExpansion") if name.lower() in settings
        ]
        report.add(
            "cmd.exe runs lines as sent",
            "fail",
            f"cmd.exe's settings ({', '.join(found)}) make it run a command before each line, or expand ! inside "
            "quotes (a path could then name another file): nothing else was sent",
            "remove AutoRun and set DelayedExpansion to 0 under HKLM and HKCU\\Software\\Microsoft\\Command "
            "Processor, then run the doctor again",
        )
        return False
    report.add("cmd.exe runs lines as sent", "pass", "no AutoRun command, delayed expansion off")
    return True


def authority(report: HostReport, session: IbmiSession, host: LinuxHostConfig, platform: WindowsPlatform) -> None:
    """MQ authority: the local group mqm, or Administrators in an elevated token, read by SID."""
    title = "MQ authority (mqm or an elevated administrator)"
    out = session.run(platform.user_groups())
    try:
        groups = windowsforms.read_groups(out.stdout) if out.exit_status == 0 else None
    except ReadingError:
        groups = None
    if groups is None:
        report.add(title, "fail", f"whoami named no groups ({_said(out)})", "check that whoami.exe runs for the user")
        return
    names = ", ".join(g.name for g in groups)
    if windowsforms.mq_administrator(groups):
        report.add(title, "pass", f"{host.user} may administer IBM MQ (its groups: {names})")
        return
    report.add(
        title,
        "fail",
        f"{host.user} is neither in the local group {MQM} nor an administrator with an elevated token (its groups: "
        f"{names}): mqjournal needs MQ's control commands, runmqsc and the log's files",
        f"as an administrator: {platform.join_group.format(group=MQM, user=host.user)}; then mqjournal signs on "
        "again (a session keeps the groups it began with)",
    )


def digest(
    report: HostReport, session: IbmiSession, host: LinuxHostConfig, platform: WindowsPlatform, qmgr: str
) -> None:
    """Whether certutil gives a file's SHA-256 here (of `qmgr`'s qm.ini): without it no copy proves an archive."""
    title = "SHA-256 of an extent on the host"
    out = session.run(platform.queue_manager_info(host.mq_bin, qmgr))
    try:
        data = platform.data_path(out.stdout) if out.exit_status == 0 else None
    except ReadingError as exc:
        report.add(title, "fail", f"no file of {qmgr} to digest: {exc}", "check the queue manager (dspmqinf)")
        return
    if data is None:
        report.add(title, "fail", f"dspmqinf of {qmgr} ended {out.exit_status} ({_said(out)})", "check dspmqinf")
        return
    out = session.run(windowsforms.digest_probe(data, platform.tools(host.mq_bin)))
    path = platform.file_path(data, "qm.ini")
    if out.exit_status == 0 and platform.read_digest(out.stdout, path) is not None:
        report.add(title, "pass", f"certutil answers (SHA-256 of {path})")
        return
    report.add(
        title,
        "fail",
        f"certutil gave no SHA-256 of {path} ({_said(out)}): no copy of this host's extents can be compared with "
        "the host's bytes, so none counts as archived and no extent is released (SET LOG ARCHIVED, del) on its "
        "account",
        platform.digest_install,
    )
