"""Save files at real sizes on the simulator: as large as the receivers they save, less SAVOBJ's data compression
(DTACPR), times the fleet file's `save_file_size_factor`; their bytes made range by range, the same for the same
save, neither all zero nor compressible; and an upload of them back into a save file still restores (issue #28)."""

from __future__ import annotations

import hashlib
import io
import random
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import paramiko
import pytest

from mqjournal.fleet import HostConfig, PartitionSystemConfig, QueueManagerConfig
from mqjournal.sim import savfdata
from mqjournal.sim.model import JournalReceiver, SavedObject, Status
from mqjournal.space import EXPECTED_RATIO
from tests.conftest import Shell, SimFleet, fleet_config, serve
from tests.sim.savefiles import ok

SAVF = "/QSYS.LIB/QGPL.LIB/RCVSAV.FILE"


def real_size_fleet(tmp_path: Path, **system: object) -> Iterator[SimFleet]:
    """TEST after three hours of traffic (a few MB of receivers) on a partition whose save files are real size."""
    host = HostConfig(
        name="ibmi1",
        port=0,
        utc_offset="+01:00",
        system=PartitionSystemConfig.model_validate(system),
        queue_managers=[QueueManagerConfig(name="TEST", threshold_kb=500, entries_per_minute=40)],
    )
    with serve(fleet_config(tmp_path, [host]), advance=timedelta(hours=3)) as fleet:
        yield fleet


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[SimFleet]:
    yield from real_size_fleet(tmp_path)


def detached(fleet: SimFleet) -> list[JournalReceiver]:
    with fleet.host().lock:
        receivers = fleet.host().partition.receivers_in("QMTEST")
        return sorted((r.model_copy() for r in receivers if r.status is not Status.ATTACHED), key=lambda r: r.name)


def save(shell: Shell, fleet: SimFleet, dtacpr: str | None, name: str = "RCVSAV") -> list[JournalReceiver]:
    receivers = detached(fleet)
    ok(shell.cl(f"CRTSAVF FILE(QGPL/{name})"))
    option = f" DTACPR({dtacpr})" if dtacpr else ""
    names = " ".join(r.name for r in receivers)
    ok(shell.cl(f"SAVOBJ OBJ({names}) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/{name}){option}"))
    return receivers


def sftp_of(shell: Shell) -> paramiko.SFTPClient:
    client = shell.client.open_sftp()
    client.get_channel().settimeout(30)  # type: ignore[union-attr]
    return client


