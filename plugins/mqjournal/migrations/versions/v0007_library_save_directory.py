"""A library save's second part: the save file holding the SAV of the queue manager's IFS directory.

MQ keeps a queue manager's object definitions and their messages in its IFS directory, not in its library, so a
library save is a SAVLIB of the library plus a SAV of that directory into a save file of its own (in the same
library as the SAVLIB's). Library saves catalogued before this revision have neither column set: a library
recovery from one of them is planned with a gap (its IFS part is missing) instead of being called complete.

Revision ID: 0007_library_save_directory
Revises: 0006_restore_drills
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_library_save_directory"
down_revision = "0006_restore_drills"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("library_saves") as batch:
        batch.add_column(sa.Column("directory", sa.String(255), nullable=True))
        batch.add_column(sa.Column("directory_save_file", sa.String(10), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("library_saves") as batch:
        batch.drop_column("directory_save_file")
        batch.drop_column("directory")
