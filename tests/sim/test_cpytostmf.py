"""CPYTOSTMF of a save file on the simulated partition, as IBM i answers it (sim/streamfiles.cpytostmf): the stream
file holds the save file's bytes; a refusal is a diagnostic naming the object, then CPFA097 naming FROMMBR."""

from __future__ import annotations

import hashlib

from mqjournal.sim import savfdata
from tests.conftest import SimFleet

SOURCE = "/QSYS.LIB/QGPL.LIB/CPYSAV.FILE"


def made(sim_fleet: SimFleet) -> None:
    shell = sim_fleet.connect()
    assert shell.cl("CRTSAVF FILE(QGPL/CPYSAV) TEXT('cpytostmf test')")[0] == 0


def test_cpytostmf_copies_a_save_files_bytes_into_a_stream_file(sim_fleet: SimFleet) -> None:
    made(sim_fleet)
    shell = sim_fleet.connect()
    assert shell.run("mkdir -p /tmp/x")[0] == 0

    status, _, err = shell.cl(f"CPYTOSTMF FROMMBR('{SOURCE}') TOSTMF('/tmp/x/c.savf') STMFOPT(*REPLACE)")

    assert status == 0, err
    with sim_fleet.host().lock:
        partition = sim_fleet.host().partition
        copied = b"".join(savfdata.SaveFileImage.of(partition.stream_files["/tmp/x/c.savf"].copy_of).chunks())
        assert (
            hashlib.sha256(copied).digest()
            == hashlib.sha256(savfdata.encode(partition.save_files["QGPL/CPYSAV"])).digest()
        )


def test_cpytostmf_into_a_missing_directory_names_the_stream_file_then_ends_in_cpfa097(sim_fleet: SimFleet) -> None:
    made(sim_fleet)

    status, _, err = sim_fleet.connect().cl(f"CPYTOSTMF FROMMBR('{SOURCE}') TOSTMF('/nodir/c.savf')")

    assert status != 0
    assert "CPFA0A9" in err and "/nodir/c.savf" in err
    assert f"CPFA097: Object not copied.  Object is {SOURCE}." in err
    with sim_fleet.host().lock:
        assert sim_fleet.host().partition.stream_files == {}


def test_cpytostmf_of_a_missing_save_file_copies_nothing(sim_fleet: SimFleet) -> None:
    status, _, err = sim_fleet.connect().cl(
        "CPYTOSTMF FROMMBR('/QSYS.LIB/QGPL.LIB/NOSUCH.FILE') TOSTMF('/tmp/n.savf') STMFOPT(*REPLACE)"
    )

    assert status != 0 and "CPFA0A9" in err and "CPFA097" in err


def test_cpytostmf_without_stmfopt_does_not_write_over_a_stream_file(sim_fleet: SimFleet) -> None:
    made(sim_fleet)
    shell = sim_fleet.connect()
    assert shell.cl(f"CPYTOSTMF FROMMBR('{SOURCE}') TOSTMF('/tmp/c.savf')")[0] == 0

    status, _, err = shell.cl(f"CPYTOSTMF FROMMBR('{SOURCE}') TOSTMF('/tmp/c.savf')")

    assert status != 0 and "CPFA0A0" in err and "CPFA097" in err
