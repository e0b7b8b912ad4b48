"""The settings model: every field has a default, so a caller names only what it changes."""

from __future__ import annotations

from pathlib import Path

from mqjournal.settings import Settings, SshSettings


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


def test_an_empty_schedule_means_none_and_an_empty_optional_setting_is_as_if_unset():
    settings = Settings.from_env(
        {
            "MQJOURNAL_SCHEDULE": "",
            "MQJOURNAL_SPARK_CONNECT_CONN_ID": "",
            "MQJOURNAL_DATA_CONN_ID": "aws_data",
            "MQJOURNAL_BACKUP_STORE_CONN_ID": "",
        }
    )
    assert settings.schedule is None and settings.spark_connect_conn_id is None
    assert settings.backup_store_conn_id == "aws_data"  # the default store's: the data folder's connection


def test_a_constructor_call_reads_no_environment(monkeypatch):
    monkeypatch.setenv("MQJOURNAL_SSH_COMMAND_TIMEOUT", "5")
    assert SshSettings().command_timeout == 60.0
    assert SshSettings.from_env().command_timeout == 5.0