def download(sftp: paramiko.SFTPClient, path: str = SAVF) -> bytes:
    buffer = io.BytesIO()
    sftp.getfo(path, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("dtacpr", [None, "*NO", "*LOW", "*MEDIUM", "*HIGH"])
def test_a_save_file_is_as_large_as_the_receivers_it_saves_less_their_compression(fleet: SimFleet, dtacpr):
    shell = fleet.connect()
    receivers = save(shell, fleet, dtacpr)
    storage = sum(r.size_bytes for r in receivers)
    assert storage > 1_000_000  # megabytes of receivers, not a toy

    size = sftp_of(shell).stat(SAVF).st_size

    expected = storage * EXPECTED_RATIO[dtacpr or "*NO"]  # DTACPR(*DEV), the default, does not compress a save file
    assert size is not None and size % savfdata.RECORD_BYTES == 0
    # The saved data in whole records, after a few records that describe the save.
    assert expected <= size <= expected + 8 * savfdata.RECORD_BYTES


def test_dtacpr_yes_to_a_save_file_compresses_as_low_does(fleet: SimFleet):
    shell = fleet.connect()
    save(shell, fleet, "*YES", "YESSAV")
    save(shell, fleet, "*LOW", "LOWSAV")
    sftp = sftp_of(shell)
    assert sftp.stat("/QSYS.LIB/QGPL.LIB/YESSAV.FILE").st_size == sftp.stat("/QSYS.LIB/QGPL.LIB/LOWSAV.FILE").st_size


def test_a_dtacpr_value_ibm_i_does_not_know_is_refused_and_saves_nothing(fleet: SimFleet):
    shell = fleet.connect()
    ok(shell.cl("CRTSAVF FILE(QGPL/RCVSAV)"))
    names = " ".join(r.name for r in detached(fleet))
    status, _, err = shell.cl(
        f"SAVOBJ OBJ({names}) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/RCVSAV) DTACPR(*MAX)"
    )
    assert status != 0 and "CPD0084" in err
    assert sftp_of(shell).stat(SAVF).st_size == 0
    assert all(r.saved_at is None for r in detached(fleet))


def test_the_fleet_files_size_factor_and_ratio_set_the_size(tmp_path: Path):
    for fleet in real_size_fleet(tmp_path, save_file_size_factor=0.01, save_compression_ratios={"*LOW": 0.8}):
        shell = fleet.connect()
        storage = sum(r.size_bytes for r in save(shell, fleet, "*LOW"))
        size = sftp_of(shell).stat(SAVF).st_size
        assert storage * 0.8 * 0.01 <= size <= storage * 0.8 * 0.01 + 8 * savfdata.RECORD_BYTES


def test_a_library_save_is_as_large_as_its_receivers_too(fleet: SimFleet):
    shell = fleet.connect()
    with fleet.host().lock:
        storage = sum(r.size_bytes for r in fleet.host().partition.receivers_in("QMTEST"))
    ok(shell.cl("ENDMQM MQMNAME(TEST) OPTION(*CNTRLD) ENDCCTJOB(*YES)"))
    ok(shell.cl("CRTSAVF FILE(QGPL/LIBSAV)"))
    ok(shell.cl("SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF(QGPL/LIBSAV) DTACPR(*MEDIUM)"))
    size = sftp_of(shell).stat("/QSYS.LIB/QGPL.LIB/LIBSAV.FILE").st_size
    assert size is not None and size >= storage * EXPECTED_RATIO["*MEDIUM"]


# --- the bytes ----------------------------------------------------------------------------------------------------


def test_the_bytes_are_the_same_for_the_same_save_and_neither_zero_nor_compressible(fleet: SimFleet):
    shell = fleet.connect()
    save(shell, fleet, "*HIGH")
    sftp = sftp_of(shell)
    data = download(sftp)
    assert download(sftp) == data
    tail = data[-(1 << 20) :]
    assert tail.count(0) < len(tail) // 20  # random bytes, and the zeros of the records' headers
    # The saved data is already compressed (as DTACPR's output is): zlib gets nothing more out of it.
    assert len(zlib.compress(tail, 9)) > 0.95 * len(tail)


def test_two_saves_of_the_same_receivers_are_different_bytes(fleet: SimFleet):
    shell = fleet.connect()
    save(shell, fleet, "*LOW", "FIRST")
    save(shell, fleet, "*LOW", "SECOND")
    sftp = sftp_of(shell)
    first, second = download(sftp, "/QSYS.LIB/QGPL.LIB/FIRST.FILE"), download(sftp, "/QSYS.LIB/QGPL.LIB/SECOND.FILE")
    assert len(first) == len(second) and first != second


def test_a_read_of_any_range_is_that_range_of_the_whole(fleet: SimFleet):
    shell = fleet.connect()
    save(shell, fleet, "*LOW")
    sftp = sftp_of(shell)
    whole = download(sftp)
    picks = random.Random(28)
    with sftp.open(SAVF, "rb") as handle:
        for _ in range(40):
            offset = picks.randrange(len(whole) + 100)
            length = picks.randrange(1, 70_000)
            handle.seek(offset)
            assert handle.read(length) == whole[offset : offset + length]


def test_a_save_of_gigabytes_serves_any_range_without_making_the_rest():
    moment = datetime(2026, 11, 2, tzinfo=UTC)
    receiver = JournalReceiver(name="AMQA000001", library="QMTEST", threshold_kb=1, created_at=moment)
    data = savfdata.SaveFileData(
        saved_library="QMTEST",
        objects=[SavedObject(receiver=receiver, saved_at=moment, saved_while_attached=False)],
        compression="*NO",
        data_bytes=64 * 2**30,
    )
    image = savfdata.SaveFileImage(data)
    assert image.size >= 64 * 2**30
    last = image.read(image.size - 1000, 4096)  # only the last block is made: this returns at once
    assert len(last) == 1000
    assert image.read(image.size - 1000, 1000) == last
    assert image.read(image.size, 10) == b""


def test_a_save_files_digest_is_of_its_bytes_and_made_once_per_save(monkeypatch):
    moment = datetime(2026, 11, 2, tzinfo=UTC)
    receiver = JournalReceiver(name="AMQA000001", library="QMTEST", threshold_kb=1, created_at=moment)
    saved = [SavedObject(receiver=receiver, saved_at=moment, saved_while_attached=False)]
    data = savfdata.SaveFileData(saved_library="QMTEST", objects=saved, compression="*NO", data_bytes=300_000)
    first = savfdata.SaveFileImage(data)
    assert first.sha256() == hashlib.sha256(savfdata.encode(data)).hexdigest()
    # The same save read again (another open, clean-up's digest) makes none of its bytes: they cannot differ.
    monkeypatch.setattr(savfdata.SaveFileImage, "chunks", lambda self, size=0: pytest.fail("bytes made again"))
    assert savfdata.SaveFileImage(data.model_copy()).sha256() == first.sha256()
    monkeypatch.undo()
    # Another save (one byte more of data) is other bytes, and another digest.
    other = savfdata.SaveFileData(saved_library="QMTEST", objects=saved, compression="*NO", data_bytes=300_001)
    assert savfdata.SaveFileImage(other).sha256() == hashlib.sha256(savfdata.encode(other)).hexdigest()
    assert savfdata.SaveFileImage(other).sha256() != first.sha256()


# --- uploads ------------------------------------------------------------------------------------------------------


def test_a_real_size_copy_uploads_back_and_restores(fleet: SimFleet):
    shell = fleet.connect()
    receivers = save(shell, fleet, "*LOW")
    sftp = sftp_of(shell)
    data = download(sftp)
    oldest = receivers[0].name
    ok(shell.cl(f"DLTJRNRCV JRNRCV(QMTEST/{oldest}) DLTOPT(*IGNINQMSG)"))
    ok(shell.cl("DLTF FILE(QGPL/RCVSAV)"))
    ok(shell.cl("CRTSAVF FILE(QGPL/RESTORE)"))

    sftp.putfo(io.BytesIO(data), "/QSYS.LIB/QGPL.LIB/RESTORE.FILE")

    assert download(sftp, "/QSYS.LIB/QGPL.LIB/RESTORE.FILE") == data
    rows = shell.sql(
        "SELECT OBJECT_NAME FROM TABLE(QSYS2.SAVE_FILE_OBJECTS(SAVE_FILE => 'RESTORE', SAVE_FILE_LIBRARY => 'QGPL')) X"
    )
    assert {r["OBJECT_NAME"] for r in rows} == {r.name for r in receivers}
    ok(shell.cl(f"RSTOBJ OBJ({oldest}) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/RESTORE)"))


def test_a_data_record_made_up_with_a_valid_check_is_refused(fleet: SimFleet):
    """A record in sequence whose check holds but whose data is not the save's: IBM i validates what is written,
    and the simulator, which makes a save's bytes from its description, takes only the very bytes it would make."""
    shell = fleet.connect()
    save(shell, fleet, "*LOW")
    data = bytearray(download(sftp_of(shell)))
    last = len(data) - savfdata.RECORD_BYTES
    head = savfdata.RECORD_BYTES - savfdata.PAYLOAD_BYTES
    data[last + head :] = bytes(savfdata.PAYLOAD_BYTES)
    crc = zlib.crc32(bytes(data[last + head :]), zlib.crc32(bytes(data[last : last + head - 4])))
    data[last + head - 4 : last + head] = crc.to_bytes(4, "big")
    writer = savfdata.RecordWriter()
    with pytest.raises(savfdata.DamagedSaveFile, match="not the save's data"):
        writer.write(bytes(data))


def test_a_save_file_written_before_data_records_keeps_its_bytes():
    """A save file of an older simulator (its description only) reads and writes back byte for byte, so its stored
    copies still match the host's."""
    moment = datetime(2026, 11, 2, tzinfo=UTC)
    receiver = JournalReceiver(name="AMQA000001", library="QMTEST", threshold_kb=1, created_at=moment)
    old = savfdata.SaveFileData(
        saved_library="QMTEST", objects=[SavedObject(receiver=receiver, saved_at=moment, saved_while_attached=False)]
    )
    raw = savfdata.encode(old)
    length = int.from_bytes(raw[18:20], "big")  # the header's payload length (savfdata's record header)
    assert b"data_bytes" not in zlib.decompress(raw[24 : 24 + length])  # described as it was then
    assert savfdata.decode(raw) == old
    assert savfdata.encode(savfdata.decode(raw)) == raw
    assert len(raw) == savfdata.RECORD_BYTES
