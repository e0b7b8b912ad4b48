"""A refused DLTJRNRCV is read from what it printed, never from which escape ID it ended with."""

from __future__ import annotations

from mqjournal.ibmi.refusals import RECOGNISED, refusal
from mqjournal.ibmi.transport import CommandOutput


def refused(stderr: str) -> CommandOutput:
    return CommandOutput(255, "", stderr, 1.0)


def test_the_diagnostic_is_the_reason_and_the_escape_only_sums_up():
    out = refused(
        "CPF7022: Receiver AMQA000003 in QMTEST attached to journal AMQAJRN in QMTEST; receiver not deleted.\n"
        "CPF2125: No objects deleted.\n"
    )
    found = refusal("QMTEST", "AMQA000003", out)
    assert found.receiver == "QMTEST/AMQA000003" and found.reason is RECOGNISED["CPF7022"]
    assert [m.id for m in found.said] == ["CPF7022"]
    assert str(found).startswith("IBM i refused to delete QMTEST/AMQA000003 (it is attached to its journal), which")


def test_unknown_ids_are_a_refusal_with_the_hosts_words_and_advice_that_fits_any_cause():
    found = refusal("QMTEST", "AMQA000001", refused("CPF70FF: Something new went wrong.\nCPF2199: Nothing done.\n"))
    assert found.reason is None
    assert str(found) == (
        "IBM i refused to delete QMTEST/AMQA000001, which is kept. It said: CPF70FF: Something new went wrong. "
        "What to do: read the messages above (and the job log of the SSH job on the partition), remove the cause, "
        "then run the delete step again; until then the receiver stays on the host"
    )


def test_an_escape_alone_is_what_the_host_said():
    found = refusal("QMTEST", "AMQA000001", refused("CPF9898: Receiver held by an exit program.\n"))
    assert [m.id for m in found.said] == ["CPF9898"] and found.reason is None


def test_a_refusal_without_any_message_still_names_the_receiver_and_what_to_do():
    found = str(refusal("QMTEST", "AMQA000001", refused("")))
    assert "QMTEST/AMQA000001" in found and "It said: no message" in found and "What to do:" in found
