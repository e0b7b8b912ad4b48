"""The delete-time re-check, a pure function (docs/planning-rules.md, section 6): what the executor may delete now."""

from __future__ import annotations

from datetime import timedelta

from mqjournal.policy import Policy
from mqjournal.rules import BackupEvidence, DeleteDecision, delete_decisions
from mqjournal.snapshot import Receiver
from tests.plan.builders import HOUR, KB, T0, chain, snapshot
from tests.plan.test_rules import FIVE

POLICY = Policy()
ATTACK = "********************20991231235959999"


def live_state(**kw):
    """AMQA000001-3 saved and not needed, AMQA000004 needed (AMQJRNINF), AMQA000005 attached."""
    receivers = kw.pop("receivers", None) or chain(FIVE, saved=FIVE[:4])
    return snapshot(receivers, **({"oldest": "AMQA000004"} | kw))


def proven(save_file: str = "QGPL/MQJX0", **flags) -> BackupEvidence:
    return BackupEvidence(
        save_file=save_file,
        on_host=flags.get("on_host", True),
        lists_receiver=flags.get("lists_receiver", True),
        discarded=flags.get("discarded", False),
        complete=flags.get("complete", True),
        stored_key=flags.get("stored_key", "ibmi1/QMTEST/run1/QGPL.MQJX0.savf"),
    )


def evidence_for(live, *names: str, **flags) -> dict:
    by_name = {r.name: r for r in live.receivers}
    return {(by_name[n].library, n, by_name[n].attached_at): [proven(**flags)] for n in names}


def decide(approved, live, evidence=None) -> list[DeleteDecision]:
    evidence = evidence_for(live, *[n for n in FIVE if n in approved]) if evidence is None else evidence
    return delete_decisions(approved, live, evidence, policy=POLICY)


def table(decisions) -> list[tuple[str, bool, str]]:
    return [(d.receiver, d.delete, d.reason) for d in decisions]


# --- deleting -----------------------------------------------------------------------------------------------------


def test_approved_not_needed_proven_receivers_are_deleted_oldest_first():
    live = live_state()
    decisions = decide(["AMQA000003", "AMQA000001", "AMQA000002"], live)
    assert table(decisions) == [
        ("AMQA000001", True, "DELETE"), ("AMQA000002", True, "DELETE"), ("AMQA000003", True, "DELETE"),
    ]  # fmt: skip
    assert decisions[0].detail == (
        "not needed, saved in QGPL/MQJX0 and copied to the backup store as ibmi1/QMTEST/run1/QGPL.MQJX0.savf"
    )
    assert {d.library for d in decisions} == {"QMTEST"}


def test_a_name_approved_twice_is_one_decision():
    assert table(decide(["AMQA000001", "AMQA000001"], live_state())) == [("AMQA000001", True, "DELETE")]


def test_the_host_showing_it_saved_needs_no_inquiry_override():
    (decision,) = decide(["AMQA000001"], live_state())
    assert decision.delete and not decision.ignore_inquiry


def test_a_receiver_the_host_does_not_show_saved_is_deleted_with_ignore_inquiry_when_the_catalog_proves_it():
    # Not saved on the host (ONLINE): the plan makes it save_then_delete; the catalog's save is proven on the host.
    live = live_state(receivers=chain(FIVE, saved=("AMQA000002", "AMQA000003")))
    decisions = decide(["AMQA000001", "AMQA000002"], live)
    assert table(decisions) == [("AMQA000001", True, "DELETE"), ("AMQA000002", True, "DELETE")]
    assert [d.ignore_inquiry for d in decisions] == [True, False]


# --- not on the host, not in the chain ---------------------------------------------------------------------------


def test_a_name_no_longer_on_the_host_is_already_gone():
    (decision,) = decide(["AMQA000000"], live_state())
    assert (decision.delete, decision.reason, decision.detail) == (False, "ALREADY_GONE", "not on the system")


