"""CURRENT SERVER on a simulated partition: its relational database's name, as `mqjournal doctor --capture` reads it
to replace it (the system name it is made from shows in message texts)."""

from __future__ import annotations

from datetime import UTC, datetime

from mqjournal.fleet import HostConfig
from mqjournal.ibmi import commands
from mqjournal.ibmi.db2out import parse_single
from mqjournal.sim.host import SimulatedHost


def _select(host: SimulatedHost, statement: str) -> tuple[str, list[dict]]:
    out = host.run(commands.sql(statement, runner="qsh").text, "MQADMIN")
    assert out.exit_status == 0, out.stdout + out.stderr
    return out.stdout, parse_single(out.stdout)


def test_current_server_is_the_partitions_rdb_name_the_one_asp_info_shows_printed_as_varchar_18():
    host = SimulatedHost.create(HostConfig(name="ibmi-prod1", port=0), datetime(2026, 11, 2, 8, 0, tzinfo=UTC), None)
    host.register_user("MQADMIN")

    stdout, rows = _select(host, "SELECT CURRENT SERVER AS RDB_NAME FROM SYSIBM.SYSDUMMY1")
    _, asp = _select(host, "SELECT RDB_NAME FROM QSYS2.ASP_INFO")

    assert rows == [{"RDB_NAME": "IBMIPROD1"}] == asp
    assert "-" * 18 in stdout.splitlines()  # VARCHAR(18)
