"""Fixtures shared by the tests: a simulated fleet served over real SSH, and a client that verifies host keys; and the
fault matrix's summary line (tests/safety), printed at the end of the session."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import paramiko
import pytest

from mqjournal.fleet import FleetConfig, HostConfig, PartitionSystemConfig, QueueManagerConfig
from mqjournal.ibmi import commands
from mqjournal.ibmi.db2out import Db2Failure, parse_single
from mqjournal.sim.service import SimulatorService

START = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)

# Every JVM the tests start (the plan job's spark-submit, the Spark sessions, through Airflow and the drivers, whose
# environments inherit this one) lives for seconds to a few minutes on small input: C2's compile threads spent half of
# a one-host plan job's CPU time (91 s of CPU, 49 s with C1 alone, measured 2026-11-27) and the other e2e worker
# waited for the cores. Nor do they verify the bytecode of the jars they load (Spark's own, from the pinned pyspark):
# a seventh less CPU for a one-host plan job (46 to 39.5 CPU-s, measured 2026-11-28), on the standing Spark Connect
# server too, which loads each plan's generated classes. A test setting only: deployments keep the JVM's defaults.
os.environ.setdefault(
    "SPARK_SUBMIT_OPTS",
    "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote",
)
# The simulators the tests start keep a partition's SQL tables between statements until it changes; here each kept
# table is also compared with the partition before it is read (sim/sql.py ViewTables), so a change of a partition
# that bypasses its host fails the test that made it instead of serving stale rows.
os.environ.setdefault("MQJOURNAL_SIM_CHECK_VIEWS", "1")
TEST_SIZE_FACTOR = 0.001


@dataclass
class Shell:
    """A paramiko session on one simulated host, as the planner's client would hold it."""

    client: paramiko.SSHClient

    def run(self, command: str, timeout: float = 10.0) -> tuple[int, str, str]:
        _, stdout, stderr = self.client.exec_command(command, timeout=timeout)
        out, err = stdout.read().decode(), stderr.read().decode()
        return stdout.channel.recv_exit_status(), out, err

    def cl(self, command: str) -> tuple[int, str, str]:
        return self.run(f'system "{command}"')

    def db2(self, statement: str) -> tuple[int, str, str]:
        """One statement through qsh, as mqjournal sends it: a stock partition has no db2 in the PASE shell."""
        return self.run(commands.sql(statement, runner="qsh").text)

    def sql(self, statement: str) -> list[dict]:
        status, out, _ = self.db2(statement)
        result = parse_single(out)
        if isinstance(result, Db2Failure):
            raise AssertionError(f"SQL failed ({status}): {result}")
        return result


@dataclass
class SimFleet:
    service: SimulatorService
    ports: dict[str, int]
    config: FleetConfig

    def host(self, name: str = "ibmi1"):
        return self.service.hosts[name]

    def connect(self, name: str = "ibmi1", *, known_hosts: Path | None = None) -> Shell:
        client = paramiko.SSHClient()
        client.load_host_keys(str(known_hosts or self.config.known_hosts))
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        sock = socket.create_connection(("127.0.0.1", self.ports[name]), timeout=5)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client.connect(
            "127.0.0.1",
            port=self.ports[name],
            username=self.config.user,
            pkey=self.service.client_key,
            sock=sock,
            look_for_keys=False,
            allow_agent=False,
            timeout=5,
        )
        return Shell(client)


def fleet_config(tmp_path: Path, hosts: list[HostConfig] | None = None) -> FleetConfig:
    hosts = hosts or [
        HostConfig(
            name="ibmi1",
            port=0,
            utc_offset="+01:00",
            # Save files a thousandth of what they save: the shape of real ones, at a test's speed.
            system=PartitionSystemConfig(save_file_size_factor=TEST_SIZE_FACTOR),
            queue_managers=[QueueManagerConfig(name="TEST", threshold_kb=500, entries_per_minute=40)],
        )
    ]
    return FleetConfig(state_dir=tmp_path / "state", start=START, hosts=hosts).resolved(tmp_path)


@contextlib.contextmanager
def serve(config: FleetConfig, *, advance: timedelta | None = None) -> Iterator[SimFleet]:
    """The fleet's partitions served over SSH on free ports (moved `advance` forward first), stopped afterwards."""
    service = SimulatorService(config)
    ports = service.start()
    try:
        if advance:
            for host in service.hosts.values():
                host.advance(advance)
        yield SimFleet(service, ports, config)
    finally:
        service.stop()


@pytest.fixture
def sim_fleet(tmp_path: Path) -> Iterator[SimFleet]:
    """One partition `ibmi1` with queue manager TEST (library QMTEST), a 500 KB threshold, at START."""
    with serve(fleet_config(tmp_path)) as fleet:
        yield fleet


# --- the fault matrix's summary line -------------------------------------------------------------------------------

# Each fault matrix case (tests/safety/test_fault_matrix.py) records (held, receivers lost, unrecorded commands) in
# its report's user properties. Reports reach the process that prints the summary from pytest-xdist's workers too;
# hence the hooks live here, in the one conftest that process always loads.
FAULT_MATRIX_PROPERTY = "fault_matrix"
_fault_matrix_tallies: list[tuple[bool, int, int]] = []
# The Linux fault matrix's cases (tests/safety/test_linux_fault_matrix.py) record (held, extents lost, unrecorded
# commands) the same way, for a line of their own.
LINUX_FAULT_MATRIX_PROPERTY = "linux_fault_matrix"
_linux_fault_matrix_tallies: list[tuple[bool, int, int]] = []