def test_a_name_on_the_host_outside_the_chain_is_not_in_chain():
    stray = Receiver(name="AMQA000077", library="QMTEST", status="EMPTY", size_bytes=16 * KB)
    live = live_state(receivers=[*chain(FIVE, saved=FIVE[:4]), stray])
    (decision,) = decide(["AMQA000077"], live, evidence={})
    assert (decision.reason, decision.detail) == ("NOT_IN_CHAIN", "not in the journal's receiver chain")


def test_a_receiver_of_that_name_in_another_library_is_not_the_one_approved():
    other = [r.model_copy(update={"library": "QMOTHER"}) for r in chain(FIVE, saved=FIVE[:4], library="QMOTHER")]
    live = live_state(receivers=chain(FIVE[2:], saved=FIVE[2:4]) + other[:1])
    (decision,) = decide(["AMQA000001"], live, evidence={})
    assert decision.reason == "ALREADY_GONE" and decision.library == "QMTEST"


def test_decisions_come_gone_first_then_in_chain_order_then_outside_the_chain():
    stray = Receiver(name="AMQA000077", library="QMTEST", status="EMPTY", size_bytes=16 * KB)
    live = live_state(receivers=[*chain(FIVE, saved=FIVE[:4]), stray])
    decisions = decide(["AMQA000077", "AMQA000002", "AMQA000000", "AMQA000001"], live)
    assert [d.receiver for d in decisions] == ["AMQA000000", "AMQA000001", "AMQA000002", "AMQA000077"]


# --- blocked ------------------------------------------------------------------------------------------------------


def test_a_blocked_queue_manager_keeps_every_approved_receiver_naming_the_block():
    live = live_state(amqjrninf=ATTACK, startup="AMQA000002", startup_at=T0 + HOUR + timedelta(minutes=5), media=None)
    decisions = decide(["AMQA000001", "AMQA000002", "AMQA000003"], live)
    assert table(decisions) == [(n, False, "BLOCKED") for n in ("AMQA000001", "AMQA000002", "AMQA000003")]
    assert decisions[0].detail == "blocked on the live host: AMQJRNINF_TIME_IN_FUTURE"


def test_a_live_state_collected_long_ago_is_still_current_for_the_re_check():
    live = live_state()
    assert not any(d.reason == "BLOCKED" for d in decide(["AMQA000001"], live))


# --- not deletable now --------------------------------------------------------------------------------------------


def test_a_receiver_needed_again_is_kept_and_stops_every_later_one():
    # Since the plan, AMQ7460 has moved back to AMQA000002 (an in-doubt unit of work surfaced).
    live = live_state(startup="AMQA000002", startup_at=T0 + HOUR + timedelta(minutes=5))
    decisions = decide(["AMQA000001", "AMQA000002", "AMQA000003"], live)
    assert table(decisions) == [
        ("AMQA000001", True, "DELETE"), ("AMQA000002", False, "NOT_DELETABLE_NOW"),
        ("AMQA000003", False, "OLDER_NOT_DELETED"),
    ]  # fmt: skip
    assert decisions[1].detail == "not deletable now (NEEDED_SAVED)"
    assert decisions[2].detail == "AMQA000002, older in the chain, was not deleted"


def test_the_attached_receiver_is_never_deleted():
    live = live_state(oldest="AMQA000005")
    decisions = decide(FIVE, live)
    assert table(decisions)[-1] == ("AMQA000005", False, "ATTACHED")
    assert decisions[-1].detail == "not deletable now (ATTACHED)"
    assert [d.delete for d in decisions] == [True, True, True, True, False]


def test_an_approval_that_skips_the_oldest_receiver_deletes_nothing():
    decisions = decide(["AMQA000002", "AMQA000003"], live_state())
    assert table(decisions) == [("AMQA000002", False, "OLDER_NOT_DELETED"), ("AMQA000003", False, "OLDER_NOT_DELETED")]
    assert decisions[0].detail == "AMQA000001, older in the chain, is not approved for deletion"


# --- proof of the save --------------------------------------------------------------------------------------------


