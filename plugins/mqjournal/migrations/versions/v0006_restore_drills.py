"""Restore drills: each stored copy a drill uploaded into a scratch save file on a partition, when, and what the
partition's object list of it showed; and the proof state `restore_drill`.

A drill is the only end-to-end proof that a copy restores: its bytes went back into a save file on IBM i, which took
them as a save file and listed (QSYS2.SAVE_FILE_OBJECTS) every receiver the catalog says the copy holds. A claimed
copy (`claimed_by_sidecar`, a rebuild's) that passes a drill is proven: its proof becomes `restore_drill`. The proof
column is a String(24) already (revision 0004), so the new state needs no change to it; this revision adds the
table of drills, one row per copy drilled, read by the sampling rule (the least recently drilled first) and the
fleet view (the last drill per queue manager).

Revision ID: 0006_restore_drills
Revises: 0005_stored_object_receivers
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_restore_drills"
down_revision = "0005_stored_object_receivers"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "restore_drills",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("qmgr", sa.String(48), nullable=False),
        sa.Column("store_url", sa.String(1024), nullable=False),
        sa.Column("key", sa.String(1024), nullable=False),
        sa.Column("save_file_library", sa.String(10), nullable=False),
        sa.Column("save_file", sa.String(10), nullable=False),
        sa.Column("run_id", sa.String(250), nullable=False),
        sa.Column("drilled_at", sa.DateTime(), nullable=False),
        sa.Column("outcome", sa.String(12), nullable=False),
        sa.Column("scratch", sa.String(21), nullable=True),
        sa.Column("problem", sa.Text(), nullable=True),
        sa.Column("action", sa.Text(), nullable=True),
    )
    op.create_index("ix_restore_drills_store_key", "restore_drills", ["store_url", "key"])
    op.create_index("ix_restore_drills_host_qmgr", "restore_drills", ["host", "qmgr"])


def downgrade() -> None:
    raise NotImplementedError("the catalog is never migrated down: it holds the only record of which backups exist")
