"""The settings model: every field has a default, so a caller names only what it changes."""

from __future__ import annotations

from pathlib import Path

from mqjournal.settings import Settings


def test_settings_need_only_the_paths_and_the_backup_store_defaults_to_the_data_folder(tmp_path: Path):
    settings = Settings(
        fleet_file=tmp_path / "fleet.yaml",
        data_dir=tmp_path / "data",
        catalog_url="sqlite://",
        spark_app=Path("unused"),
        spark_conn_id="spark_default",
        schedule=None,
    )
    assert settings.backup_store == str(tmp_path / "data" / "backups") and settings.backup_store_conn_id is None
    assert Settings.from_env({"MQJOURNAL_BACKUP_STORE": "memory://store"}).backup_store == "memory://store"
