"""A real PostgreSQL server for the catalog tests: started on loopback by the tests, stopped after them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.catalog.databases import new_postgres_database
from tests.catalog.pgserver import postgres_server


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.xdist_group("postgresql"))])
def empty_database(request, tmp_path) -> str:
    """The URL of a database with nothing in it, on SQLite (the default catalog) and on PostgreSQL (production)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'catalog.db'}"
    return new_postgres_database(request.getfixturevalue("postgres_url"))
