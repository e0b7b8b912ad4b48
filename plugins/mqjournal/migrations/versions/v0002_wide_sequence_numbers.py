"""Journal sequence numbers beyond 64 bits: NUMERIC(20, 0), zero-padded text on SQLite.

A journal with RCVSIZOPT(*MAXOPT3) numbers its entries up to 18 446 744 073 709 551 600 (IBM i documentation,
"Resetting the sequence number of journal entries"), past BIGINT's 2**63 - 1. SQLite's NUMERIC keeps such a number
only as a REAL, rounded, so there the column is text of 20 digits: exact, and ordered as the numbers are.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_SEQUENCE = sa.Numeric(20, 0).with_variant(sa.String(20), "sqlite")
_COLUMNS = ("first_sequence", "last_sequence")


def upgrade() -> None:
    # On SQLite the table is copied into a new one with the new column types (indexes and constraints kept); on
    # PostgreSQL each column is altered in place, BIGINT converting to NUMERIC exactly.
    with op.batch_alter_table("receiver_saves") as batch:
        for column in _COLUMNS:
            batch.alter_column(column, type_=_SEQUENCE, existing_type=sa.BigInteger(), existing_nullable=True)
    if op.get_bind().dialect.name == "sqlite":
        for column in _COLUMNS:
            # The copy cast 42 to '42'; the catalog writes and compares '00000000000000000042'.
            op.execute(f"UPDATE receiver_saves SET {column} = printf('%020d', {column}) WHERE {column} IS NOT NULL")


def downgrade() -> None:
    raise NotImplementedError("the catalog is never migrated down: it holds the only record of which backups exist")