def test_a_receiver_without_any_catalogued_save_is_kept():
    decisions = decide(["AMQA000001", "AMQA000002"], live_state(), evidence={})
    assert table(decisions) == [("AMQA000001", False, "NO_PROVEN_BACKUP"), ("AMQA000002", False, "OLDER_NOT_DELETED")]
    assert decisions[0].detail == "not verifiably saved: no verified save in the catalog"


def test_a_save_file_gone_from_the_host_without_a_stored_copy_proves_nothing():
    live = live_state()
    (decision,) = decide(["AMQA000001"], live, evidence_for(live, "AMQA000001", on_host=False, stored_key=None))
    assert (decision.delete, decision.reason) == (False, "NO_PROVEN_BACKUP")
    assert decision.detail == (
        "no proven backup: QGPL/MQJX0 no longer exists and has no verified copy in the backup store"
    )


def test_a_save_file_only_on_the_partition_it_saves_proves_nothing():
    live = live_state()
    (decision,) = decide(["AMQA000001"], live, evidence_for(live, "AMQA000001", stored_key=None))
    assert (decision.delete, decision.reason) == (False, "NO_PROVEN_BACKUP")
    assert decision.detail == (
        "no proven backup: QGPL/MQJX0 has no verified copy in the backup store (it is only on the partition it saves)"
    )


def test_a_save_file_cleaned_from_the_host_is_proven_by_its_stored_copy():
    live = live_state()
    (decision,) = decide(["AMQA000001"], live, evidence_for(live, "AMQA000001", on_host=False, lists_receiver=False))
    assert (decision.delete, decision.reason) == (True, "DELETE")


def test_a_save_file_that_does_not_list_the_receiver_proves_nothing():
    live = live_state()
    (decision,) = decide(["AMQA000001"], live, evidence_for(live, "AMQA000001", lists_receiver=False))
    assert decision.detail == "no proven backup: QGPL/MQJX0 does not list it"


def test_a_discarded_save_proves_nothing():
    live = live_state()
    (decision,) = decide(["AMQA000001"], live, evidence_for(live, "AMQA000001", discarded=True))
    assert decision.detail == "no proven backup: QGPL/MQJX0 is discarded in the catalog"


def test_an_incomplete_save_proves_nothing():
    live = live_state()
    (decision,) = decide(["AMQA000001"], live, evidence_for(live, "AMQA000001", complete=False))
    assert decision.detail == "no proven backup: QGPL/MQJX0 does not cover all of its entries"


def test_every_unproven_save_is_named():
    live = live_state()
    first = live.receivers[0]
    evidence = {
        ("QMTEST", "AMQA000001", first.attached_at): [
            proven(on_host=False, stored_key=None),
            proven("QGPL/MQJX1", complete=False),
        ]
    }
    (decision,) = decide(["AMQA000001"], live, evidence)
    assert decision.detail == (
        "no proven backup: QGPL/MQJX0 no longer exists and has no verified copy in the backup store; "
        "QGPL/MQJX1 does not cover all of its entries"
    )


def test_one_proven_save_among_unproven_ones_is_enough():
    live = live_state()
    first = live.receivers[0]
    evidence = {
        ("QMTEST", "AMQA000001", first.attached_at): [
            proven(on_host=False, stored_key=None),
            proven("QGPL/MQJX1", stored_key="k"),
        ]
    }
    (decision,) = decide(["AMQA000001"], live, evidence)
    assert decision.delete and decision.detail == "not needed, saved in QGPL/MQJX1 and copied to the backup store as k"


def test_a_save_of_an_earlier_incarnation_of_the_name_does_not_count():
    live = live_state()
    first = live.receivers[0]
    evidence = {("QMTEST", "AMQA000001", first.attached_at - timedelta(days=30)): [proven()]}
    (decision,) = decide(["AMQA000001"], live, evidence)
    assert (decision.delete, decision.reason) == (False, "NO_PROVEN_BACKUP")
