"""The simulator's `system` answers CL as real IBM i does: syntax errors, positional parameters, partial saves, the
attached receiver's save diagnostic, the journal displays, and ASSOCIATE_JOURNAL_RECEIVER's *LIBL rule.

Each expectation names its source in sim/messages.py (per message) or sim/system.py (the `system` shape).
"""

from __future__ import annotations

import re
from datetime import timedelta

from tests.conftest import SimFleet

SYNTAX_END = "CPF0006: Errors occurred in command.\n"


def detached(shell) -> list[str]:
    rows = shell.sql(
        "SELECT JOURNAL_RECEIVER_NAME, STATUS FROM QSYS2.JOURNAL_RECEIVER_INFO"
        " WHERE JOURNAL_RECEIVER_LIBRARY = 'QMTEST' ORDER BY ATTACH_TIMESTAMP"
    )
    return [r["JOURNAL_RECEIVER_NAME"] for r in rows if r["STATUS"] != "ATTACHED"]


def on_host(shell) -> set[str]:
    rows = shell.sql(
        "SELECT JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO WHERE JOURNAL_RECEIVER_LIBRARY = 'QMTEST'"
    )
    return {r["JOURNAL_RECEIVER_NAME"] for r in rows}


# --- CL syntax errors: a CPD diagnostic, then CPF0006, on stderr, exit 255, stdout empty -------------------------


def test_an_unknown_keyword_ends_with_cpd0043_and_cpf0006(sim_fleet: SimFleet):
    status, out, err = sim_fleet.connect().cl("DLTJRNRCV JRNRCV(QMTEST/AMQA000000) LOGOUTPUT(*YES)")
    assert (status, out) == (255, "")
    assert err == "CPD0043: Keyword LOGOUTPUT not valid for this command.\n" + SYNTAX_END


def test_a_missing_required_parameter_ends_with_a_cpd_diagnostic_and_cpf0006(sim_fleet: SimFleet):
    status, out, err = sim_fleet.connect().cl("SAVOBJ OBJ(AMQA000000) DEV(*SAVF)")
    assert (status, out) == (255, "")
    assert err == "CPD0071: Parameter LIB required.\n" + SYNTAX_END


def test_a_bad_value_ends_with_cpd0084_and_cpf0006(sim_fleet: SimFleet):
    status, out, err = sim_fleet.connect().cl("DLTJRNRCV JRNRCV(QMTEST/AMQA000000) DLTOPT(*IGNINQSG)")
    assert (status, out) == (255, "")
    lines = err.splitlines(keepends=True)
    assert lines[0].startswith("CPD0084: ") and "DLTOPT" in lines[0] and lines[1:] == [SYNTAX_END]


def test_a_name_longer_than_ten_characters_is_cut_in_cpd0074_as_the_real_analyzer_does(sim_fleet: SimFleet):
    status, out, err = sim_fleet.connect().cl("DLTJRNRCV JRNRCV(QMTEST/AMQA0000001)")
    assert (status, out) == (255, "")
    assert err == "CPD0074: Value 'AMQA000000' for JRNRCV exceeds 10 characters.\n" + SYNTAX_END


def test_an_unknown_command_ends_with_cpd0030_and_cpf0006(sim_fleet: SimFleet):
    status, out, err = sim_fleet.connect().cl("REVOKE OBJ(X)")
    assert (status, out) == (255, "")
    assert err == "CPD0030: Command REVOKE in library *LIBL not found.\n" + SYNTAX_END


