"""The DAGs' settings: they live in `mqjournal.settings` (the SSH transport and the command line read them too);
this module keeps the import path the DAG files and tests use."""

from __future__ import annotations

from mqjournal.settings import REPO, Settings, safe, settings

__all__ = ["REPO", "Settings", "safe", "settings"]
