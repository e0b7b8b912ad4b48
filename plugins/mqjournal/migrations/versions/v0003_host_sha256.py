"""The host's SHA-256 of each stored save file: a copy counts as a backup only when its bytes hash to it.

A download of the right length can still hold the wrong bytes, and a save file can be saved into again by another
job between the check of its content and its download. So each copy records the digest the partition computed of
the save file (ibmi/hostdigest.py) while its object list was the one the copy describes. Rows copied before this
revision get NULL: no host vouched for them, so no receiver is deleted on their account.

Revision ID: 0003_host_sha256
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_host_sha256"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("stored_objects") as batch:
        batch.add_column(sa.Column("host_sha256", sa.String(64), nullable=True))


def downgrade() -> None:
    raise NotImplementedError("the catalog is never migrated down: it holds the only record of which backups exist")
