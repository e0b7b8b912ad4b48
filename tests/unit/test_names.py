"""IBM i object names, MQ queue manager names, and the naming rules of MQ journal receivers.

Every name that reaches a CL command or an SQL statement passes through these validators, so the invalid cases
below include CL injection attempts. The receiver rules are the three numbered rules of the seed
"Queue manager journals on IBM i": AMQArnnnnn goes to AMQAr(nnnnn+1) and wraps (rule 1), a taken successor
stops automatic switching with CPI70E3 (rule 2), and a full sequence must be cleared by hand (rule 3).
"""

from __future__ import annotations

from datetime import date

import pytest

from mqjournal.errors import InvalidName, NextReceiverNameTaken, NoReceiverNameFree
from mqjournal.names import (
    TEXT_LENGTH,
    ReceiverName,
    is_receiver_name,
    journal_instance,
    journal_name,
    library_save_text,
    next_free_receiver_name,
    next_receiver_name,
    object_name,
    qmgr_library_for,
    qmgr_name,
    receiver_prefix,
    receiver_save_text,
    save_file_names,
    save_library_for,
)

# --------------------------------------------------------------------------------------------------------------
# IBM i object names: 1-10 characters, A-Z $ # @ first, then also 0-9 _ .
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("Q", id="one-character"),
        pytest.param("QMTESTLIB1", id="ten-characters"),
        pytest.param("$MQSAVF", id="dollar-first"),
        pytest.param("#MQLIB", id="hash-first"),
        pytest.param("@MQJRN", id="at-first"),
        pytest.param("MQ_SAVF", id="underscore-inside"),
        pytest.param("MQ.SAVF", id="dot-inside"),
        pytest.param("AMQA000012", id="receiver-name"),
        pytest.param("Q$#@_.0123", id="every-special-character-after-the-first"),
    ],
)
def test_valid_object_name_is_returned_unchanged(name):
    assert object_name(name) == name


def test_lower_case_object_name_is_upper_cased_as_cl_does():
    assert object_name("qmtest") == "QMTEST"
    assert object_name("QmTest") == "QMTEST"


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("", id="empty"),
        pytest.param("QMTESTLIB12", id="eleven-characters"),
        pytest.param("1QMTEST", id="digit-first"),
        pytest.param("_QMTEST", id="underscore-first"),
        pytest.param(".QMTEST", id="dot-first"),
        pytest.param(" ", id="blank"),
        pytest.param("QM TEST", id="blank-inside"),
        pytest.param(" QMTEST", id="leading-blank"),
        pytest.param("QMTEST ", id="trailing-blank"),
        pytest.param("QM'TEST", id="single-quote"),
        pytest.param('QM"TEST', id="double-quote"),
        pytest.param("QM(TEST", id="open-parenthesis"),
        pytest.param("QMTEST)", id="close-parenthesis"),
        pytest.param("QM;TEST", id="semicolon"),
        pytest.param("QGPL/QMTEST", id="slash-qualified"),
        pytest.param("QM-TEST", id="hyphen"),
        pytest.param("QMTEST*", id="generic-asterisk"),
        pytest.param("*ALL", id="special-value-ALL"),
        pytest.param("*LIBL", id="special-value-LIBL"),
        pytest.param("QMTEST) DLTLIB(QGPL", id="cl-injection-close-and-new-parameter"),
        pytest.param("QMTEST'); DLTLIB QGPL", id="cl-injection-quote-and-new-command"),
        pytest.param("QMTEST\nDLTLIB", id="cl-injection-newline"),
    ],
)
def test_invalid_object_name_is_rejected(value):
    with pytest.raises(InvalidName):
        object_name(value)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(None, id="None"),
        pytest.param(12, id="int"),
        pytest.param(b"QMTEST", id="bytes"),
        pytest.param(["QMTEST"], id="list"),
    ],
)
def test_object_name_that_is_not_text_is_rejected(value):
    with pytest.raises(InvalidName, match="must be text"):
        object_name(value)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("QMß", id="sharp-s-becomes-SS"),
        pytest.param("QMﬁle", id="fi-ligature-becomes-FI"),
    ],
)
def test_non_ascii_letters_are_rejected_not_upper_cased_into_another_name(value):
    with pytest.raises(InvalidName):
        object_name(value)


