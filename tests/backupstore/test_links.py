"""A folder store keeps every byte under its root: a symbolic link anywhere on a key's path is refused, for writes,
reads and deletes, and nothing is written, read or removed through it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from mqjournal.backupstore import BackupStore, BackupStoreError, rebuild_catalog
from mqjournal.catalog import Catalog
from tests.backupstore.saves import SAVE_FILE_BYTES


@pytest.fixture
def root(tmp_path) -> Path:
    return tmp_path / "backups"


@pytest.fixture
def outside(tmp_path) -> Path:
    found = tmp_path / "outside"
    found.mkdir()
    return found


def _everything_under(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*"))


@pytest.mark.parametrize("level", [1, 2, 3], ids=["host", "qmgr", "run"])
def test_a_folder_of_the_store_that_links_elsewhere_receives_nothing(root, outside, copy, level):
    store = BackupStore(root)
    key_parts = store.put(io.BytesIO(b"x"), copy.model_copy(update={"save_file": "OTHER"})).key.split("/")
    linked = root.joinpath(*key_parts[:level])
    store.delete("/".join(key_parts))
    for child in sorted(linked.rglob("*"), reverse=True):
        child.rmdir() if child.is_dir() else child.unlink()
    linked.rmdir()
    linked.symlink_to(outside, target_is_directory=True)
    with pytest.raises(BackupStoreError, match="symbolic link"):
        store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    assert _everything_under(outside) == []


def test_reads_and_deletes_through_a_linked_folder_are_refused(root, outside, copy):
    store = BackupStore(root)
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    run = (root / stored.key).parent
    run.rename(outside / "run")
    run.symlink_to(outside / "run", target_is_directory=True)
    before = _everything_under(outside)
    for attempt in (
        lambda: store.get(stored.key),
        lambda: store.open_for_restore(stored.key),
        lambda: store.delete(stored.key),
    ):
        with pytest.raises(BackupStoreError, match="symbolic link"):
            attempt()
    assert not store.verify(stored.key).ok
    assert _everything_under(outside) == before


def test_a_sidecar_that_is_a_link_is_not_read(root, outside, copy):
    store = BackupStore(root)
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    sidecar = root / f"{stored.key}.json"
    (outside / "sidecar.json").write_bytes(sidecar.read_bytes())
    sidecar.unlink()
    sidecar.symlink_to(outside / "sidecar.json")
    with pytest.raises(BackupStoreError, match="symbolic link"):
        store.get(stored.key)


def test_a_rebuild_records_nothing_found_through_a_link(root, outside, copy, tmp_path):
    store = BackupStore(root)
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    host = root / stored.key.split("/")[0]
    host.rename(outside / "host")
    host.symlink_to(outside / "host", target_is_directory=True)
    catalog = Catalog(f"sqlite:///{tmp_path / 'rebuilt.db'}")
    summary = rebuild_catalog(store, catalog)
    assert summary.recorded == [] and not summary.clean
    assert summary.links == ["prod1"] and "a symbolic link, nothing behind it read or recorded: prod1" in summary.text()
    assert catalog.stored_objects("prod1") == []


def test_a_store_root_that_is_itself_a_link_is_used_where_it_points(tmp_path, copy):
    # The configured folder may be a link to a mount (/srv/backups -> /mnt/nfs/backups): that is the store.
    real = tmp_path / "mnt" / "backups"
    real.mkdir(parents=True)
    (tmp_path / "backups").symlink_to(real, target_is_directory=True)
    store = BackupStore(tmp_path / "backups")
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    assert store.still_holds(stored) is None
    assert (real / stored.key).is_file()
