"""Copies of Linux queue managers' log extents (#32): one row per extent copied into a backup store, with the SHA-256
the host computed of it (sha256sum) and the copy's own, which are equal: an extent whose copy the host did not vouch
for is never recorded. The release step reads them (an extent goes only once a copy of it is proven), a restore plan
finds the copies of the extents a restart or a media recovery needs.

Revision ID: 0008_linux_extent_copies
Revises: 0007_library_save_directory
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_linux_extent_copies"
down_revision = "0007_library_save_directory"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "linux_extent_copies",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("qmgr", sa.String(48), nullable=False),
        sa.Column("extent", sa.String(12), nullable=False),
        sa.Column("run_id", sa.String(250), nullable=False),
        sa.Column("store_url", sa.String(1024), nullable=False),
        sa.Column("key", sa.String(1024), nullable=False),
        sa.Column("size_bytes", _ID, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("host_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("verified_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("store_url", "key"),
    )
    op.create_index("ix_linux_extent_copies_host_qmgr", "linux_extent_copies", ["host", "qmgr"])


def downgrade() -> None:
    raise NotImplementedError("the catalog is never migrated down: it holds the only record of which backups exist")
