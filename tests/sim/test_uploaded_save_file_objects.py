"""What the simulator's QSYS2.SAVE_FILE_OBJECTS lists of a save file whose data came by an upload (issue #28, the
restore drill): the objects the uploaded bytes hold, under the save file's own name; bytes that are not a save
file's records are refused as they are written, and the save file then lists nothing."""

from __future__ import annotations

import pytest

from mqjournal.ibmi import commands
from tests.conftest import Shell, SimFleet
from tests.sim.savefiles import TARGET, detached, download, ok, upload


def listed(shell: Shell, name: str) -> list[tuple[str, str, str]]:
    rows = shell.sql(commands.save_file_objects("QGPL", name))
    return [(r["LIBRARY_NAME"], r["OBJECT_NAME"], r["OBJECT_TYPE"]) for r in rows]


def test_an_uploaded_save_file_lists_the_objects_its_bytes_hold(sim_fleet: SimFleet, shell: Shell, sftp):
    ok(shell.cl("CRTSAVF FILE(QGPL/DRL0000001)"))
    assert listed(shell, "DRL0000001") == []  # created empty: nothing to list

    upload(sftp, download(sftp), "/QSYS.LIB/QGPL.LIB/DRL0000001.FILE")

    expected = [("QMTEST", name, "*JRNRCV") for name in detached(sim_fleet)]
    assert listed(shell, "DRL0000001") == listed(shell, "RCVSAV") == expected


def test_the_list_follows_the_bytes_not_the_save_files_name(sim_fleet: SimFleet, shell: Shell, sftp):
    first = detached(sim_fleet)[0]
    ok(shell.cl("CRTSAVF FILE(QGPL/ONE)"))
    ok(shell.cl(f"SAVOBJ OBJ({first}) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/ONE)"))
    ok(shell.cl("CRTSAVF FILE(QGPL/RESTORE)"))

    upload(sftp, download(sftp, "/QSYS.LIB/QGPL.LIB/ONE.FILE"), TARGET)

    assert listed(shell, "RESTORE") == [("QMTEST", first, "*JRNRCV")]


def test_whole_records_that_are_not_a_save_are_refused_and_the_save_file_lists_nothing(shell: Shell, sftp):
    ok(shell.cl("CRTSAVF FILE(QGPL/RESTORE)"))
    with pytest.raises(OSError):
        upload(sftp, b"\0" * 528 * 4, TARGET)  # the right record length, no save in it
    assert listed(shell, "RESTORE") == []
    status, _, err = shell.cl("RSTOBJ OBJ(*ALL) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/RESTORE)")
    assert status != 0 and "CPF3780" in err


def test_a_save_file_whose_upload_was_cut_short_lists_nothing(sim_fleet: SimFleet, shell: Shell, sftp):
    data = download(sftp)
    ok(shell.cl("CRTSAVF FILE(QGPL/RESTORE)"))
    with pytest.raises(OSError):
        upload(sftp, data[: len(data) - 528] + b"\0" * 528, TARGET)  # the last record is not the save's
    assert listed(shell, "RESTORE") == []
