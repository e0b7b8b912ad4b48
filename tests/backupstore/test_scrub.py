"""The scrub: every stored copy read again within the set number of days, oldest verification first and bounded in
bytes per run; a copy that no longer matches is flagged loudly and proves nothing from then on."""

from __future__ import annotations

import io
import logging
from datetime import UTC, datetime, timedelta

import pytest

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog, StoredObject
from mqjournal.cli import main
from mqjournal.scrub import due, scrub
from mqjournal.sizefmt import size
from tests.backupstore.saves import SAVE_FILE_BYTES, receiver_saves, save_file_copy

DAY = timedelta(days=1)
EVERY = timedelta(days=30)


@pytest.fixture
def catalog(tmp_path) -> Catalog:
    return Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")


def _copied(store: BackupStore, catalog: Catalog, save_file: str, first: int) -> StoredObject:
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), save_file_copy(receiver_saves(save_file, first)))
    catalog.record_stored(stored)
    return stored


def _flip(store: BackupStore, key: str) -> None:
    path = f"{store.root}/{key}"
    data = bytearray(store.fs.cat_file(path))
    data[4096] ^= 0x40
    store.fs.pipe_file(path, bytes(data))


def _later(days: float) -> datetime:
    return datetime.now(UTC) + timedelta(days=days)


def test_nothing_is_due_within_the_interval(store, catalog):
    _copied(store, catalog, "MQJ0001", 1)
    result = scrub(store, catalog, every=EVERY, max_bytes=10**12, now=_later(29))
    assert (result.due, result.matched, result.bytes_read) == (0, [], 0)


def test_a_copy_due_is_read_again_and_its_verification_time_recorded(store, catalog):
    stored = _copied(store, catalog, "MQJ0001", 1)
    at = _later(31)
    result = scrub(store, catalog, every=EVERY, max_bytes=10**12, now=at)
    assert result.matched == [stored.key] and result.clean and result.bytes_read == len(SAVE_FILE_BYTES)
    (copy,) = catalog.stored_copies(store.url)
    assert copy.checked_at is not None and copy.proves
    assert due(catalog.stored_copies(store.url), datetime.now(UTC) + 29 * DAY, EVERY) == []  # read just now


def test_a_flipped_byte_is_flagged_and_the_copy_proves_nothing_from_then_on(store, catalog, caplog):
    stored = _copied(store, catalog, "MQJ0001", 1)
    _flip(store, stored.key)
    with caplog.at_level(logging.ERROR, logger="mqjournal.scrub"):
        result = scrub(store, catalog, every=EVERY, max_bytes=10**12, now=_later(31))
    assert not result.clean
    (mismatch,) = result.mismatched
    assert stored.key in mismatch and "SHA-256" in mismatch
    assert "MISMATCH" in result.text() and "no longer counts as a backup" in caplog.text
    (copy,) = catalog.stored_copies(store.url)
    assert not copy.proves and copy.problem is not None
    assert not catalog.is_backed_up_off_partition("prod1", "QMPAYROLL", "AMQA000001")
    assert catalog.stored_objects("prod1") == []


def test_a_copy_put_back_as_it_was_counts_again_at_the_next_scrub(store, catalog):
    stored = _copied(store, catalog, "MQJ0001", 1)
    _flip(store, stored.key)
    scrub(store, catalog, every=EVERY, max_bytes=10**12, now=_later(31))
    _flip(store, stored.key)  # flipped back: the bytes recorded when the copy was made
    result = scrub(store, catalog, every=EVERY, max_bytes=10**12, now=_later(62))
    assert result.matched == [stored.key]
    assert catalog.is_backed_up_off_partition("prod1", "QMPAYROLL", "AMQA000001")


def test_the_oldest_verification_goes_first_and_a_run_stops_at_its_byte_budget(store, catalog):
    first = _copied(store, catalog, "MQJ0001", 1)
    second = _copied(store, catalog, "MQJ0002", 4)
    third = _copied(store, catalog, "MQJ0003", 7)
    scrub(store, catalog, every=timedelta(0), max_bytes=1, now=_later(0))  # reads `first` only: it is now newest

    result = scrub(store, catalog, every=EVERY, max_bytes=len(SAVE_FILE_BYTES) + 1, now=_later(40))

    assert result.due == 3
    assert result.matched == [second.key, third.key]  # the budget is crossed by the copy that crosses it
    assert result.left_for_later == [first.key]
    assert result.bytes_read == 2 * len(SAVE_FILE_BYTES)


def test_a_copy_gone_from_the_store_is_flagged(store, catalog):
    stored = _copied(store, catalog, "MQJ0001", 1)
    store.fs.rm_file(f"{store.root}/{stored.key}")
    result = scrub(store, catalog, every=EVERY, max_bytes=10**12, now=_later(31))
    assert [m.split(":")[0] for m in result.mismatched] == [stored.key]
    assert not catalog.is_backed_up_off_partition("prod1", "QMPAYROLL", "AMQA000001")


def test_the_command_scrubs_what_is_due_and_exits_3_on_a_mismatch(store, catalog, tmp_path, capsys):
    stored = _copied(store, catalog, "MQJ0001", 1)
    args = ["store", "scrub", "--store", store.url, "--catalog", catalog.url, "--every-days", "0"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "1 read again and matching" in out
    assert f"({size(len(SAVE_FILE_BYTES))} read)" in out  # as every other size is written (mqjournal.sizefmt)
    _flip(store, stored.key)
    assert main(args) == 3
    assert f"MISMATCH: {stored.key}" in capsys.readouterr().out


def test_the_expiry_dags_scrub_step_fails_loudly_on_a_mismatch(tmp_path):
    from mqjournal.airflow.expiry import scrub_store
    from mqjournal.airflow.settings import Settings
    from mqjournal.scrub import CopiesMismatched

    settings = Settings.from_env(
        {"MQJOURNAL_DATA_DIR": str(tmp_path), "MQJOURNAL_SCRUB_EVERY_DAYS": "0", "AIRFLOW_HOME": str(tmp_path)}
    )
    store, catalog = BackupStore.from_settings(settings), Catalog(settings.catalog_url)
    stored = _copied(store, catalog, "MQJ0001", 1)
    assert "1 read again and matching" in scrub_store(settings)
    _flip(store, stored.key)
    with pytest.raises(CopiesMismatched, match=stored.key) as failed:
        scrub_store(settings)
    assert "no longer count as backups" in str(failed.value)