def test_invalid_name_is_a_value_error_so_pydantic_reports_it_as_a_validation_error():
    assert issubclass(InvalidName, ValueError)


def test_invalid_name_message_shows_the_value_and_the_rule():
    with pytest.raises(InvalidName) as caught:
        object_name("QMTEST) DLTLIB(QGPL", what="library")
    message = str(caught.value)
    assert "'QMTEST) DLTLIB(QGPL'" in message
    assert "library" in message
    assert "1-10 characters" in message


# --------------------------------------------------------------------------------------------------------------
# MQ queue manager names: 1-48 of A-Z a-z 0-9 . / _ %, case-sensitive
# --------------------------------------------------------------------------------------------------------------


def test_queue_manager_name_of_48_characters_is_accepted():
    assert qmgr_name("Q" * 48) == "Q" * 48


def test_queue_manager_name_of_49_characters_is_rejected():
    with pytest.raises(InvalidName):
        qmgr_name("Q" * 49)


def test_queue_manager_name_may_use_dot_slash_underscore_and_percent():
    assert qmgr_name("QUEUE/MANAGER.ACCOUNTING_SERVICES%1") == "QUEUE/MANAGER.ACCOUNTING_SERVICES%1"


def test_queue_manager_name_keeps_its_case():
    assert qmgr_name("test") == "test"
    assert qmgr_name("Test") == "Test"


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("", id="empty"),
        pytest.param("TEST'", id="quote"),
        pytest.param("TEST QM", id="space"),
        pytest.param("TEST;", id="semicolon"),
        pytest.param("TEST'); DLTLIB QGPL", id="cl-injection"),
        pytest.param("TEST*", id="asterisk"),
        pytest.param("TEST\n", id="trailing-newline"),
        pytest.param(None, id="None"),
        pytest.param(42, id="int"),
    ],
)
def test_invalid_queue_manager_name_is_rejected(value):
    with pytest.raises(InvalidName, match="not a valid queue manager name"):
        qmgr_name(value)


# --------------------------------------------------------------------------------------------------------------
# The queue manager library: QM + the queue manager name (TEST -> QMTEST)
# --------------------------------------------------------------------------------------------------------------


def test_queue_manager_library_is_qm_followed_by_the_name():
    assert qmgr_library_for("TEST") == "QMTEST"


def test_queue_manager_library_of_an_eight_character_name_fills_ten_characters():
    assert qmgr_library_for("ABCDEFGH") == "QMABCDEFGH"


@pytest.mark.parametrize(
    "qmgr",
    [
        pytest.param("ABCDEFGHI", id="too-long-for-ten-characters"),
        pytest.param("QUEUE/MANAGER", id="slash"),
        pytest.param("PAY%PROD", id="percent"),
    ],
)
def test_queue_manager_name_that_cannot_map_to_a_library_is_a_clear_invalid_name(qmgr):
    with pytest.raises(InvalidName) as caught:
        qmgr_library_for(qmgr)
    assert "queue manager library" in str(caught.value)
    assert qmgr.upper() in str(caught.value)


def test_queue_manager_library_is_not_derived_from_an_invalid_queue_manager_name():
    with pytest.raises(InvalidName, match="not a valid queue manager name"):
        qmgr_library_for("TEST;")


def test_lower_case_queue_manager_name_has_no_derived_library():
    with pytest.raises(InvalidName):
        qmgr_library_for("test")


# --------------------------------------------------------------------------------------------------------------
# Journals: QMGRLIB/AMQAJRN, A the instance letter
# --------------------------------------------------------------------------------------------------------------


def test_journal_instance_of_a_single_instance_queue_manager_is_A():
    assert journal_instance("AMQAJRN") == "A"


def test_journal_instance_is_the_letter_after_amq():
    assert journal_instance("AMQBJRN") == "B"


