"""The Airflow plugin that writes each maintenance run's outcome into its note (mqjournal.airflow.notes)."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from mqjournal.airflow import notes


class MqJournalRunNotesPlugin(AirflowPlugin):
    name = "mqjournal_run_notes"
    listeners = [notes]  # noqa: RUF012 - as AirflowPlugin declares it
