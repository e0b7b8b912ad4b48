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
- the first records' payloads, concatenated, are one zlib stream of the canonical JSON of `SaveFileData` (the
  description records): the save's kind, the saved library, the saved objects, the library image, the save's
  DTACPR value and how many bytes of saved data follow. Not the save file's own name, library, text or creation
  time: those belong to the object the data is written into (as on IBM i, where the data of one save file can be
  placed into another, existing and empty, save file);
- then the data records, ceil(`data_bytes` / 528) of them, as large as what was saved: the saved storage less the
  save's data compression, times the partition's size factor (`saved_data_bytes`). Their payloads are a keyed
  stream (ChaCha20 keyed by the SHA-256 of the description, per block of 64 records), so they are the same for the
  same save, differ between saves, and are neither all zero nor compressible.

Deterministic: the same data always gives the same bytes, so a download, an upload elsewhere and a download from
there give back the very same bytes (the client's checksum holds end to end). Never held whole: `SaveFileImage`
makes the bytes of any offset and length from the description alone, and `RecordWriter` checks an upload record by
record, a data record against the stream it must be, keeping only the description.
"""

from __future__ import annotations

import hashlib
import struct
import threading
import zlib
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Literal

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mqjournal.sim.model import DirectoryImage, LibraryImage, SavedObject, SaveFile
from mqjournal.space import EXPECTED_RATIO

RECORD_BYTES = 528  # IBM i's save file record length (rzaiusfoperations: "it must be 528 bytes")
MAGIC = b"MQJSIMSF"
FORMAT_VERSION = 1
_HEADER = struct.Struct(">8sHIIHI")  # magic, version, record number, record count, payload length, CRC-32
_HEAD = struct.Struct(">8sHIIH")  # the header without its CRC
PAYLOAD_BYTES = RECORD_BYTES - _HEADER.size
BLOCK_RECORDS = 64  # data records made from one call of the keyed stream (32 KB: one SFTP read's worth)

# DTACPR values SAVOBJ and SAVLIB take (IBM i CL reference); *DEV compresses only on tape, so not in a save file.
DATA_COMPRESSION = frozenset({"*DEV", "*NO", "*YES", "*LOW", "*MEDIUM", "*HIGH"})


class DamagedSaveFile(ValueError):
    """Bytes that are not a save file's records, in order and whole (IBM i refuses such a record as it is written)."""


class SaveFileData(BaseModel):
    """What the records of a save file hold: the save, not the save file object."""

    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT_VERSION
    kind: Literal["OBJ", "LIB", "DIR"] = "OBJ"
    saved_library: str | None = None
    objects: list[SavedObject] = Field(default_factory=list)
    library_image: LibraryImage | None = None
    directory_image: DirectoryImage | None = None
    compression: str | None = None
    data_bytes: int = Field(0, ge=0)

    @classmethod
    def of(cls, save_file: SaveFile) -> SaveFileData:
        return cls(
            kind=save_file.kind,
            saved_library=save_file.saved_library,
            objects=[o.model_copy(deep=True) for o in save_file.objects],
            library_image=save_file.library_image.model_copy(deep=True) if save_file.library_image else None,
            directory_image=save_file.directory_image.model_copy(deep=True) if save_file.directory_image else None,
            compression=save_file.compression,
            data_bytes=save_file.data_bytes,
        )

    @property
    def empty(self) -> bool:
        return not self.objects and self.library_image is None and self.directory_image is None

    def fill(self, save_file: SaveFile) -> None:
        """Put this data into `save_file` (which keeps its own name, library, text and creation time)."""
        save_file.kind = self.kind
        save_file.saved_library = self.saved_library
        save_file.objects = [o.model_copy(deep=True) for o in self.objects]
        save_file.library_image = self.library_image.model_copy(deep=True) if self.library_image else None
        save_file.directory_image = self.directory_image.model_copy(deep=True) if self.directory_image else None
        save_file.compression = self.compression
        save_file.data_bytes = self.data_bytes

    def description(self) -> bytes:
        """The zlib'd canonical JSON the description records carry. A save written before the simulator had data
        records (no compression recorded, no data) is described exactly as it was then, so its bytes stay the same."""
        later = {"compression", "data_bytes"} if self.compression is None and self.data_bytes == 0 else set()
        # Fixed compression level and pydantic's field-ordered JSON: the same data gives the same bytes, every time.
        return zlib.compress(self.model_dump_json(exclude=later).encode("utf-8"), 6)


def saved_data_bytes(storage_bytes: int, compression: str, factor: float, ratios: Mapping[str, float]) -> int:
    """The bytes of saved data a save of `storage_bytes` writes with DTACPR(`compression`): compressed at the
    partition's ratio for the value (space.EXPECTED_RATIO unless the fleet file says otherwise; *DEV is *NO in a
    save file), times the partition's size factor (small for tests, 1.0 for benches)."""
    value = "*NO" if compression == "*DEV" else compression
    ratio = ratios.get(value, EXPECTED_RATIO[value])
    return round(storage_bytes * ratio * factor)


_DIGESTS: dict[tuple[bytes, int], str] = {}  # (description key, record count) -> SHA-256 of the records
_DIGESTS_LOCK = threading.Lock()
_DIGESTS_KEPT = 65536  # a fleet bench's save files many times over, in a few MB


class SaveFileImage:
    """The bytes of one save, any range of them made on demand: nothing but the description records is kept."""

    def __init__(self, data: SaveFileData) -> None:
        self.data = data
        self._blocks: dict[int, bytes] = {}  # the last data blocks made, by number
        if data.empty:
            self.description_records, self.count, self._head, self._key = 0, 0, b"", b""
            self.size = 0
            return
        payload = data.description()
        chunks = [payload[i : i + PAYLOAD_BYTES] for i in range(0, len(payload), PAYLOAD_BYTES)]
        self.description_records = len(chunks)
        self.count = len(chunks) + -(-data.data_bytes // RECORD_BYTES)
        self._head = b"".join(_record(number, self.count, chunk) for number, chunk in enumerate(chunks))
        self._key = hashlib.sha256(payload).digest()
        self.size = self.count * RECORD_BYTES

    @classmethod
    def of(cls, save_file: SaveFile) -> SaveFileImage:
        return cls(SaveFileData.of(save_file))

    def read(self, offset: int, length: int) -> bytes:
        """The bytes from `offset`, at most `length` of them (fewer at the end, none past it)."""
        end = min(offset + max(length, 0), self.size)
        if offset >= end:
            return b""
        first, last = offset // RECORD_BYTES, (end - 1) // RECORD_BYTES
        records = self.records(first, last + 1)
        return records[offset - first * RECORD_BYTES : end - first * RECORD_BYTES]

    def records(self, start: int, stop: int) -> bytes:
        """Records `start` to `stop` - 1, end to end."""
        parts: list[bytes] = []
        head_end = min(stop, self.description_records)
        if start < head_end:
            parts.append(self._head[start * RECORD_BYTES : head_end * RECORD_BYTES])
        number = max(start, self.description_records)
        while number < stop:
            block, at = divmod(number - self.description_records, BLOCK_RECORDS)
            upto = min(stop - number, BLOCK_RECORDS - at)
            parts.append(self._data_block(block)[at * RECORD_BYTES : (at + upto) * RECORD_BYTES])
            number += upto
        return b"".join(parts)

    def sha256(self) -> str:
        """The SHA-256 of the whole save file: made once per save, then remembered (its bytes follow from the
        description alone, so a digest, read again after another download or by clean-up, is the same)."""
        made = (self._key, self.count)
        with _DIGESTS_LOCK:
            known = _DIGESTS.get(made)
        if known is not None:
            return known
        digest = hashlib.sha256()
        for chunk in self.chunks():
            digest.update(chunk)
        with _DIGESTS_LOCK:
            if len(_DIGESTS) >= _DIGESTS_KEPT:
                del _DIGESTS[next(iter(_DIGESTS))]
            _DIGESTS[made] = digest.hexdigest()
        return digest.hexdigest()

    def chunks(self, size: int = 1 << 20) -> Iterator[bytes]:
        """The whole save file in pieces of about `size` bytes (for a checksum of a large one)."""
        step = max(1, size // RECORD_BYTES)
        for start in range(0, self.count, step):
            yield self.records(start, min(start + step, self.count))

    def _data_block(self, block: int) -> bytes:
        """The data records of one block, made once for the reads that fall into it (SFTP reads 32 KB at a time,
        mostly in order, a few outstanding at once: the last two blocks are kept)."""
        cached = self._blocks.get(block)
        if cached is not None:
            return cached
        first = self.description_records + block * BLOCK_RECORDS
        count = min(BLOCK_RECORDS, self.count - first)
        # A keyed stream: ChaCha20 under the description's digest, the block number as its nonce.
        nonce = bytes(4) + block.to_bytes(12, "little")
        stream = (
            Cipher(algorithms.ChaCha20(self._key, nonce), mode=None).encryptor().update(bytes(count * PAYLOAD_BYTES))
        )
        parts: list[bytes] = []
        for at in range(count):
            area = stream[at * PAYLOAD_BYTES : (at + 1) * PAYLOAD_BYTES]
            head = _HEAD.pack(MAGIC, FORMAT_VERSION, first + at, self.count, PAYLOAD_BYTES)
            parts += (head, struct.pack(">I", zlib.crc32(area, zlib.crc32(head))), area)
        made = b"".join(parts)
        if len(self._blocks) >= 2:
            del self._blocks[next(iter(self._blocks))]
        self._blocks[block] = made
        return made


def encode(save_file: SaveFile | SaveFileData) -> bytes:
    """The save file's records, all of them in memory (tests and small saves); b"" for an empty save file."""
    data = save_file if isinstance(save_file, SaveFileData) else SaveFileData.of(save_file)
    image = SaveFileImage(data)
    return image.records(0, image.count)


def _record(number: int, count: int, chunk: bytes) -> bytes:
    area = chunk.ljust(PAYLOAD_BYTES, b"\0")
    head = _HEAD.pack(MAGIC, FORMAT_VERSION, number, count, len(chunk))
    return head + struct.pack(">I", zlib.crc32(head + area)) + area


def decode(raw: bytes) -> SaveFileData:
    """The data of a whole save file's records (raises DamagedSaveFile)."""
    writer = RecordWriter()
    writer.write(raw)
    return writer.result()


class RecordWriter:
    """Takes a save file's bytes in order, in pieces of any size, and checks each record as it completes.

    As IBM i does when records are written into a save file, a record that is not the next in sequence or whose
    check does not hold is refused at once (`write` raises DamagedSaveFile), not at the end. A data record must be
    the very record the description makes (`SaveFileImage`): only the description is kept, whatever the size.
    """

    def __init__(self) -> None:
        self._pending = bytearray()
        self._records = 0
        self._count: int | None = None
        self._description = zlib.decompressobj()
        self._compressed: list[bytes] = []
        self._text: list[bytes] = []
        self._image: SaveFileImage | None = None
        self.received = 0

    def write(self, data: bytes) -> None:
        self._pending += data
        self.received += len(data)
        whole = len(self._pending) - len(self._pending) % RECORD_BYTES
        view = memoryview(self._pending)
        try:
            at = 0
            while at < whole:
                at += self._take_data(view[at:whole]) or self._take(bytes(view[at : at + RECORD_BYTES]))
        finally:
            view.release()
        del self._pending[:whole]
        if self._count is not None and self._records == self._count and self._pending:
            raise DamagedSaveFile(f"data past the last record ({len(self._pending)} bytes)")

    def _take_data(self, records: memoryview) -> int:
        """The data records at the start of `records` that are the very bytes the description makes: the bytes
        taken. Compared a block at a time; 0 when the first is not, which `_take` then refuses with what is wrong."""
        if self._image is None or self._count is None:
            return 0
        available = min(len(records) // RECORD_BYTES, self._count - self._records)
        taken = 0
        while taken < available:
            n = min(BLOCK_RECORDS, available - taken)
            if n > 1 and not self._same(records, taken, n):
                n = 1  # somewhere in this block: one by one up to it
            if not self._same(records, taken, n):
                break
            taken += n
        self._records += taken
        return taken * RECORD_BYTES

    def _same(self, records: memoryview, at: int, n: int) -> bool:
        assert self._image is not None
        number = self._records + at
        expected = self._image.records(number, number + n)
        return bytes(records[at * RECORD_BYTES : (at + n) * RECORD_BYTES]) == expected

    def _take(self, record: bytes) -> int:
        magic, version, number, count, length, crc = _HEADER.unpack(record[: _HEADER.size])
        if magic != MAGIC or version != FORMAT_VERSION:
            raise DamagedSaveFile(f"record {self._records} is not a save file record")
        if zlib.crc32(record[_HEADER.size :], zlib.crc32(record[: _HEADER.size - 4])) != crc:
            raise DamagedSaveFile(f"record {self._records} fails its check")
        if number != self._records or (self._count is not None and count != self._count) or number >= count:
            raise DamagedSaveFile(f"record {number} out of sequence (expected {self._records})")
        if length > PAYLOAD_BYTES:
            raise DamagedSaveFile(f"record {number} claims {length} bytes of payload")
        self._count = count
        if self._image is None:
            self._describe(record[_HEADER.size : _HEADER.size + length])
        elif self._image.records(number, number + 1) != record:
            raise DamagedSaveFile(f"record {number} is not the save's data: it fails its check")
        self._records += 1
        return RECORD_BYTES

    def _describe(self, payload: bytes) -> None:
        """A description record: once the description is whole, the rest must be the data it describes."""
        try:
            self._text.append(self._description.decompress(payload))
        except zlib.error as exc:
            raise DamagedSaveFile(f"record {self._records} does not describe a save: {exc}") from exc
        self._compressed.append(payload)
        if not self._description.eof:
            return
        if self._description.unused_data:
            raise DamagedSaveFile(f"record {self._records} holds data past the save's description")
        try:
            data = SaveFileData.model_validate_json(b"".join(self._text))
        except ValidationError as exc:
            raise DamagedSaveFile(f"the records do not hold a save: {exc}") from exc
        image = SaveFileImage(data)
        if image.description_records != self._records + 1 or image.count != self._count:
            raise DamagedSaveFile(f"the save's description does not match its {self._count} records")
        self._image = image

    @property
    def complete(self) -> bool:
        """Every record the first one announced has been written, and nothing else."""
        return self._count is not None and self._records == self._count and not self._pending

    def result(self) -> SaveFileData:
        if self.received == 0:
            return SaveFileData()
        if not self.complete:
            raise DamagedSaveFile(f"incomplete: {self._records} of {self._count or '?'} records")
        if self._image is None:
            raise DamagedSaveFile("the records do not hold a save: its description never ends")
        return self._image.data


def modified_at(save_file: SaveFile) -> datetime:
    """When the save file's data last changed, as far as the model knows (the latest save into it)."""
    moments = [o.saved_at for o in save_file.objects]
    if save_file.library_image is not None:
        moments.append(save_file.library_image.saved_at)
    if save_file.directory_image is not None:
        moments.append(save_file.directory_image.saved_at)
    return max(moments, default=save_file.created_at)
