"""A backup store URL's password never shows: not in the store's repr or URL, an error, a log line or the catalog."""

from __future__ import annotations

import io
import logging
import uuid

import pytest
from fsspec.implementations.memory import MemoryFileSystem

from mqjournal.backupstore import BackupStore, BackupStoreError, StoreUnavailable
from mqjournal.catalog import Catalog
from mqjournal.cli import main
from tests.backupstore.saves import SAVE_FILE_BYTES

SECRET = "pw-s3cr3t"


class _FilesystemNamingItsCredentials(MemoryFileSystem):
    """A filesystem that spells its paths back as URLs with their credentials, as fsspec's HTTP and WebDAV ones do."""

    protocol = "credmem"
    root_marker = "/"

    @classmethod
    def _strip_protocol(cls, path: str) -> str:
        return "/" + path.removeprefix(f"credmem://backup:{SECRET}@store.example.com").lstrip("/")

    def unstrip_protocol(self, name: str) -> str:
        return f"credmem://backup:{SECRET}@store.example.com{name}"


def _store() -> BackupStore:
    return BackupStore(
        f"credmem://backup:{SECRET}@store.example.com/{uuid.uuid4().hex}", fs=_FilesystemNamingItsCredentials()
    )


def test_an_unopenable_store_url_is_named_without_its_password():
    with pytest.raises(StoreUnavailable) as refused:
        BackupStore(f"nosuch://backup:{SECRET}@store.example.com/mqjournal")
    message = str(refused.value)
    assert SECRET not in message and "backup:***@store.example.com" in message


def test_the_store_url_and_repr_hide_the_password():
    store = _store()
    assert SECRET not in store.url and SECRET not in repr(store)
    assert store.url.startswith("credmem://backup:***@store.example.com/")


def test_a_copy_recorded_from_a_store_with_a_password_carries_none(copy, tmp_path, caplog):
    store = _store()
    with caplog.at_level(logging.DEBUG):
        stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
        catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
        catalog.record_stored(stored)
    assert SECRET not in stored.model_dump_json()
    assert SECRET not in store.fs.cat_file(f"{store.root}/{stored.key}.json").decode()
    assert SECRET not in (tmp_path / "catalog.db").read_bytes().decode("latin-1")
    assert SECRET not in caplog.text


def test_the_rebuild_command_names_a_store_without_its_password(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'rebuilt.db'}"
    assert main(["catalog", "rebuild", "--from-store", f"nosuch://u:{SECRET}@host/x", "--catalog", url]) == 2
    captured = capsys.readouterr()
    assert SECRET not in captured.err + captured.out and "u:***@host" in captured.err


def test_an_unreadable_sidecar_is_named_without_the_password():
    store = _store()
    store.fs.pipe_file(f"{store.root}/prod1/PAYROLL/run/MQSAVES.MQJ0001.savf.json", b"{")
    with pytest.raises(BackupStoreError) as refused:
        store.get("prod1/PAYROLL/run/MQSAVES.MQJ0001.savf")
    assert SECRET not in str(refused.value) and "backup:***@store.example.com" in str(refused.value)


def test_the_settings_repr_does_not_show_the_store_url(tmp_path):
    from mqjournal.settings import Settings

    settings = Settings.from_env(
        {"MQJOURNAL_DATA_DIR": str(tmp_path), "MQJOURNAL_BACKUP_STORE": f"nosuch://backup:{SECRET}@store.example.com/x"}
    )
    assert settings.backup_store.endswith("store.example.com/x")
    assert SECRET not in repr(settings) and SECRET not in str(settings)
