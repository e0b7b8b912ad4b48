"""The bytes of a simulated save file: what stream I/O on ``/QSYS.LIB/<LIB>.LIB/<NAME>.FILE`` reads and writes.

Real save files are a proprietary IBM i format. What is documented: the data is a sequence of 528-byte records, read
and written sequentially, each carrying sequence and parity information that the system validates when the records
are written into another save file; a changed record or one out of sequence is refused with an escape message (IBM i
7.3 "I/O operations on a save file", rzaiusfoperations). The planner must treat the bytes as opaque: store them,
checksum them, send them back; never parse them.

The simulator's stand-in keeps that shape with content of its own (SIMPLIFICATION: nothing here is IBM's layout):

- an empty save file (CRTSAVF, CLRSAVF) has no records: 0 bytes;
- otherwise N records of `RECORD_BYTES` (528): a 24-byte header (`MAGIC`, format version u16, record number u32
  from 0, record count u32, payload length u16, CRC-32 u32 of the header's first 20 bytes and the payload area)
  and a 504-byte payload area, zero-padded;
- the payloads, concatenated, are zlib of the canonical JSON of `SaveFileData`: the save's kind, the saved library,
  the saved objects and the library image. Not the save file's own name, library, text or creation time: those
  belong to the object the data is written into (as on IBM i, where the data of one save file can be placed into
  another, existing and empty, save file).

Deterministic: the same data always gives the same bytes, so a download, an upload elsewhere and a download from
there give back the very same bytes (the client's checksum holds end to end). Sizes are the stand-in's own, not the
simulated storage of `SaveFile.size_bytes`.
"""

from __future__ import annotations

import struct
import zlib
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mqjournal.sim.model import LibraryImage, SavedObject, SaveFile

RECORD_BYTES = 528  # IBM i's save file record length (rzaiusfoperations: "it must be 528 bytes")
MAGIC = b"MQJSIMSF"
FORMAT_VERSION = 1
_HEADER = struct.Struct(">8sHIIHI")  # magic, version, record number, record count, payload length, CRC-32
PAYLOAD_BYTES = RECORD_BYTES - _HEADER.size


class DamagedSaveFile(ValueError):
    """Bytes that are not a save file's records, in order and whole (IBM i refuses such a record as it is written)."""


class SaveFileData(BaseModel):
    """What the records of a save file hold: the save, not the save file object."""

    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT_VERSION
    kind: Literal["OBJ", "LIB"] = "OBJ"
    saved_library: str | None = None
    objects: list[SavedObject] = Field(default_factory=list)
    library_image: LibraryImage | None = None

    @classmethod
    def of(cls, save_file: SaveFile) -> SaveFileData:
        return cls(
            kind=save_file.kind,
            saved_library=save_file.saved_library,
            objects=[o.model_copy(deep=True) for o in save_file.objects],
            library_image=save_file.library_image.model_copy(deep=True) if save_file.library_image else None,
        )

    @property
    def empty(self) -> bool:
        return not self.objects and self.library_image is None

    def fill(self, save_file: SaveFile) -> None:
        """Put this data into `save_file` (which keeps its own name, library, text and creation time)."""
        save_file.kind = self.kind
        save_file.saved_library = self.saved_library
        save_file.objects = [o.model_copy(deep=True) for o in self.objects]
        save_file.library_image = self.library_image.model_copy(deep=True) if self.library_image else None


def encode(save_file: SaveFile | SaveFileData) -> bytes:
    """The save file's records; b"" for an empty save file."""
    data = save_file if isinstance(save_file, SaveFileData) else SaveFileData.of(save_file)
    if data.empty:
        return b""
    # Fixed compression level and pydantic's field-ordered JSON: the same data gives the same bytes, every time.
    payload = zlib.compress(data.model_dump_json().encode("utf-8"), 6)
    chunks = [payload[i : i + PAYLOAD_BYTES] for i in range(0, len(payload), PAYLOAD_BYTES)]
    return b"".join(_record(number, len(chunks), chunk) for number, chunk in enumerate(chunks))


def _record(number: int, count: int, chunk: bytes) -> bytes:
    area = chunk.ljust(PAYLOAD_BYTES, b"\0")
    head = _HEADER.pack(MAGIC, FORMAT_VERSION, number, count, len(chunk), 0)[:-4]
    return head + struct.pack(">I", zlib.crc32(head + area)) + area


def decode(raw: bytes) -> SaveFileData:
    """The data of a whole save file's records (raises DamagedSaveFile)."""
    writer = RecordWriter()
    writer.write(raw)
    return writer.result()


class RecordWriter:
    """Takes a save file's bytes in order, in pieces of any size, and checks each record as it completes.

    As IBM i does when records are written into a save file, a record that is not the next in sequence or whose
    check does not hold is refused at once (`write` raises DamagedSaveFile), not at the end.
    """

    def __init__(self) -> None:
        self._pending = b""
        self._records = 0
        self._count: int | None = None
        self._payload: list[bytes] = []
        self.received = 0

    def write(self, data: bytes) -> None:
        self._pending += data
        self.received += len(data)
        while len(self._pending) >= RECORD_BYTES:
            record, self._pending = self._pending[:RECORD_BYTES], self._pending[RECORD_BYTES:]
            self._take(record)
        if self._count is not None and self._records == self._count and self._pending:
            raise DamagedSaveFile(f"data past the last record ({len(self._pending)} bytes)")

    def _take(self, record: bytes) -> None:
        magic, version, number, count, length, crc = _HEADER.unpack(record[: _HEADER.size])
        if magic != MAGIC or version != FORMAT_VERSION:
            raise DamagedSaveFile(f"record {self._records} is not a save file record")
        if zlib.crc32(record[: _HEADER.size - 4] + record[_HEADER.size :]) != crc:
            raise DamagedSaveFile(f"record {self._records} fails its check")
        if number != self._records or (self._count is not None and count != self._count) or number >= count:
            raise DamagedSaveFile(f"record {number} out of sequence (expected {self._records})")
        if length > PAYLOAD_BYTES:
            raise DamagedSaveFile(f"record {number} claims {length} bytes of payload")
        self._count = count
        self._payload.append(record[_HEADER.size : _HEADER.size + length])
        self._records += 1

    @property
    def complete(self) -> bool:
        """Every record the first one announced has been written, and nothing else."""
        return self._count is not None and self._records == self._count and not self._pending

    def result(self) -> SaveFileData:
        if self.received == 0:
            return SaveFileData()
        if not self.complete:
            raise DamagedSaveFile(f"incomplete: {self._records} of {self._count or '?'} records")
        try:
            text = zlib.decompress(b"".join(self._payload))
            return SaveFileData.model_validate_json(text)
        except (zlib.error, ValidationError) as exc:
            raise DamagedSaveFile(f"the records do not hold a save: {exc}") from exc


def modified_at(save_file: SaveFile) -> datetime:
    """When the save file's data last changed, as far as the model knows (the latest save into it)."""
    moments = [o.saved_at for o in save_file.objects]
    if save_file.library_image is not None:
        moments.append(save_file.library_image.saved_at)
    return max(moments, default=save_file.created_at)
