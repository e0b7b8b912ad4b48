"""What proves a stored object: `proof`, `proof_checked_at` and `proof_problem` on stored_objects.

A copy made by the copy step is proven (`copied`: the host's save file streamed into the store and read back
equal), and every row before this revision is one. A row a rebuild from the store recorded from its sidecar is a
claim (`claimed_by_sidecar`) until its bytes are matched with the host's save file. `proof_checked_at` is when the
bytes were last read again and matched (the scrub), `proof_problem` what such a read found wrong: while it is set
the copy proves nothing.

Revision ID: 0004
Revises: 0003_host_sha256
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003_host_sha256"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Columns added in place on both databases (SQLite's ADD COLUMN takes a NOT NULL column with a default): every
    # existing row is a copy the copy step verified, so 'copied' is what each one is.
    op.add_column("stored_objects", sa.Column("proof", sa.String(24), nullable=False, server_default="copied"))
    op.add_column("stored_objects", sa.Column("proof_checked_at", sa.DateTime(), nullable=True))
    op.add_column("stored_objects", sa.Column("proof_problem", sa.Text(), nullable=True))


def downgrade() -> None:
    raise NotImplementedError("the catalog is never migrated down: it holds the only record of which backups exist")