def test_journal_instance_accepts_lower_case_journal_name():
    assert journal_instance("amqajrn") == "A"


@pytest.mark.parametrize(
    "journal",
    [
        pytest.param("QMTEST", id="not-an-mq-journal"),
        pytest.param("AMQAJRNX", id="extra-character"),
        pytest.param("AMQ1JRN", id="digit-instance"),
        pytest.param("AMQA000012", id="receiver-not-journal"),
        pytest.param("AMQAJRN)", id="not-an-object-name"),
    ],
)
def test_journal_instance_rejects_a_name_that_is_not_an_mq_journal(journal):
    with pytest.raises(InvalidName):
        journal_instance(journal)


# --------------------------------------------------------------------------------------------------------------
# Receiver names: AMQArnnnnn
# --------------------------------------------------------------------------------------------------------------


def test_receiver_name_parses_into_instance_restore_count_and_number():
    assert ReceiverName.parse("AMQB300041") == ReceiverName(instance="B", restore=3, number=41)


def test_receiver_name_formats_number_with_five_digits():
    assert str(ReceiverName("A", 0, 12)) == "AMQA000012"


@pytest.mark.parametrize("name", ["AMQA000000", "AMQA000012", "AMQA099999", "AMQA900000", "AMQZ912345"])
def test_receiver_name_round_trips_through_parse_and_format(name):
    assert str(ReceiverName.parse(name)) == name


def test_receiver_name_parse_upper_cases_like_cl():
    assert ReceiverName.parse("amqa000012") == ReceiverName("A", 0, 12)


def test_first_receiver_name_of_an_instance():
    assert str(ReceiverName.first()) == "AMQA000000"
    assert str(ReceiverName.first("B")) == "AMQB000000"


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("AMQA00012", id="nine-characters"),
        pytest.param("AMQA0000123", id="eleven-characters"),
        pytest.param("AMQAJRN", id="journal-name"),
        pytest.param("QMTEST", id="library-name"),
        pytest.param("AMQ1000012", id="digit-instance"),
        pytest.param("AMQA00001X", id="letter-in-number"),
        pytest.param("", id="empty"),
        pytest.param(None, id="None"),
    ],
)
def test_receiver_name_parse_rejects_what_is_not_amqarnnnnn(value):
    with pytest.raises(InvalidName, match="not an MQ journal receiver name"):
        ReceiverName.parse(value)


def test_is_receiver_name_tells_receivers_from_other_objects():
    assert is_receiver_name("AMQA000012")
    assert not is_receiver_name("AMQAJRN")
    assert not is_receiver_name("QMTEST")


# --------------------------------------------------------------------------------------------------------------
# Rule 1: AMQArnnnnn goes to AMQAr(nnnnn+1); nnnnn wraps at 99999, r is kept
# --------------------------------------------------------------------------------------------------------------

RULE_1_EXAMPLES = [
    pytest.param("AMQA000012", "AMQA000013", id="AMQA000012-goes-to-AMQA000013"),
    pytest.param("AMQA099999", "AMQA000000", id="AMQA099999-wraps-to-AMQA000000"),
    pytest.param("AMQA999999", "AMQA900000", id="AMQA999999-wraps-to-AMQA900000"),
    pytest.param("AMQB300041", "AMQB300042", id="instance-and-restore-count-are-kept"),
]


@pytest.mark.parametrize(("attached", "expected"), RULE_1_EXAMPLES)
def test_rule_1_successor(attached, expected):
    assert str(ReceiverName.parse(attached).successor()) == expected


@pytest.mark.parametrize(("attached", "expected"), RULE_1_EXAMPLES)
def test_rule_1_next_receiver_name_when_the_successor_is_free(attached, expected):
    assert str(next_receiver_name(attached, existing={attached})) == expected


# --------------------------------------------------------------------------------------------------------------
# Rule 2: if the rule 1 name exists, CPI70E3 and automatic receiver switching stops
# --------------------------------------------------------------------------------------------------------------


