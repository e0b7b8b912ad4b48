"""The simulator keeps a partition's SQL tables between statements until the partition changes (sim/sql.py
ViewTables): the answers are the partition's as it is now, never as it was when a table was built."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator

import pytest

from mqjournal.ibmi import commands
from mqjournal.ibmi.db2out import Db2Failure, parse_single
from mqjournal.sim import views
from mqjournal.sim.host import SimulatedHost
from mqjournal.sim.sql import ViewTables
from tests.conftest import SimFleet

RECEIVERS = "SELECT JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO WHERE JOURNAL_LIBRARY = 'QMTEST'"
USER = "MQADMIN"


def receivers(host: SimulatedHost) -> list[str]:
    answer = host.run(commands.sql(RECEIVERS, runner="qsh").text, USER)
    result = parse_single(answer.stdout)
    assert not isinstance(result, Db2Failure), answer
    return sorted(row["JOURNAL_RECEIVER_NAME"] for row in result)


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How many times each view's rows were made from the partition."""
    counted: Counter[str] = Counter()
    rows = views.PartitionCatalog.rows

    def counting(self: views.PartitionCatalog, view: str):  # type: ignore[no-untyped-def]
        counted[view] += 1
        return rows(self, view)

    monkeypatch.setattr(views.PartitionCatalog, "rows", counting)
    yield counted


def test_statements_between_two_changes_build_a_view_once_and_a_change_shows_at_once(
    sim_fleet: SimFleet, built: Counter[str]
) -> None:
    host = sim_fleet.host()
    host._view_tables = ViewTables(check=False)  # as served outside the tests: a kept table is not read again
    before = receivers(host)
    assert receivers(host) == before
    assert built["QSYS2.JOURNAL_RECEIVER_INFO"] == 1

    changed = host.run('system "CHGJRN JRN(QMTEST/AMQAJRN) JRNRCV(*GEN)"', USER)
    assert changed.exit_status == 0, changed

    after = receivers(host)
    assert len(after) == len(before) + 1 and set(before) < set(after)


def test_a_change_in_the_hosts_state_shows_in_the_next_statement_also_when_it_failed_halfway(
    sim_fleet: SimFleet,
) -> None:
    host = sim_fleet.host()
    oldest = receivers(host)[0]
    with pytest.raises(RuntimeError), host.state() as partition:
        del partition.receivers[f"QMTEST/{oldest}"]
        raise RuntimeError("the change failed after its first step")
    assert oldest not in receivers(host)


def test_a_change_that_bypasses_the_host_fails_the_statement_instead_of_answering_stale_rows(
    sim_fleet: SimFleet, caplog: pytest.LogCaptureFixture
) -> None:
    host = sim_fleet.host()
    host._view_tables = None
    oldest = receivers(host)[0]
    assert host._view_tables is not None and host._view_tables.check  # the suite checks (tests/conftest.py)
    with host.lock:
        del host.partition.receivers[f"QMTEST/{oldest}"]  # not through host.state(): no generation counted

    with caplog.at_level(logging.ERROR, logger="mqjournal.sim.sql"):
        answer = host.run(commands.sql(RECEIVERS, runner="qsh").text, USER)

    assert answer.exit_status != 0 and isinstance(parse_single(answer.stdout), Db2Failure)
    assert "QSYS2.JOURNAL_RECEIVER_INFO no longer shows the partition" in caplog.text