def test_a_syntax_error_changes_nothing(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    before = on_host(shell)
    assert shell.cl(f"DLTJRNRCV QMTEST/{detached(shell)[0]} *IGNINQMSG EXTRA")[0] == 255
    assert on_host(shell) == before


# --- positional parameters are valid CL --------------------------------------------------------------------------


def test_dltjrnrcv_takes_the_receiver_and_the_option_positionally(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    oldest = detached(shell)[0]
    status, _out, err = shell.cl(f"DLTJRNRCV QMTEST/{oldest} *IGNINQMSG")
    assert status == 0, err
    assert oldest not in on_host(shell)


def test_savobj_takes_obj_lib_dev_positionally_then_keywords(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    first, second = detached(shell)[:2]
    assert shell.cl("CRTSAVF QGPL/POSSAVE")[0] == 0
    status, out, err = shell.cl(f"SAVOBJ ({first} {second}) QMTEST *SAVF OBJTYPE(*JRNRCV) SAVF(QGPL/POSSAVE)")
    assert status == 0, err
    assert out == "CPC3722: 2 objects saved from library QMTEST.\n"


def test_a_positional_value_after_a_keyword_is_refused(sim_fleet: SimFleet):
    status, out, err = sim_fleet.connect().cl("SAVOBJ OBJ(AMQA000000) QMTEST *SAVF")
    assert (status, out) == (255, "") and err.endswith(SYNTAX_END)


def test_more_positional_values_than_the_command_defines_are_refused(sim_fleet: SimFleet):
    status, out, err = sim_fleet.connect().cl("CLRSAVF QGPL/X QGPL/Y")
    assert (status, out) == (255, "")
    lines = err.splitlines(keepends=True)
    assert lines[0].startswith("CPD") and lines[1:] == [SYNTAX_END]


# --- saves to a save file ----------------------------------------------------------------------------------------


def test_a_partial_save_to_a_save_file_ends_with_cpf3701_not_cpf3771(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    oldest = detached(shell)[0]
    assert shell.cl("CRTSAVF FILE(QGPL/PARTIAL)")[0] == 0
    status, out, err = shell.cl(
        f"SAVOBJ OBJ({oldest} AMQA099999) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/PARTIAL)"
    )
    assert (status, out) == (255, "")
    *diagnostics, last = err.splitlines()
    assert last == "CPF3701: 1 objects saved from QMTEST. 1 not saved."
    assert [d.split(":")[0] for d in diagnostics] == ["CPF9801"]


def test_saving_the_attached_receiver_completes_with_a_diagnostic_before_cpc3722(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    attached = next(
        r["JOURNAL_RECEIVER_NAME"]
        for r in shell.sql(
            "SELECT JOURNAL_RECEIVER_NAME, STATUS FROM QSYS2.JOURNAL_RECEIVER_INFO"
            " WHERE JOURNAL_RECEIVER_LIBRARY = 'QMTEST'"
        )
        if r["STATUS"] == "ATTACHED"
    )
    assert shell.cl("CRTSAVF FILE(QGPL/LIBSAVE)")[0] == 0
    status, out, err = shell.cl("SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF(QGPL/LIBSAVE)")
    assert (status, err) == (0, "")
    *diagnostics, completion = out.splitlines()
    assert re.fullmatch(r"CPC3722: \d+ objects saved from library QMTEST\.", completion)
    assert len(diagnostics) == 1 and attached in diagnostics[0] and diagnostics[0].startswith("CPF")


# --- the journal displays (read-only), printed to stdout ---------------------------------------------------------


def test_wrkjrna_prints_the_receiver_directory_with_status_and_save_date(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    names = sorted(on_host(shell))
    status, out, err = shell.cl("WRKJRNA JRN(QMTEST/AMQAJRN) OUTPUT(*PRINT) DETAIL(*RCVDIR)")
    assert (status, err) == (0, "")
    rows = re.findall(r"^  (AMQA\d{6})  QMTEST\s+\d{5}\s+\S+ \S+\s+(ATTACHED|ONLINE|SAVED|FREED|PARTIAL)", out, re.M)
    assert sorted(name for name, _ in rows) == names
    assert [s for _, s in rows].count("ATTACHED") == 1
    assert "Total size of receivers" in out


def test_wrkjrna_of_a_missing_journal_is_refused(sim_fleet: SimFleet):
    status, out, err = sim_fleet.connect().cl("WRKJRNA QMTEST/AMQBJRN *PRINT")
    assert (status, out) == (255, "") and err.startswith("CPF2105: ")


def test_dspjrnrcva_prints_the_receivers_attributes(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    oldest = detached(shell)[0]
    receiver = sim_fleet.host().partition.receivers[f"QMTEST/{oldest}"]
    status, out, err = shell.cl(f"DSPJRNRCVA QMTEST/{oldest} *PRINT")
    assert (status, err) == (0, "")
    fields = dict(re.findall(r"^\s+(\S[^.:]*?) ?\.[ .]*:   (.*)$", out, re.M))
    assert fields["Receiver"] == oldest and fields["Journal"] == "AMQAJRN"
    assert fields["First sequence number"] == str(receiver.first_sequence)
    assert fields["Last sequence number"] == str(receiver.last_sequence)
    assert fields["Next receiver"] == receiver.next


def test_dspjrn_prints_the_attached_receivers_entries_by_default(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    status, out, err = shell.cl("DSPJRN JRN(QMTEST/AMQAJRN) OUTPUT(*PRINT)")
    assert (status, err) == (0, "")
    assert len(re.findall(r"^  AMQA\d{6}\s+\d+\s+\d+", out, re.M)) == 1
    status, out, err = shell.cl("DSPJRN JRN(QMTEST/AMQAJRN) RCVRNG(*CURCHAIN) OUTPUT(*PRINT)")
    assert len(re.findall(r"^  AMQA\d{6}\s+\d+\s+\d+", out, re.M)) == len(on_host(shell))


# --- QSYS2.ASSOCIATE_JOURNAL_RECEIVER: only *ALL with *LIBL is refused ---------------------------------------------


def _associate(shell, library: str, name: str) -> tuple[int, str]:
    status, out, _ = shell.db2(
        "SELECT * FROM TABLE(QSYS2.ASSOCIATE_JOURNAL_RECEIVER(JOURNAL_LIBRARY => 'QMTEST',"
        f" JOURNAL_NAME => 'AMQAJRN', RECEIVER_LIBRARY => '{library}', RECEIVER_NAME => '{name}')) X"
    )
    return status, out


def test_associate_accepts_a_generic_receiver_name_with_libl(sim_fleet: SimFleet):
    status, out = _associate(sim_fleet.connect(), "*LIBL", "AMQA*")
    assert status == 0 and "CLI ERROR" not in out


def test_associate_refuses_all_with_libl(sim_fleet: SimFleet):
    status, out = _associate(sim_fleet.connect(), "*LIBL", "*ALL")
    assert status == 4 and "CLI ERROR" in out
