"""Each receiver of a stored object's object list in a row of its own, indexed by host and receiver name.

The save and delete steps ask which stored objects hold a queue manager's receivers (up to 500 names at a time).
Asked of the object lists' JSON text, that was an OR of LIKE clauses no index can serve, over every stored object of
the host; this table answers it from the index on (host, receiver). The object list stays in stored_objects.objects,
the one that decides (library and attach time); rows here only find it. The stored objects already catalogued get
their rows from their object lists here.

Revision ID: 0005_stored_object_receivers
Revises: 0004
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0005_stored_object_receivers"
down_revision = "0004"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_ROWS_PER_INSERT = 1000


def upgrade() -> None:
    table = op.create_table(
        "stored_object_receivers",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("stored_object_id", _ID, sa.ForeignKey("stored_objects.id"), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("library", sa.String(10), nullable=False),
        sa.Column("receiver", sa.String(10), nullable=False),
    )
    op.create_index("ix_stored_object_receivers_host_receiver", "stored_object_receivers", ["host", "receiver"])
    stored = sa.table("stored_objects", sa.column("id"), sa.column("host"), sa.column("objects"))
    rows = []
    catalogued = op.get_bind().execute(sa.select(stored.c.id, stored.c.host, stored.c.objects))
    for stored_object_id, host, objects in catalogued:
        named = sorted({(o["library"], o["receiver"]) for o in json.loads(objects)})
        rows += [
            {"stored_object_id": stored_object_id, "host": host, "library": library, "receiver": receiver}
            for library, receiver in named
        ]
    for start in range(0, len(rows), _ROWS_PER_INSERT):
        op.bulk_insert(table, rows[start : start + _ROWS_PER_INSERT])


def downgrade() -> None:
    raise NotImplementedError("the catalog is never migrated down: it holds the only record of which backups exist")
