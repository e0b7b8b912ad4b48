"""The mqjournal.linux-snapshot/v1 contract: its published schema, and names checked on read."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from mqjournal.linuxmq import snapshot
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.snapshot import LinuxSnapshot


def record(**changes: object) -> dict:
    return {
        "schema": "mqjournal.linux-snapshot/v1",
        "run_id": "collect_1",
        "collected_at": datetime(2026, 12, 1, 12, tzinfo=UTC).isoformat(),
        "host": "mq-linux1",
        "platform": "linux",
        "qmgr": "QM.ORDERS",
        "log_type": "LINEAR",
        "log_management": "Archive",
        "log_path": "/var/mqm/log/QM!ORDERS/active/",
        "extent_bytes": 16 * 1024 * 1024,
        "current_extent": "S0000012.LOG",
        "restart_extent": "S0000011.LOG",
        "media_extent": "S0000003.LOG",
        "archive_extent": "S0000001.LOG",
        "media_images": {"forced": True, "ok": True, "at": None, "messages": ["AMQ7467I", "AMQ7468I"]},
        "extents": [{"name": f"S{n:07d}.LOG", "size_bytes": 16 * 1024 * 1024, "modified_at": None} for n in range(13)],
    } | changes


def test_a_record_reads_back_with_its_log_points() -> None:
    read = LinuxSnapshot.model_validate_json(LinuxSnapshot.model_validate(record()).model_dump_json())

    assert read.points() is not None and read.points().media == Extent(3)  # type: ignore[union-attr]
    assert LinuxSnapshot.model_validate(record(current_extent=None)).points() is None


@pytest.mark.parametrize(
    "changes",
    [
        {"qmgr": "QM1; rm -rf /"},
        {"current_extent": "S12.LOG"},
        {"media_extent": "../S0000001.LOG"},
        {"extents": [{"name": "amqhlctl.lfh", "size_bytes": 1, "modified_at": None}]},
        {"schema": "mqjournal.linux-snapshot/v2"},
        {"platform": "ibmi"},
    ],
)
def test_a_record_with_a_name_mq_would_not_write_is_refused(changes: dict) -> None:
    with pytest.raises(ValidationError):
        LinuxSnapshot.model_validate(record(**changes))


def test_published_schema_file_is_current() -> None:
    assert snapshot.published_schema_text() == snapshot.json_schema_text(), (
        f"mqjournal/schemas/{snapshot.SCHEMA_FILE} is out of date: mqjournal schema --contract linux-snapshot --write"
    )
    assert snapshot.json_schema()["$id"] == "mqjournal.linux-snapshot/v1"