def test_rule_2_taken_successor_stops_switching_with_cpi70e3():
    with pytest.raises(NextReceiverNameTaken) as caught:
        next_receiver_name("AMQA000012", existing={"AMQA000012", "AMQA000013"})
    assert caught.value.msg_id == "CPI70E3"
    assert caught.value.obj == "AMQA000013"


def test_rule_2_does_not_skip_to_a_later_free_name():
    # AMQA000014 is free, but the system does not look past the rule 1 name: switching simply stops.
    with pytest.raises(NextReceiverNameTaken):
        next_receiver_name("AMQA000012", existing={"AMQA000012", "AMQA000013"})


def test_rule_2_applies_after_the_wrap():
    with pytest.raises(NextReceiverNameTaken) as caught:
        next_receiver_name("AMQA099999", existing={"AMQA099999", "AMQA000000"})
    assert caught.value.obj == "AMQA000000"


def test_rule_2_ignores_taken_names_other_than_the_successor():
    existing = {"AMQA000012", "AMQA000014", "AMQA100013"}
    assert str(next_receiver_name("AMQA000012", existing)) == "AMQA000013"


def test_rule_2_error_names_the_taken_receiver_the_action_and_the_message_id():
    with pytest.raises(NextReceiverNameTaken) as caught:
        next_receiver_name("AMQA000012", existing={"AMQA000012", "AMQA000013"})
    message = str(caught.value)
    assert message.startswith("NextReceiverNameTaken(AMQA000013): ")
    assert "AMQA000012" in message
    assert "CHGJRN" in message  # the action: attach a receiver with a free name by hand
    assert message.endswith("(CPI70E3)")


# --------------------------------------------------------------------------------------------------------------
# Rule 3: the first free name in the sequence; NoReceiverNameFree when every name is on the system
# --------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def every_restore_0_name() -> frozenset[str]:
    """All 100,000 names AMQA000000-AMQA099999, built once for the module."""
    return frozenset(f"AMQA0{number:05d}" for number in range(100_000))


def test_rule_3_next_free_name_is_the_successor_when_it_is_free():
    assert str(next_free_receiver_name("AMQA000012", {"AMQA000012"})) == "AMQA000013"


def test_rule_3_next_free_name_skips_taken_names():
    existing = {"AMQA000012", "AMQA000013", "AMQA000014"}
    assert str(next_free_receiver_name("AMQA000012", existing)) == "AMQA000015"


def test_rule_3_next_free_name_wraps_past_99999():
    existing = {"AMQA099998", "AMQA099999", "AMQA000000"}
    assert str(next_free_receiver_name("AMQA099998", existing)) == "AMQA000001"


def test_rule_3_next_free_name_keeps_the_restore_count_when_it_wraps():
    existing = {"AMQA999999", "AMQA900000"}
    assert str(next_free_receiver_name("AMQA999999", existing)) == "AMQA900001"


def test_rule_3_names_of_another_restore_count_do_not_block():
    existing = {"AMQA000012", "AMQA100013"}
    assert str(next_free_receiver_name("AMQA000012", existing)) == "AMQA000013"


def test_rule_3_last_free_name_is_found_after_going_all_the_way_round(every_restore_0_name):
    existing = every_restore_0_name - {"AMQA000011"}
    assert str(next_free_receiver_name("AMQA000012", existing)) == "AMQA000011"


@pytest.fixture(scope="module")
def all_names_taken(every_restore_0_name) -> NoReceiverNameFree:
    """What rule 3 raises for attached AMQA000012 when all 100,000 names are taken (one 100,000-name scan, shared)."""
    with pytest.raises(NoReceiverNameFree) as caught:
        next_free_receiver_name("AMQA000012", every_restore_0_name)
    return caught.value


def test_rule_3_no_receiver_name_free_when_all_100000_names_are_taken(all_names_taken):
    assert isinstance(all_names_taken, NoReceiverNameFree)
    assert all_names_taken.obj == "AMQA000012"


