"""The simulator as a service: a fleet of simulated partitions, their state on disk, served over SSH.

State lives in the fleet's state folder: ``<host>.json`` (the partition), ``<host>.hostkey`` (its stable SSH host
key), ``client_key`` (+ ``.pub``, the key the planner logs in with) and ``known_hosts`` for the planner to verify
host keys against. A restarted simulator loads the same partitions and keys.

`received` logs every command line that arrives over SSH, and what became of it (see `server.CommandLog`): tests
compare it with the client's audit log. `faults[host]` are the host's transport faults, `CommandRule`s and
`TransferFault`s included.

The same SSH connections serve SFTP with the QSYS.LIB view of each partition's save files (sim/sftp.py), and the log
extents of each Linux host's queue managers (linuxsim/sftp.py). Their requests (a Linux host's transfers only) are
logged in `transfers`, apart from `received`: a transfer is not a command line, and the invariants
that every command received has its audit record are about command lines.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime
from pathlib import Path

import paramiko

from mqjournal.fleet import FleetConfig
from mqjournal.linuxsim.host import LinuxSimulatedHost
from mqjournal.linuxsim.serving import linux_host, reads_stdin
from mqjournal.linuxsim.sftp import LinuxLogSftp
from mqjournal.sim import drills
from mqjournal.sim.host import SimulatedHost
from mqjournal.sim.protocol import ExecResult
from mqjournal.sim.server import (
    CommandLog,
    FleetSshServer,
    HostTransportFaults,
    SftpSession,
    SimulatedHostEndpoint,
    load_or_create_host_key,
)
from mqjournal.sim.sftp import QsysLibSftp

log = logging.getLogger(__name__)


def load_or_create_client_key(path: Path) -> paramiko.PKey:
    """The planner's login key for the simulated fleet (a real fleet's key comes from an Airflow connection)."""
    if path.exists():
        return paramiko.ECDSAKey.from_private_key_file(str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    key = paramiko.ECDSAKey.generate(bits=256)
    key.write_private_key_file(str(path))
    path.chmod(0o600)
    path.with_name(path.name + ".pub").write_text(f"{key.get_name()} {key.get_base64()} mqjournal-sim\n")
    return key


def _resolved(path: Path | None, field: str) -> Path:
    """A path of the fleet that `FleetConfig.resolved` fills in: the simulator is only ever given a resolved fleet."""
    if path is None:
        raise ValueError(f"the simulator needs a resolved fleet (FleetConfig.resolved): its {field} is not set")
    return path


def public_key_line(key: paramiko.PKey) -> str:
    return f"{key.get_name()} {key.get_base64()}"


class SimulatorService:
    def __init__(self, config: FleetConfig, *, now: datetime | None = None) -> None:
        """Load the fleet's partitions from the state folder, creating (and warming up) the missing ones."""
        self.config = config
        self.state_dir = config.state_dir
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.client_key = load_or_create_client_key(_resolved(config.client_key, "client_key"))
        self.host_keys: dict[str, paramiko.PKey] = {}
        self.hosts: dict[str, SimulatedHost] = {}
        self.faults: dict[str, HostTransportFaults] = {}
        self.received = CommandLog()
        self.transfers = CommandLog()
        start = config.first_moment(now)
        for host_config in config.hosts:
            state_path = self.state_dir / f"{host_config.name}.json"
            host = SimulatedHost.load(state_path) if state_path.exists() else None
            if host is not None:
                host.apply_faults(host_config)
                host.apply_system(host_config)
            else:
                host = SimulatedHost.create(host_config, start, state_path)
                if config.warmup_hours:
                    host.warm_up(host_config, start, config.warmup_hours)
            self.hosts[host_config.name] = host
            host.register_user(config.user_for(host_config))
            self.host_keys[host_config.name] = load_or_create_host_key(self.state_dir / f"{host_config.name}.hostkey")
            self.faults[host_config.name] = HostTransportFaults(delay_seconds=host_config.faults.delay_seconds)
        # Linux queue manager hosts (#32), served on the same SSH server with their own shell.
        self.linux_hosts: dict[str, LinuxSimulatedHost] = {}
        for linux in config.linux_hosts:
            self.linux_hosts[linux.name] = linux_host(linux, self.state_dir, start, config.warmup_hours)
            self.host_keys[linux.name] = load_or_create_host_key(self.state_dir / f"{linux.name}.hostkey")
            self.faults[linux.name] = HostTransportFaults(delay_seconds=linux.faults.delay_seconds)
        self.server: FleetSshServer | None = None
        self._clock: threading.Thread | None = None
        self._inbox: threading.Thread | None = None
        self._stop = threading.Event()

    def handle(self, host: str, user: str, command_line: str) -> ExecResult:
        if host in self.linux_hosts:
            return self.linux_hosts[host].run(command_line, user)
        return self.hosts[host].run(command_line, user)

    def handle_with_stdin(self, host: str, user: str, command_line: str, stdin: str) -> ExecResult:
        return self.linux_hosts[host].run(command_line, user, stdin)

    def _reads_stdin(self, host: str, command_line: str) -> bool:
        if host not in self.linux_hosts:
            return False
        return reads_stdin(command_line, windows=self.linux_hosts[host].host.platform == "windows")

    def start(self, *, follow_wall_clock: bool = False, listen: str = "127.0.0.1") -> dict[str, int]:
        endpoints = [
            SimulatedHostEndpoint(
                name=h.name,
                port=h.port,
                host_key=self.host_keys[h.name],
                authorized_keys=[public_key_line(self.client_key)],
                users=frozenset({self.config.user_for(h)}),
            )
            for h in self.config.hosts
        ] + [
            SimulatedHostEndpoint(
                name=h.name,
                port=h.port,
                host_key=self.host_keys[h.name],
                authorized_keys=[public_key_line(self.client_key)],
                users=frozenset({h.user}),
                case_sensitive_users=True,
            )
            for h in self.config.linux_hosts
        ]
        qsys = QsysLibSftp(self.hosts, lambda host: self.faults[host], log=self.transfers)
        logs = LinuxLogSftp(self.linux_hosts, qsys.take_transfer_fault, log=self.transfers)

        def sftp(session: SftpSession) -> paramiko.SFTPServerInterface:
            return logs(session) if session.host in self.linux_hosts else qsys(session)

        self.server = FleetSshServer(
            endpoints,
            self.handle,
            lambda host: self.faults[host],
            received=self.received,
            sftp=sftp,
            listen=listen,
            stdin_handler=(self._reads_stdin, self.handle_with_stdin),
        )
        self.server.start()
        self.write_known_hosts()
        if follow_wall_clock:
            self._clock = threading.Thread(target=self._follow_wall_clock, name="sim-clock", daemon=True)
            self._clock.start()
        # On-call drills (`mqjournal sim power-off ...`) reach the running partitions through the state folder.
        drills.mark_serving(self.state_dir)
        self._inbox = threading.Thread(target=self._take_drills, name="sim-drills", daemon=True)
        self._inbox.start()
        return self.server.ports

    def write_known_hosts(self) -> Path:
        """known_hosts for the planner: one pinned key per simulated host and port."""
        addresses = [(h.name, h.address, h.port) for h in self.config.hosts]
        addresses += [(h.name, h.address, h.port) for h in self.config.linux_hosts]
        ports = self.server.ports if self.server else {name: port for name, _, port in addresses}
        lines = []
        for name, address, _ in addresses:
            key = self.host_keys[name]
            host = address if ports[name] == 22 else f"[{address}]:{ports[name]}"
            lines.append(f"{host} {key.get_name()} {key.get_base64()}\n")
        path = _resolved(self.config.known_hosts, "known_hosts")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines), encoding="utf-8")
        return path

    def _follow_wall_clock(self) -> None:
        # Served for a demo, simulated time is real time: receivers keep filling while Airflow runs.
        while not self._stop.wait(5.0):
            now = datetime.now(UTC)
            for host in self.hosts.values():
                host.advance_to(now + host.clock_offset)  # a partition whose clock is off stays off

    def _take_drills(self) -> None:
        while not self._stop.wait(0.5):
            try:
                drills.run_inbox(self.state_dir, self.hosts)
            except Exception:  # a bad request file must not end the simulator's inbox
                log.exception("could not take the drills waiting in %s", self.state_dir / drills.INBOX)

    def stop(self) -> None:
        self._stop.set()
        drills.unmark_serving(self.state_dir)
        for host in self.hosts.values():
            host.stop()
        if self.server is not None:
            self.server.stop()
            self.server = None
        for host in self.hosts.values():
            host.save()
        for linux in self.linux_hosts.values():
            linux.save()

    def __enter__(self) -> SimulatorService:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
