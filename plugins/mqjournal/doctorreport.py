"""What `mqjournal doctor` reports of a host, whatever its platform: each check's pass / fail / warn / skip with how
to fix it, the session the checks read over, and the failures that stop them said as failed checks. The partitions'
checks (mqjournal.doctor) and the Linux hosts' (mqjournal.linuxmq.doctor) both report here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from mqjournal.errors import MqJournalError
from mqjournal.fleet import HostConfig
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import (
    AuthenticationRejected,
    ConnectFactory,
    HostKeyRejected,
    IbmiSession,
    RetryPolicy,
    TransportError,
)
from mqjournal.linuxfleet import LinuxHostConfig

__all__ = ["Check", "HostReport", "Status", "answers_or_failures", "checking_session"]

Status = Literal["pass", "fail", "warn", "skip"]


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


@dataclass
class HostReport:
    host: str
    checks: list[Check] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return not any(c.status == "fail" for c in self.checks)

    def add(self, name: str, status: Status, detail: str, fix: str = "") -> Check:
        check = Check(name, status, detail, fix)
        self.checks.append(check)
        return check

    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fail"]


def checking_session(
    host: HostConfig | LinuxHostConfig, user: str, connect: ConnectFactory, audit: AuditLog, *, command_timeout: float
) -> IbmiSession:
    """A session that tries each command once: the doctor (and its capture) report what the host answers now."""
    if isinstance(host, LinuxHostConfig):
        return IbmiSession(
            host.name, user, connect, audit=audit, retry=RetryPolicy(attempts=1), command_timeout=command_timeout
        )
    return IbmiSession(
        host.name,
        user,
        connect,
        audit=audit,
        sql_runner=host.sql_runner,
        scratch_directory=host.scratch_directory,
        retry=RetryPolicy(attempts=1),
        command_timeout=command_timeout,
    )


@contextlib.contextmanager
def answers_or_failures(report: HostReport, host_key_fix: str) -> Iterator[None]:
    """The checks' reads, and what stops them said as a failed check rather than raised: a host key refused (with
    `host_key_fix`, how to compare and pin the host's), a login refused, a connection that fails, an answer no reader
    could read."""
    try:
        yield
    except HostKeyRejected as exc:
        report.add("SSH and host key", "fail", exc.problem, host_key_fix)
    except AuthenticationRejected as exc:
        report.add("SSH and host key", "fail", exc.problem, exc.action)
    except TransportError as exc:
        first = "SSH and host key" if not report.checks else "connection"
        report.add(first, "fail", exc.problem, exc.action)
    except MqJournalError as exc:
        report.add("unexpected answer", "fail", f"{exc.problem}", exc.action)