def test_rule_3_error_names_the_attached_receiver_and_the_action(all_names_taken):
    message = str(all_names_taken)
    assert message.startswith("NoReceiverNameFree(AMQA000012): ")
    assert "delete receivers no longer needed" in message
    assert "RCDMQMIMG" in message


# --------------------------------------------------------------------------------------------------------------
# The library a save file is created in
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("library", ["QGPL", "qgpl", "MQSAVES", "BACKUP.MQ", "QUSRSYS", "#MQBKUP"])
def test_save_library_may_be_qgpl_or_a_user_library(library):
    assert save_library_for(library, "QMTEST") == library.upper()


def test_save_library_may_not_be_the_queue_managers_own_library():
    # A DLTLIB (a lost library) would take the only saves with it.
    with pytest.raises(InvalidName) as caught:
        save_library_for("qmtest", "QMTEST")
    message = str(caught.value)
    assert "QMTEST" in message and "queue manager's own library" in message and "QGPL" in message


def test_save_library_may_not_be_qtemp():
    with pytest.raises(InvalidName, match=r"QTEMP.*job") as caught:
        save_library_for("QTEMP", "QMTEST")
    assert "QGPL" in str(caught.value)


@pytest.mark.parametrize(
    "library",
    ["QSYS", "QSYS2", "QSYS2924", "QRECOVERY", "QSPL", "QRPLOBJ", "QMQM", "QHLPSYS", "QTCP", "QMOTHER"],
)
def test_save_library_may_not_be_a_system_library(library):
    with pytest.raises(InvalidName) as caught:
        save_library_for(library, "QMTEST")
    message = str(caught.value)
    assert library in message and "IBM" in message and "QGPL" in message


def test_save_library_must_be_a_valid_name():
    with pytest.raises(InvalidName, match="save library"):
        save_library_for("QGPL) DLTLIB(QMTEST", "QMTEST")


def test_the_journal_and_receiver_names_of_an_instance_come_from_its_letter():
    assert journal_name("A") == "AMQAJRN" and journal_instance(journal_name("B")) == "B"
    assert receiver_prefix("A") == "AMQA" and str(ReceiverName.first("A")).startswith(receiver_prefix("A"))


@pytest.mark.parametrize("instance", ["", "a", "AB", "1", "*", "A*"])
def test_an_instance_is_one_letter(instance):
    with pytest.raises(InvalidName, match="instance"):
        journal_name(instance)
    with pytest.raises(InvalidName, match="instance"):
        receiver_prefix(instance)


def test_save_files_are_named_for_the_queue_manager_library_and_the_day():
    names = save_file_names("QMPAYROLL", date(2026, 11, 23))
    assert names[:3] == ["PAYRO327A", "PAYRO327B", "PAYRO327C"] and len(set(names)) == 36
    assert all(object_name(n) == n for n in names)
    # A library whose rest would not start a name, or without the QM prefix, is used as it is.
    assert save_file_names("QM1TEST", date(2026, 1, 5))[0] == "QM1TE005A"
    assert save_file_names("MQPROD", date(2026, 1, 5))[0] == "MQPRO005A"


def test_a_save_files_text_names_the_queue_manager_receivers_and_day_in_50_characters():
    assert (
        receiver_save_text("PAYROLL", "AMQA000000", "AMQA000023", date(2026, 11, 23))
        == "mqjournal PAYROLL AMQA000000-AMQA000023 2026-11-23"
    )
    assert receiver_save_text("Q", "AMQA000007", "AMQA000007", date(2026, 11, 23)) == (
        "mqjournal Q AMQA000007 2026-11-23"
    )
    long = receiver_save_text(
        "A.VERY.LONG.QUEUE.MANAGER.NAME.OF.48.CHARACTERS.X", "AMQA000000", "AMQA000023", date.today()
    )
    assert len(long) == TEXT_LENGTH and "AMQA000000-AMQA000023" in long and "~" in long
    assert library_save_text("PAYROLL", "QMPAYROLL", date(2026, 11, 23)) == (
        "mqjournal PAYROLL library QMPAYROLL 2026-11-23"
    )
