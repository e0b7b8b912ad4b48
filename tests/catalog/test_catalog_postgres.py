"""The backup catalog on PostgreSQL, as production runs it: sizes beyond 32 bits, sequence numbers beyond 64."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from psycopg.pq import TransactionStatus
from sqlalchemy import BigInteger, Numeric, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from mqjournal.catalog import (
    MAX_SEQUENCE_NUMBER,
    Catalog,
    CatalogUnavailable,
    DeletionRecord,
    Operation,
    OperationKind,
    SaveRecord,
)
from tests.catalog.databases import new_postgres_database

# Under xdist (make test-fast) these run in one worker, which starts the one PostgreSQL server they share.
pytestmark = pytest.mark.xdist_group("postgresql")

ATTACHED = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)


def _save(size: int, last: int) -> SaveRecord:
    return SaveRecord(
        host="prod1",
        qmgr="PAYROLL",
        qmgr_library="QMPAYROLL",
        receiver="AMQA000042",
        library="QMPAYROLL",
        attached_at=ATTACHED,
        detached_at=ATTACHED + timedelta(hours=1),
        first_sequence=last - 10,
        last_sequence=last,
        previous="AMQA000041",
        next="AMQA000043",
        size_bytes=size,
        save_file_library="MQSAVES",
        save_file="MQJABC0",
        saved_at=ATTACHED + timedelta(hours=2),
        verified_at=ATTACHED + timedelta(hours=2),
        run_id="scheduled__1",
    )


def _operation(kind: OperationKind, **more: object) -> Operation:
    return Operation.model_validate(
        {
            "host": "prod1",
            "qmgr": "PAYROLL",
            "qmgr_library": "QMPAYROLL",
            "kind": kind,
            "library": "QMPAYROLL",
            "receivers": "AMQA000042",
            "run_id": "r1",
        }
        | more
    )


def test_a_receiver_of_more_than_2_gib_with_sequence_numbers_past_32_bits_is_recorded(postgres_url):
    catalog = Catalog(postgres_url)
    huge = _save(size=3 * 2**30 + 5, last=2**40)  # 3 GiB; a journal with *MAXOPT2 sequence numbers
    catalog.record_save(huge)
    (back,) = catalog.saves_of("prod1", "QMPAYROLL", "AMQA000042", ATTACHED)
    assert (back.size_bytes, back.last_sequence) == (3 * 2**30 + 5, 2**40)


def test_sizes_are_64_bit_and_sequence_numbers_20_digits(postgres_url):
    catalog = Catalog(postgres_url)
    columns = {
        (t, c["name"]): c["type"]
        for t in ("receiver_saves", "library_saves")
        for c in inspect(catalog.engine).get_columns(t)
    }
    for key in [("receiver_saves", "size_bytes"), ("library_saves", "threshold_kb")]:
        assert isinstance(columns[key], BigInteger), key
    # RCVSIZOPT(*MAXOPT3) numbers entries up to 18 446 744 073 709 551 600: past BIGINT, within NUMERIC(20, 0).
    for key in [("receiver_saves", "first_sequence"), ("receiver_saves", "last_sequence")]:
        assert isinstance(columns[key], Numeric), key
        assert (columns[key].precision, columns[key].scale) == (20, 0), key


def test_a_receiver_at_the_last_sequence_number_of_a_maxopt3_journal_is_recorded(postgres_url):
    catalog = Catalog(postgres_url)
    catalog.record_save(_save(size=5 * 2**30, last=MAX_SEQUENCE_NUMBER).model_copy(update={"save_file": "MQJABC1"}))
    saves = catalog.saves_of("prod1", "QMPAYROLL", "AMQA000042", ATTACHED)
    assert MAX_SEQUENCE_NUMBER in {s.last_sequence for s in saves}
    assert MAX_SEQUENCE_NUMBER - 10 in {s.first_sequence for s in saves}


def test_operations_and_deletions_round_trip_on_postgresql(postgres_url):
    catalog = Catalog(postgres_url)
    op = catalog.begin(_operation("delete", attached_at=ATTACHED))
    assert [o.id for o in catalog.open_operations("prod1", "QMPAYROLL")] == [op.id]
    deletion = DeletionRecord(
        host="prod1",
        qmgr="PAYROLL",
        receiver="AMQA000042",
        library="QMPAYROLL",
        attached_at=ATTACHED,
        deleted_at=ATTACHED + timedelta(days=1),
        delete_option="*NONE",
        run_id="r1",
    )
    catalog.record_deletion(deletion)
    catalog.record_deletion(deletion)  # a reconciled deletion recorded again is one row
    catalog.finish(op, "done", "deleted")
    assert catalog.open_operations("prod1", "QMPAYROLL") == []
    assert len(catalog.deletions_for("prod1", "QMPAYROLL")) == 1


def test_an_unreachable_catalog_is_named_without_its_password():
    with pytest.raises(
        CatalogUnavailable, match=r"postgresql\+psycopg://mqjournal:\*\*\*@127\.0\.0\.1:9/catalog"
    ) as err:
        Catalog("postgresql+psycopg://mqjournal:s3cret@127.0.0.1:9/catalog")
    assert "s3cret" not in str(err.value)


def test_catalogs_opened_per_queue_manager_share_a_bounded_pool_of_connections(postgres_url):
    # A worker opens a Catalog per queue manager and step, ten hosts at once: each with a pool of its own ran a
    # PostgreSQL server out of connections (fleet_bench, "FATAL: sorry, too many clients already").
    url = new_postgres_database(postgres_url)
    opened = [Catalog(url) for _ in range(40)]  # held, as the threads of a step hold theirs
    for catalog in opened:
        catalog.record_save(_save(1, 10))
        assert len(catalog.saves_for("prod1", "QMPAYROLL")) == 1
    database = make_url(url).database
    engine = create_engine(postgres_url, poolclass=NullPool)
    with engine.connect() as connection:
        held = connection.execute(
            text("SELECT count(*) FROM pg_stat_activity WHERE datname = :name"), {"name": database}
        ).scalar_one()
    engine.dispose()
    assert held <= 15, f"{held} connections held by 40 catalogs of one process"


def test_reads_and_intents_take_no_transaction_and_an_outcome_takes_one(postgres_url):
    # In a transaction, a read cost four round trips (the pool's ping, BEGIN, the statement, ROLLBACK) and an
    # intent four (ping, BEGIN, INSERT, COMMIT): half of a batch task's round trips to the catalog (fleet_bench, #28).
    # At READ COMMITTED every statement sees its own snapshot anyway, and an intent is one INSERT. An outcome is
    # several statements that must land together, or not at all: it keeps its transaction.
    catalog = Catalog(new_postgres_database(postgres_url))
    seen: list[tuple[str, TransactionStatus]] = []

    def after(connection, _cursor, statement, *_) -> None:
        seen.append((statement.split()[0], connection.connection.dbapi_connection.info.transaction_status))

    event.listen(catalog.engine, "after_cursor_execute", after)  # the URL's shared engine: taken off below
    try:
        op = catalog.begin(_operation("save", save_file_library="MQSAVES", save_file="MQJABC0"))
        catalog.open_operations("prod1", "QMPAYROLL")
        catalog.saves_of_each("prod1", [("QMPAYROLL", "AMQA000042", ATTACHED)])
        alone = list(seen)
        seen.clear()
        catalog.finish(op, "done", "saved", saves=[_save(1, 10)])
    finally:
        event.remove(catalog.engine, "after_cursor_execute", after)
    assert [verb for verb, _ in alone] == ["INSERT", "SELECT", "SELECT"]
    assert {status for _, status in alone} == {TransactionStatus.IDLE}, alone
    assert [verb for verb, _ in seen] == ["SELECT", "INSERT", "UPDATE"]
    assert {status for _, status in seen} == {TransactionStatus.INTRANS}, seen
    assert catalog.open_operations("prod1", "QMPAYROLL") == []
    assert [(s.receiver, s.save_file) for s in catalog.saves_for("prod1", "QMPAYROLL")] == [("AMQA000042", "MQJABC0")]


def test_ten_hosts_working_at_once_keep_their_connections_instead_of_opening_new_ones(postgres_url):
    # A batch task works on ten hosts at once (MQJOURNAL_TASK_HOSTS_IN_PARALLEL=10), each with the catalog. A
    # pool that keeps fewer idle connections than that closes each one beyond them as it comes back, and the next
    # checkout opens a new one: a new server process and a login each time (137 of them in one fleet_bench save
    # phase, #28). Kept, none is closed while the work goes on.
    import threading

    catalog = Catalog(new_postgres_database(postgres_url))
    closed: list[object] = []

    def gone(dbapi_connection, _record) -> None:
        closed.append(dbapi_connection)

    event.listen(catalog.engine, "close", gone)
    start = threading.Barrier(10)

    def host() -> None:
        start.wait()
        for _ in range(50):
            catalog.open_operations("prod1", "QMPAYROLL")

    try:
        threads = [threading.Thread(target=host) for _ in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        event.remove(catalog.engine, "close", gone)  # the URL's shared engine
    assert closed == [], f"{len(closed)} connections closed as they came back, and as many opened again"
