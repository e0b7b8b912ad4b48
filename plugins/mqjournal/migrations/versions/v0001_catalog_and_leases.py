"""The catalog and the SSH session leases as `create_all` made them before the schema had migrations.

Every table and index is created only where it is missing: a catalog made by `create_all` is adopted as it is (its
rows kept, nothing dropped or recreated), and one that never had a table of this revision gets it, such as
host_session_leases in a catalog no lease was ever taken on.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# BIGINT keys on PostgreSQL; SQLite's own INTEGER, so that the primary keys stay rowid aliases.
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _table(name: str, *columns: sa.Column | sa.Constraint, indexed: tuple[str, ...] = ("host",)) -> None:
    op.create_table(name, *columns, if_not_exists=True)
    for column in indexed:
        op.create_index(f"ix_{name}_{column}", name, [column], if_not_exists=True)


def upgrade() -> None:
    _table(
        "receiver_saves",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("qmgr", sa.String(48), nullable=False),
        sa.Column("qmgr_library", sa.String(10), nullable=False),
        sa.Column("receiver", sa.String(10), nullable=False),
        sa.Column("library", sa.String(10), nullable=False),
        sa.Column("attached_at", sa.DateTime(), nullable=False),
        sa.Column("detached_at", sa.DateTime(), nullable=True),
        sa.Column("first_sequence", sa.BigInteger(), nullable=True),
        sa.Column("last_sequence", sa.BigInteger(), nullable=True),
        sa.Column("previous", sa.String(10), nullable=True),
        sa.Column("next", sa.String(10), nullable=True),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("device", sa.String(10), nullable=False),
        sa.Column("save_file_library", sa.String(10), nullable=False),
        sa.Column("save_file", sa.String(10), nullable=False),
        sa.Column("saved_at", sa.DateTime(), nullable=False),
        sa.Column("verified_at", sa.DateTime(), nullable=False),
        sa.Column("run_id", sa.String(250), nullable=False),
        sa.UniqueConstraint("host", "library", "receiver", "attached_at", "save_file_library", "save_file"),
        indexed=("host", "receiver"),
    )
    _table(
        "receiver_deletions",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("qmgr", sa.String(48), nullable=False),
        sa.Column("receiver", sa.String(10), nullable=False),
        sa.Column("library", sa.String(10), nullable=False),
        sa.Column("attached_at", sa.DateTime(), nullable=False),
        sa.Column("deleted_at", sa.DateTime(), nullable=False),
        sa.Column("delete_option", sa.String(12), nullable=False),
        sa.Column("run_id", sa.String(250), nullable=False),
    )
    _table(
        "library_saves",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("qmgr", sa.String(48), nullable=False),
        sa.Column("qmgr_library", sa.String(10), nullable=False),
        sa.Column("journal", sa.String(10), nullable=False),
        sa.Column("device", sa.String(10), nullable=False),
        sa.Column("save_file_library", sa.String(10), nullable=False),
        sa.Column("save_file", sa.String(10), nullable=False),
        sa.Column("saved_at", sa.DateTime(), nullable=False),
        sa.Column("verified_at", sa.DateTime(), nullable=False),
        sa.Column("attached_receiver", sa.String(10), nullable=False),
        sa.Column("attached_at", sa.DateTime(), nullable=False),
        sa.Column("oldest_needed_receiver", sa.String(10), nullable=True),
        sa.Column("oldest_needed_at", sa.DateTime(), nullable=False),
        sa.Column("threshold_kb", sa.BigInteger(), nullable=True),
        sa.Column("run_id", sa.String(250), nullable=False),
        sa.UniqueConstraint("host", "qmgr_library", "save_file_library", "save_file"),
    )
    _table(
        "discarded_save_files",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("save_file_library", sa.String(10), nullable=False),
        sa.Column("save_file", sa.String(10), nullable=False),
        sa.Column("discarded_at", sa.DateTime(), nullable=False),
        sa.Column("run_id", sa.String(250), nullable=False),
        sa.UniqueConstraint("host", "save_file_library", "save_file"),
    )
    _table(
        "stored_objects",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("qmgr", sa.String(48), nullable=False),
        sa.Column("qmgr_library", sa.String(10), nullable=False),
        sa.Column("save_file_library", sa.String(10), nullable=False),
        sa.Column("save_file", sa.String(10), nullable=False),
        sa.Column("run_id", sa.String(250), nullable=False),
        sa.Column("store_url", sa.String(1024), nullable=False),
        sa.Column("key", sa.String(1024), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("verified_at", sa.DateTime(), nullable=False),
        sa.Column("objects", sa.Text(), nullable=False),
        sa.UniqueConstraint("store_url", "key"),
    )
    _table(
        "operations",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("qmgr", sa.String(48), nullable=False),
        sa.Column("qmgr_library", sa.String(10), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("library", sa.String(10), nullable=False),
        sa.Column("receivers", sa.Text(), nullable=False),
        sa.Column("attached_at", sa.DateTime(), nullable=True),
        sa.Column("save_file_library", sa.String(10), nullable=True),
        sa.Column("save_file", sa.String(10), nullable=True),
        sa.Column("delete_option", sa.String(12), nullable=True),
        sa.Column("run_id", sa.String(250), nullable=False),
        sa.Column("worker", sa.String(300), nullable=False),
        sa.Column("state", sa.String(12), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        indexed=("host", "state"),
    )
    _table(
        "save_files_removed_from_host",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("save_file_library", sa.String(10), nullable=False),
        sa.Column("save_file", sa.String(10), nullable=False),
        sa.Column("store_key", sa.String(1024), nullable=False),
        sa.Column("removed_at", sa.DateTime(), nullable=False),
        sa.Column("run_id", sa.String(250), nullable=False),
        sa.UniqueConstraint("host", "save_file_library", "save_file"),
    )
    _table(
        "host_session_leases",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("host", "slot"),
        indexed=(),
    )


def downgrade() -> None:
    raise NotImplementedError("the catalog is never migrated down: it holds the only record of which backups exist")
