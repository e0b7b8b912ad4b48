"""How the recovery steps judge a CL command's answer through PASE `system`: by the exit status, the escape on
stderr and the completion message, not by whether a CPF or CPD message was printed.

Real IBM i: a command that completes exits 0 with its messages on stdout (diagnostics and informational messages
included); one that ends in an escape exits 255 with every message, the escape last, on stderr (sim/system.py).
"""

from __future__ import annotations

from mqjournal.ibmi.transport import CommandOutput
from mqjournal.recovery.outcome import SAVED_TO_SAVE_FILE, judge_cl


def answer(status: int, stdout: str = "", stderr: str = "") -> CommandOutput:
    return CommandOutput(exit_status=status, stdout=stdout, stderr=stderr, duration_ms=1.0)


SAVLIB_OF_A_QUEUE_MANAGER_LIBRARY = answer(
    0,
    "CPF3758: Receiver AMQA000003 in QMTEST saved while attached to journal AMQAJRN in QMTEST.\n"
    "CPC3722: 7 objects saved from library QMTEST.\n",
)


def test_a_library_save_that_took_the_attached_receiver_is_a_success():
    verdict = judge_cl(SAVLIB_OF_A_QUEUE_MANAGER_LIBRARY, completion=(SAVED_TO_SAVE_FILE,))
    assert verdict.ok, verdict.failure


def test_the_diagnostic_is_not_judged_by_its_id_or_language():
    german = answer(0, "CPF9999: Irgendeine Diagnose in der Sprache des Jobs.\nCPC3722: 7 Objekte gesichert.\n")
    assert judge_cl(german, completion=(SAVED_TO_SAVE_FILE,)).ok


def test_chgjrn_informational_messages_do_not_fail_it():
    chgjrn = answer(0, "CPF7018: First sequence number in receiver AMQA000004 is 1201.\n")
    assert judge_cl(chgjrn).ok


def test_a_save_without_its_completion_message_is_not_taken_for_a_save():
    verdict = judge_cl(answer(0, ""), completion=(SAVED_TO_SAVE_FILE,))
    assert not verdict.ok and "CPC3722" in verdict.failure


def test_an_escape_fails_the_command_and_is_named_as_the_culprit():
    verdict = judge_cl(
        answer(
            255,
            "",
            "CPF9801: Object X in library QMTEST not found.\nCPF3701: 1 objects saved from QMTEST. 1 not saved.\n",
        )
    )
    assert not verdict.ok and verdict.msg_id == "CPF3701"


def test_a_syntax_error_is_named_by_cpf0006():
    verdict = judge_cl(
        answer(255, "", "CPD0043: Keyword X not valid for this command.\nCPF0006: Errors occurred in command.\n")
    )
    assert not verdict.ok and verdict.msg_id == "CPF0006"


def test_an_mq_failure_fails_the_command_even_with_exit_status_0():
    verdict = judge_cl(answer(0, "AMQ7432: IBM MQ journal entry not available.\n"))
    assert not verdict.ok and verdict.msg_id == "AMQ7432"


def test_a_non_zero_exit_without_a_message_fails():
    verdict = judge_cl(answer(1))
    assert not verdict.ok and verdict.failure == "exit status 1 without a message"
