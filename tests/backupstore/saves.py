"""A save file of a payroll queue manager and the receiver saves it holds, as the save step records them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mqjournal.catalog import SavedReceiver, SaveFileCopy, SaveRecord

ATTACHED = datetime(2026, 11, 23, 2, 0, tzinfo=UTC)
RUN_ID = "scheduled__2026-11-23T02:00:00+00:00"
SAVE_FILE_BYTES = bytes(range(256)) * 9000  # some 2.3 MB: more than one chunk of the store's streaming


def receiver_saves(save_file: str = "MQJ0001", first: int = 1, count: int = 3) -> list[SaveRecord]:
    """The receiver saves SAVOBJ made into one save file, as the save step records them."""
    saves = []
    for n in range(first, first + count):
        attached = ATTACHED + timedelta(hours=n)
        saves.append(
            SaveRecord(
                host="prod1",
                qmgr="PAYROLL",
                qmgr_library="QMPAYROLL",
                receiver=f"AMQA{n:06d}",
                library="QMPAYROLL",
                attached_at=attached,
                detached_at=attached + timedelta(hours=1),
                first_sequence=n * 1000,
                last_sequence=n * 1000 + 999,
                previous=f"AMQA{n - 1:06d}",
                next=f"AMQA{n + 1:06d}",
                size_bytes=25_000 * n,
                save_file_library="MQSAVES",
                save_file=save_file,
                saved_at=ATTACHED + timedelta(days=1),
                verified_at=ATTACHED + timedelta(days=1, seconds=5),
                run_id=RUN_ID,
            )
        )
    return saves


def save_file_copy(saves: list[SaveRecord]) -> SaveFileCopy:
    first = saves[0]
    return SaveFileCopy(
        host=first.host,
        qmgr=first.qmgr,
        qmgr_library=first.qmgr_library,
        save_file_library=first.save_file_library,
        save_file=first.save_file,
        run_id=first.run_id,
        objects=tuple(SavedReceiver.from_save(s) for s in saves),
    )
