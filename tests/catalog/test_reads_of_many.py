"""The catalog's reads of a whole queue manager's receivers at once say what its reads of each receiver say."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest

from mqjournal import catalog as catalog_module
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from tests.backupstore.saves import SAVE_FILE_BYTES, receiver_saves, save_file_copy


def _renamed(saves, **changes):
    return [s.model_copy(update=changes) for s in saves]


@pytest.fixture
def recorded(empty_database, tmp_path, monkeypatch):
    """Saves in three save files, two of them copied into the store: a receiver saved twice, a name reused by a later
    incarnation, a name with LIKE's wildcard in it, and another host's receivers of the same names."""
    monkeypatch.setattr(catalog_module, "_NAMES_PER_QUERY", 2)  # several queries per read
    catalog = Catalog(empty_database)
    store = BackupStore(tmp_path / "backups")
    first = receiver_saves("MQJ0001", 1, 3)
    again = receiver_saves("MQJ0002", 3, 3)  # AMQA000003 saved a second time
    reused = _renamed(receiver_saves("MQJ0003", 1, 1), attached_at=first[0].attached_at + timedelta(days=400))
    wildcard = _renamed(receiver_saves("MQJ0004", 7, 1), receiver="AMQ_000007")
    elsewhere = _renamed(receiver_saves("MQJ0001", 1, 3), host="prod2")
    for saves, copied in [(first, True), (again, True), (reused, False), (wildcard, True), (elsewhere, True)]:
        if copied:
            catalog.record_stored(store.put(io.BytesIO(SAVE_FILE_BYTES), save_file_copy(saves)))
        for save in saves:
            catalog.record_save(save)
    incarnations = [(s.library, s.receiver, s.attached_at) for s in first + again + reused + wildcard]
    # One the catalog has never seen: AMQA000001's name, at an attach time no save has.
    incarnations.append(("QMPAYROLL", "AMQA000001", first[0].attached_at - timedelta(days=1)))
    return catalog, incarnations


def test_the_saves_of_each_receiver_are_its_saves_of(recorded):
    catalog, incarnations = recorded
    each = catalog.saves_of_each("prod1", incarnations)
    assert each == {key: catalog.saves_of("prod1", *key) for key in incarnations}
    assert len(each[incarnations[2]]) == 2 and each[incarnations[-1]] == []  # saved twice; never saved


def test_the_copies_of_each_receiver_in_the_store_are_its_off_partition_copies(recorded):
    catalog, incarnations = recorded
    each = catalog.off_partition_copies_of_each("prod1", incarnations)
    assert each == {key: catalog.off_partition_copies("prod1", *key) for key in incarnations}
    # AMQA000003 is in both copied save files (listed twice: once per save); the reused name was not copied.
    assert [len(each[key]) for key in incarnations] == [1, 1, 2, 2, 1, 1, 0, 1, 0]
