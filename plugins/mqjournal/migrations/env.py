"""Alembic's entry point for the catalog's migrations: run on the connection `mqjournal.migrations.upgrade` hands
over, inside the transaction (and lock) that function holds."""

from __future__ import annotations

from alembic import context

from mqjournal.migrations import VERSION_TABLE


def _run() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("the catalog's migrations run through mqjournal.migrations.upgrade, not the alembic CLI")
    # render_as_batch: SQLite alters a column only by copying its table, which batch operations do.
    context.configure(connection=connection, version_table=VERSION_TABLE, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


_run()
