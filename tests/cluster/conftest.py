"""The cluster test runs only when asked for: `make cluster-test` (pytest -m cluster). It starts PostgreSQL, Redis,
Spark and five Airflow processes, which `make test` and `make test-fast` must not do in passing: their marker
expressions ("not e2e", "e2e") do not name it, so it is deselected unless the expression names `cluster`."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "cluster: the deployment's topology as local processes (make cluster-test; deselected unless -m names it)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "cluster" in (config.option.markexpr or ""):
        return
    deselected = [item for item in items if item.get_closest_marker("cluster") is not None]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item.get_closest_marker("cluster") is None]
