"""The catalog's stored objects, and a catalog rebuilt from the backup store alone (`mqjournal catalog rebuild`)."""

from __future__ import annotations

import io

import pytest

from mqjournal.backupstore import BackupStore, rebuild_catalog
from mqjournal.catalog import Catalog, StoredObject
from mqjournal.cli import main
from tests.backupstore.saves import SAVE_FILE_BYTES, receiver_saves, save_file_copy


def _put_and_record(store: BackupStore, catalog: Catalog, save_file: str, first: int) -> StoredObject:
    """What the save step does once the copy verifies: the stored object and the receiver saves, in the catalog."""
    saves = receiver_saves(save_file, first)
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), save_file_copy(saves))
    catalog.record_stored(stored)
    for save in saves:
        catalog.record_save(save)
    return stored


def _rows(catalog: Catalog) -> tuple[list[StoredObject], list]:
    return catalog.stored_objects("prod1", "PAYROLL", unproven=True), catalog.saves_for("prod1", "QMPAYROLL")


@pytest.fixture
def recorded(store, tmp_path) -> Catalog:
    """A catalog with two save files copied into the store, as the save step left it."""
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    _put_and_record(store, catalog, "MQJ0001", 1)
    _put_and_record(store, catalog, "MQJ0002", 4)
    return catalog


# --- the catalog's records --------------------------------------------------------------------------------------


def test_a_stored_object_is_recorded_once_however_often_it_is_recorded(store, tmp_path, copy):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    catalog.record_stored(stored)
    catalog.record_stored(stored)
    assert catalog.stored_objects("prod1", "PAYROLL") == [stored]


def test_a_receiver_in_a_verified_stored_object_is_backed_up_off_the_partition(recorded):
    (save,) = recorded.saves_of("prod1", "QMPAYROLL", "AMQA000002")
    assert recorded.is_backed_up_off_partition("prod1", "QMPAYROLL", "AMQA000002", save.attached_at)
    (copy,) = recorded.off_partition_copies("prod1", "QMPAYROLL", "AMQA000002")
    assert copy.save_file == save.save_file == "MQJ0001"