def fault_matrix_line(tallies: list[tuple[bool, int, int]], *, prefix: str = "", lost_what: str = "receivers") -> str:
    held = sum(1 for ok, _, _ in tallies if ok)
    lost = sum(lost for _, lost, _ in tallies)
    unrecorded = sum(unrecorded for _, _, unrecorded in tallies)
    return (
        f"{prefix}fault matrix: {len(tallies)} cases, {held} held, {lost} {lost_what} lost, "
        f"{unrecorded} unrecorded commands"
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        for name, value in report.user_properties:
            if name in (FAULT_MATRIX_PROPERTY, LINUX_FAULT_MATRIX_PROPERTY):
                held, lost, unrecorded = value  # a list once it has come from a worker
                tallies = _fault_matrix_tallies if name == FAULT_MATRIX_PROPERTY else _linux_fault_matrix_tallies
                tallies.append((bool(held), int(lost), int(unrecorded)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _fault_matrix_tallies:
        terminalreporter.write_line(fault_matrix_line(_fault_matrix_tallies))
    if _linux_fault_matrix_tallies:
        terminalreporter.write_line(
            fault_matrix_line(_linux_fault_matrix_tallies, prefix="linux ", lost_what="extents")
        )


# Airflow's `standalone` (the demo and the browser test) starts five processes and takes a minute on 2 cores: two at
# once would each run against their own timeouts, so those two tests take turns in one unit of work.
AIRFLOW_STANDALONE = pytest.mark.xdist_group("airflow_standalone")
# Tests that take minutes of their own and are not end to end (the stateful safety test): scheduled with the
# end-to-end units, before the many short tests.
LONG = pytest.mark.long


def _unit_order(item: pytest.Item) -> int:
    """Where a test's unit of work goes in `make test`'s one queue (--dist loadgroup --no-loadscope-reorder: in
    collection order). The longest units first, so that none of them starts late and leaves the other workers
    idle at the end: the two `airflow standalone` tests (some 8 minutes together), the other end-to-end units (1 to
    4 minutes each), the long ones, then the many short tests, which fill in around them."""
    if item.get_closest_marker("e2e"):
        group = item.get_closest_marker("xdist_group")
        return 0 if group is not None and group.args[:1] == ("airflow_standalone",) else 1
    return 2 if item.get_closest_marker("long") else 3


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`make test` runs the whole suite in one queue over several processes (--dist loadgroup). A module's
    end-to-end tests share one driver run or one Spark job (a module-scoped fixture), so each module is one unit of
    work: split across two processes, its fixture would run twice. The long units go first (`_unit_order`)."""
    for item in items:
        if item.get_closest_marker("e2e") and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__ if item.module else item.nodeid))
    items.sort(key=_unit_order)  # stable: a unit's tests stay in their order


# --- one standing Spark Connect server for the whole run ----------------------------------------------------------

# The plan jobs of the DAG drivers and of the tests that check rules run on one standing Spark Connect server: each
# server pays a minute of CPU to start and warm its JVM, which every worker process paying again would cost more
# than the server saves. The first process that needs it starts it (under a lock, tests/shared_spark_connect.py);
# the process that runs the session (xdist's controller, or pytest alone) stops it when the session ends.
_SPARK_CONNECT_FOLDER = pytest.StashKey[Path]()
_SPARK_CONNECT_INPUT = "mqj_spark_connect_folder"


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):
        config.stash[_SPARK_CONNECT_FOLDER] = Path(tempfile.mkdtemp(prefix="mqj-spark-connect-"))


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's: the controller's word to each worker it starts
def pytest_configure_node(node) -> None:
    node.workerinput[_SPARK_CONNECT_INPUT] = str(node.config.stash[_SPARK_CONNECT_FOLDER])


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_SPARK_CONNECT_FOLDER, None)
    if folder is None:
        return
    if (folder / "pid").exists():
        from tests.shared_spark_connect import SharedServer

        SharedServer(folder).stop()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def spark_connect(pytestconfig: pytest.Config) -> str:
    """The run's standing Spark Connect server, started when a test first asks for it: its URL (sc://127.0.0.1:PORT)."""
    from tests.shared_spark_connect import SharedServer

    workerinput = getattr(pytestconfig, "workerinput", None)
    folder = Path(workerinput[_SPARK_CONNECT_INPUT]) if workerinput else pytestconfig.stash[_SPARK_CONNECT_FOLDER]
    return SharedServer(folder).url(master="local[2]")


# New York's partition around the end of DST: EDT (-04:00) until 06:00 UTC on 1 November 2026, EST (-05:00) after.
DST_ENDS = datetime(2026, 11, 1, 6, 0, tzinfo=UTC)


def new_york_config(
    tmp_path: Path, *, start: datetime, time_zone: str = "QN0500EST3", time_zone_rules: str | None = None
) -> FleetConfig:
    """One partition `ibmi1` whose QTIMZON follows New York's DST rules (IBM's QN0500EST3, or a site's own
    description with `time_zone_rules`), with queue manager TEST, from `start`."""
    offset = "-04:00" if start.astimezone(ZoneInfo("America/New_York")).dst() else "-05:00"
    host = HostConfig(
        name="ibmi1",
        port=0,
        utc_offset=offset,
        system=PartitionSystemConfig(time_zone=time_zone),
        queue_managers=[QueueManagerConfig(name="TEST", threshold_kb=200, entries_per_minute=200)],
        **({"time_zone_rules": time_zone_rules} if time_zone_rules else {}),
    )
    return FleetConfig(state_dir=tmp_path / "state", start=start, hosts=[host]).resolved(tmp_path)