def test_a_receiver_saved_only_on_the_partition_is_not_backed_up_off_it(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    (save,) = receiver_saves(count=1)
    catalog.record_save(save)
    assert not catalog.is_backed_up_off_partition("prod1", "QMPAYROLL", save.receiver, save.attached_at)


def test_an_earlier_incarnation_of_a_receiver_name_is_not_the_one_backed_up(recorded):
    (save,) = recorded.saves_of("prod1", "QMPAYROLL", "AMQA000002")
    older = save.attached_at.replace(year=2025)  # receiver names wrap: the same name, attached a year earlier
    assert not recorded.is_backed_up_off_partition("prod1", "QMPAYROLL", "AMQA000002", older)


def test_a_receiver_listed_without_an_attach_time_is_not_taken_for_a_given_incarnation(store, tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    (save,) = receiver_saves(count=1)
    copy = save_file_copy([save])
    copy = copy.model_copy(update={"objects": (copy.objects[0].model_copy(update={"attached_at": None}),)})
    catalog.record_stored(store.put(io.BytesIO(SAVE_FILE_BYTES), copy))
    assert not catalog.is_backed_up_off_partition("prod1", "QMPAYROLL", save.receiver, save.attached_at)
    assert catalog.is_backed_up_off_partition("prod1", "QMPAYROLL", save.receiver)  # some incarnation of the name


# --- rebuilding from the store ----------------------------------------------------------------------------------


def test_a_catalog_rebuilt_from_the_store_has_the_rows_recorded_when_putting(store, recorded, tmp_path):
    empty = Catalog(f"sqlite:///{tmp_path / 'rebuilt.db'}")
    summary = rebuild_catalog(store, empty)
    assert summary.clean and len(summary.recorded) == 2 and summary.receiver_saves == 6
    assert _rows(empty) == _rows(recorded)


def test_a_rebuilt_catalog_holds_its_stored_objects_as_claims_that_prove_no_save(store, recorded, tmp_path):
    empty = Catalog(f"sqlite:///{tmp_path / 'rebuilt.db'}")
    rebuild_catalog(store, empty)
    assert {c.proof for c in empty.stored_copies(store.url)} == {"claimed_by_sidecar"}
    assert not any(c.proves for c in empty.stored_copies(store.url))
    assert empty.stored_objects("prod1") == []
    (save,) = empty.saves_of("prod1", "QMPAYROLL", "AMQA000002")
    assert not empty.is_backed_up_off_partition("prod1", "QMPAYROLL", "AMQA000002", save.attached_at)
    assert empty.off_partition_copies_of_each("prod1", [("QMPAYROLL", "AMQA000002", save.attached_at)]) == {
        ("QMPAYROLL", "AMQA000002", save.attached_at): []
    }


def test_a_sidecar_listing_receivers_its_bytes_do_not_hold_makes_none_of_them_deletable(store, tmp_path):
    # Bytes of one save file, with a sidecar whose SHA-256 is right but whose object list names other receivers.
    lying = save_file_copy(receiver_saves("MQJ0009", first=40))
    store.put(io.BytesIO(SAVE_FILE_BYTES), lying)
    catalog = Catalog(f"sqlite:///{tmp_path / 'rebuilt.db'}")
    rebuild_catalog(store, catalog)
    for save in receiver_saves("MQJ0009", first=40):
        assert not catalog.is_backed_up_off_partition("prod1", "QMPAYROLL", save.receiver, save.attached_at)


def test_a_rebuild_into_the_catalog_that_made_the_copies_leaves_them_proven(store, recorded):
    rebuild_catalog(store, recorded)
    assert {c.proof for c in recorded.stored_copies(store.url)} == {"copied"}
    assert recorded.is_backed_up_off_partition("prod1", "QMPAYROLL", "AMQA000002")


def test_rebuilding_twice_records_nothing_twice(store, recorded, tmp_path):
    empty = Catalog(f"sqlite:///{tmp_path / 'rebuilt.db'}")
    rebuild_catalog(store, empty)
    first = _rows(empty)
    rebuild_catalog(store, empty)
    rebuild_catalog(store, recorded)  # into the catalog the rows came from
    assert _rows(empty) == first == _rows(recorded)


def test_a_flipped_byte_is_named_by_the_rebuild_and_not_recorded(store, recorded, tmp_path):
    damaged = recorded.stored_objects("prod1", "PAYROLL")[0]
    path = f"{store.root}/{damaged.key}"
    data = bytearray(store.fs.cat_file(path))
    data[7] ^= 0x80
    store.fs.pipe_file(path, bytes(data))
    empty = Catalog(f"sqlite:///{tmp_path / 'rebuilt.db'}")
    summary = rebuild_catalog(store, empty)
    assert not summary.clean
    (mismatch,) = summary.mismatches
    assert damaged.key in mismatch and "SHA-256" in mismatch
    assert [s.key for s in empty.stored_objects("prod1", unproven=True)] == summary.recorded != [damaged.key]
    assert not empty.is_backed_up_off_partition("prod1", "QMPAYROLL", "AMQA000001")


def test_the_command_rebuilds_an_empty_catalog_and_prints_a_summary(store, recorded, tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'rebuilt.db'}"
    assert main(["catalog", "rebuild", "--from-store", store.url, "--catalog", url]) == 0
    out = capsys.readouterr().out
    assert "2 stored object(s) verified against their sidecars and recorded as claimed, 6 receiver save(s)" in out
    assert "proves no save" in out
    assert main(["catalog", "rebuild", "--from-store", store.url, "--catalog", url]) == 0
    assert _rows(Catalog(url)) == _rows(recorded)


def test_the_command_names_an_unreadable_sidecar_and_exits_3(store, recorded, tmp_path, capsys):
    broken = recorded.stored_objects("prod1", "PAYROLL")[1]
    store.fs.pipe_file(f"{store.root}/{broken.key}.json", b'{"sidecar": "mqjournal.stored-object/v1", "host": ')
    url = f"sqlite:///{tmp_path / 'rebuilt.db'}"
    assert main(["catalog", "rebuild", "--from-store", store.url, "--catalog", url]) == 3
    out = capsys.readouterr().out
    assert f"unreadable sidecar, not recorded: {broken.key}" in out
    assert len(Catalog(url).stored_objects("prod1", unproven=True)) == 1


def test_the_command_refuses_a_store_that_is_not_there_without_a_traceback(tmp_path, capsys):
    missing = tmp_path / "no-such-store"
    url = f"sqlite:///{tmp_path / 'rebuilt.db'}"
    assert main(["catalog", "rebuild", "--from-store", str(missing), "--catalog", url]) == 2
    err = capsys.readouterr().err
    assert f"the backup store {missing} does not exist" in err and "Traceback" not in err


def test_the_command_refuses_an_unknown_store_protocol(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'rebuilt.db'}"
    assert main(["catalog", "rebuild", "--from-store", "nosuch://bucket/x", "--catalog", url]) == 2
    assert "not a backup store URL" in capsys.readouterr().err


def test_the_command_needs_a_catalog(store, monkeypatch, capsys):
    monkeypatch.delenv("MQJOURNAL_CATALOG_URL", raising=False)
    assert main(["catalog", "rebuild", "--from-store", store.url]) == 2
    assert "--catalog" in capsys.readouterr().err
