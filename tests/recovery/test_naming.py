"""Naming repair plans (seed "Queue manager journals on IBM i", rules 1-3), from snapshots built by hand."""

from __future__ import annotations

import functools
from datetime import timedelta

import pytest

from mqjournal.errors import NextReceiverNameTaken
from mqjournal.ibmi import commands
from mqjournal.names import next_receiver_name
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.naming import plan_naming
from mqjournal.recovery.plan import Action, RecoveryPlan, Request
from mqjournal.recovery.restore import RecoveryRefused
from mqjournal.snapshot import QueueMessage, Receiver
from tests.plan.builders import HOUR, T0, chain, names, snapshot

LIB = "QMTEST"


def request(kind: RecoveryKind = RecoveryKind.NAMING, **kw) -> Request:
    return Request(host="ibmi1", qmgr="TEST", kind=kind, **kw)


def stray(name: str, *, status: str = "EMPTY", library: str = LIB) -> Receiver:
    """A receiver in the library but not in the journal: made by hand (CRTJRNRCV) or restored and not associated."""
    return Receiver(name=name, library=library, status=status, size_bytes=4096, threshold_kb=1000)


def now_of(snap) -> object:
    return snap.collected_at + timedelta(minutes=5)


def plan_for(snap, **kw) -> RecoveryPlan:
    return plan_naming(request(**kw), snap, now_of(snap))


def texts(plan: RecoveryPlan) -> list[str]:
    return [s.text for s in plan.steps]


def cpi70e3(at, queue="QSYS/QSYSOPR") -> QueueMessage:
    return QueueMessage(
        id="CPI70E3",
        at=at,
        queue=queue,
        text="A system managed change journal operation to attach a new journal receiver could not be accomplished "
        "for journal AMQAJRN in QMTEST. User action is required.",
    )


def repair_texts(new: str, threshold: int) -> list[str]:
    return [
        f"CRTJRNRCV JRNRCV(QMTEST/{new}) THRESHOLD({threshold}) TEXT('MQM LOCAL JOURNAL RECEIVER')",
        f"CHGOBJOWN OBJ(QMTEST/{new}) OBJTYPE(*JRNRCV) NEWOWN(QMQM)",
        f"CHGJRN JRN(QMTEST/AMQAJRN) JRNRCV(QMTEST/{new})",
    ]


# --- rule 2: the next name is taken (CPI70E3) ---------------------------------------------------------------------


def test_next_name_taken_by_a_receiver_made_by_hand_gives_the_next_free_name_and_the_three_commands():
    snap = snapshot([*chain(names(10, 4)), stray("AMQA000014")])  # AMQA000013 attached; AMQA000014 made by hand
    plan = plan_for(snap)
    assert plan.request.kind is RecoveryKind.NAMING
    assert texts(plan) == repair_texts("AMQA000015", 1000)
    assert [s.action for s in plan.steps] == [
        Action.CREATE_RECEIVER,
        Action.GIVE_RECEIVER_TO_QMQM,
        Action.ATTACH_RECEIVER,
    ]
    assert all(s.receiver == "AMQA000015" for s in plan.steps)
    assert plan.gaps == [] and plan.executable
    joined = "\n".join(plan.notes)
    assert "AMQA000014" in joined and "not in the journal" in joined  # which name was taken, and by what
    assert "rule 1 from AMQA000015: AMQA000016" in joined  # switching resumes by rule 1 from the new name


def test_after_the_repair_rule_1_continues_from_the_new_name():
    snap = snapshot([*chain(names(10, 4)), stray("AMQA000014")])
    new = plan_for(snap).steps[0].args["receiver"]
    existing = {r.name for r in snap.receivers} | {new}
    assert str(next_receiver_name(new, existing)) == "AMQA000016"
    # and, before the repair, rule 1 from the attached receiver was indeed stuck:
    with pytest.raises(NextReceiverNameTaken):
        next_receiver_name("AMQA000013", {r.name for r in snap.receivers})


def test_taken_names_in_the_journal_chain_count_too_and_the_first_free_one_is_used():
    # Receivers attached in the order 14, 15, 13: 13 is attached, 14 and 15 are older members still in the library.
    snap = snapshot(chain(["AMQA000014", "AMQA000015", "AMQA000013"]))
    plan = plan_for(snap)
    assert texts(plan)[0].startswith("CRTJRNRCV JRNRCV(QMTEST/AMQA000016) ")
    assert any("AMQA000014" in n and "in the journal's receiver chain" in n for n in plan.notes)


def test_names_wrap_from_99999_to_00000_and_skip_every_taken_name():
    snap = snapshot([*chain(names(99997, 3)), stray("AMQA000000", status="SAVED"), stray("AMQA000001")])
    plan = plan_for(snap)
    assert plan.steps[0].args["receiver"] == "AMQA000002"
    assert texts(plan) == repair_texts("AMQA000002", 1000)


def test_a_receiver_of_another_library_does_not_take_the_name():
    snap = snapshot([*chain(names(10, 4)), stray("AMQA000014", library="QGPL")])
    plan = plan_for(snap)
    assert plan.steps == []
    assert "switching works" in plan.notes[0].lower()


def test_cpi70e3_since_the_attach_means_switching_stopped_even_when_the_name_is_free_again():
    receivers = chain(names(10, 4))
    attached_at = receivers[-1].attached_at
    snap = snapshot(receivers).model_copy(update={"messages": [cpi70e3(attached_at + timedelta(minutes=10))]})
    plan = plan_for(snap)
    assert texts(plan) == repair_texts("AMQA000014", 1000)
    assert any("CPI70E3" in n and "QSYS/QSYSOPR" in n for n in plan.notes)


def test_a_cpi70e3_older_than_the_attached_receiver_was_already_repaired():
    receivers = chain(names(10, 4))
    attached_at = receivers[-1].attached_at
    snap = snapshot(receivers).model_copy(update={"messages": [cpi70e3(attached_at - timedelta(minutes=10))]})
    assert plan_for(snap).steps == []


def test_warns_when_the_name_after_the_new_one_is_taken_too():
    snap = snapshot([*chain(names(10, 4)), stray("AMQA000014"), stray("AMQA000016")])
    plan = plan_for(snap)
    assert plan.steps[0].args["receiver"] == "AMQA000015"
    assert any(n.startswith("Warning: AMQA000016") for n in plan.notes)


# --- nothing wrong, or a new threshold -------------------------------------------------------------------------


def test_nothing_wrong_and_no_threshold_gives_a_plan_without_steps_that_says_switching_works():
    plan = plan_for(snapshot(chain(names(10, 4))))
    assert plan.steps == [] and plan.gaps == []
    assert not plan.executable
    assert "Receiver switching works" in plan.notes[0] and "AMQA000014" in plan.notes[0]


def test_a_new_threshold_attaches_the_next_name_with_it():
    plan = plan_for(snapshot(chain(names(10, 4))), threshold_kb=500_000)
    assert texts(plan) == repair_texts("AMQA000014", 500_000)
    assert any("changes the threshold" in n for n in plan.notes)


def test_a_threshold_asked_for_overrides_the_attached_one_in_a_repair_too():
    snap = snapshot([*chain(names(10, 4)), stray("AMQA000014")])
    assert plan_for(snap, threshold_kb=250_000).steps[0].args["threshold_kb"] == 250_000


def test_the_threshold_is_the_attached_receivers_and_mq_s_default_when_unknown():
    unknown = [r.model_copy(update={"threshold_kb": None}) for r in chain(names(10, 4))]
    plan = plan_for(snapshot([*unknown, stray("AMQA000014")]))
    assert plan.steps[0].args["threshold_kb"] == 100_000
    assert any("100000 KB" in n for n in plan.notes)


def test_an_attached_threshold_crtjrnrcv_cannot_take_is_capped():
    huge = [r.model_copy(update={"threshold_kb": 5_000_000}) for r in chain(names(10, 4))]
    plan = plan_for(snapshot([*huge, stray("AMQA000014")]))
    assert plan.steps[0].args["threshold_kb"] == commands.MAX_THRESHOLD_KB
    assert plan.steps[0].command()  # the builder accepts it
    assert any("capped" in n for n in plan.notes)


def test_a_threshold_outside_what_crtjrnrcv_takes_is_refused_in_the_request():
    with pytest.raises(ValueError):
        request(threshold_kb=commands.MAX_THRESHOLD_KB + 1)
    with pytest.raises(ValueError):
        request(threshold_kb=0)


# --- restore generations ---------------------------------------------------------------------------------------


def test_a_restore_generation_is_kept_and_noted_and_other_generations_do_not_block():
    snap = snapshot([*chain(names(3, 3, prefix="AMQA1")), stray("AMQA100006"), stray("AMQA000007")])
    plan = plan_for(snap)
    assert plan.steps[0].args["receiver"] == "AMQA100007"  # AMQA000007 is generation 0: no conflict
    assert any("restore generation 1" in n for n in plan.notes)


# --- rule 3: no name is free ----------------------------------------------------------------------------------


@functools.cache
def full_library(attached: str, keep_free: tuple[str, ...] = ()) -> tuple[Receiver, ...]:
    """A short chain ending in `attached`, plus every other name of its generation made by hand (built once)."""
    prefix, number = attached[:5], int(attached[5:])
    members = chain([f"{prefix}{(number - 2 + i) % 100_000:05d}" for i in range(3)], start=T0, every=HOUR)
    taken = {r.name for r in members} | set(keep_free)
    template = stray(f"{prefix}00000")
    strays = [
        template.model_copy(update={"name": name})  # no revalidation: 100000 receivers in well under a second
        for name in (f"{prefix}{n:05d}" for n in range(100_000))
        if name not in taken
    ]
    return tuple(members + strays)


def test_every_name_taken_gives_no_crtjrnrcv_but_rule_3_with_a_gap_and_rcdmqmimg():
    snap = snapshot(list(full_library("AMQA000500")), oldest="AMQA000499")
    plan = plan_for(snap)
    assert all(s.action is not Action.CREATE_RECEIVER for s in plan.steps)
    assert [s.action for s in plan.steps] == [Action.RECORD_MEDIA_IMAGES]
    assert texts(plan) == ["RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) MQMNAME('TEST') DSPJRNDTA(*YES)"]
    assert not plan.executable  # the maintenance runs around the checkpoint are no command: a gap
    (gap,) = plan.gaps
    assert "rule 3" in gap.problem and "maintenance DAG" in gap.action and "plan the naming repair again" in gap.action
    joined = "\n".join(plan.notes)
    assert "AMQA000000-AMQA099999" in joined
    assert "1 of the 3 receivers of the journal are older than the oldest one MQ needs (AMQA000499)" in joined
    assert "not in the journal's chain" in joined  # the hand-made names block too
    assert joined.index("maintenance DAG") < joined.index("RCDMQMIMG") < joined.index("again")


def test_rule_3_with_an_unusable_amqjrninf_says_to_checkpoint_first():
    snap = snapshot(list(full_library("AMQA000500")), amqjrninf=None)
    plan = plan_for(snap)
    assert any("AMQJRNINF is unusable" in n and "RCDMQMIMG first" in n for n in plan.notes)


def test_one_free_name_anywhere_in_the_sequence_is_found_past_the_wrap():
    snap = snapshot(list(full_library("AMQA099000", keep_free=("AMQA000005",))))
    plan = plan_for(snap)
    assert texts(plan) == repair_texts("AMQA000005", 1000)


# --- refusals and gaps -----------------------------------------------------------------------------------------


def test_another_kind_of_request_is_refused():
    snap = snapshot(chain(names(10, 4)))
    with pytest.raises(RecoveryRefused):
        plan_naming(request(RecoveryKind.EXPIRY), snap, now_of(snap))


def test_a_snapshot_of_another_queue_manager_is_refused():
    snap = snapshot(chain(names(10, 4)), qmgr="OTHER", library=LIB)
    with pytest.raises(RecoveryRefused, match="OTHER"):
        plan_for(snap)


def test_two_attached_receivers_are_refused():
    receivers = chain(names(10, 4))
    receivers[1] = receivers[1].model_copy(update={"status": "ATTACHED"})
    with pytest.raises(RecoveryRefused, match="2 attached receivers"):
        plan_for(snapshot(receivers))


def test_no_attached_receiver_is_refused():
    receivers = [r.model_copy(update={"status": "ONLINE"}) for r in chain(names(10, 4))]
    with pytest.raises(RecoveryRefused, match="0 attached"):
        plan_for(snapshot(receivers))


def test_an_attached_receiver_without_an_mq_name_is_refused():
    receivers = chain([*names(10, 3), "MYRCV"])
    with pytest.raises(RecoveryRefused, match="not an MQ receiver name"):
        plan_for(snapshot(receivers))


def test_a_stale_snapshot_is_a_gap():
    snap = snapshot([*chain(names(10, 4)), stray("AMQA000014")])
    plan = plan_naming(request(), snap, snap.collected_at + timedelta(days=2))
    assert plan.steps and plan.gaps and not plan.executable
    assert "collect" in plan.gaps[0].action


def test_the_plan_is_data_that_round_trips_through_json():
    plan = plan_for(snapshot([*chain(names(10, 4)), stray("AMQA000014")]))
    again = RecoveryPlan.model_validate_json(plan.model_dump_json())
    assert again == plan
    assert [s.text for s in again.steps] == texts(plan)
    assert "CRTJRNRCV" in plan.markdown()


def test_a_cpi70e3_the_collector_kept_counts_whatever_mqjournals_own_layout_reads_in_its_data():
    """The collector read CPI70E3's data by the layout the partition declares and kept only those naming this journal
    (or that it could not tell apart): read again by mqjournal's guess of the layout, the same bytes may name another
    journal, and switching that stopped would look fine."""
    from mqjournal import mqmessages

    receivers = chain(names(10, 4))
    attached_at = receivers[-1].attached_at
    guessed = mqmessages.encode(mqmessages.LAYOUTS["CPI70E3"], ("OTHERJRN", "OTHERLIB")).hex().upper()
    message = cpi70e3(attached_at + timedelta(minutes=10)).model_copy(update={"tokens": guessed})
    plan = plan_for(snapshot(receivers).model_copy(update={"messages": [message]}))
    assert texts(plan) == repair_texts("AMQA000014", 1000)


def test_a_kept_cpi70e3_whose_data_does_not_decode_counts_and_names_the_dspmsgd_that_shows_its_format():
    from mqjournal.snapshot import UndecodableMessage

    receivers = chain(names(10, 4))
    at = receivers[-1].attached_at + timedelta(minutes=10)
    message = cpi70e3(at).model_copy(update={"tokens": "C1C2"})
    undecodable = UndecodableMessage(
        message_id="CPI70E3",
        sent_at=at,
        problem="the data is shorter",
        dspmsgd="DSPMSGD RANGE(CPI70E3) MSGF(QSYS/QCPFMSG)",
    )
    snap = snapshot(receivers).model_copy(update={"messages": [message], "undecodable_messages": [undecodable]})
    plan = plan_for(snap)
    assert texts(plan) == repair_texts("AMQA000014", 1000)
    assert any("does not decode" in n and "DSPMSGD RANGE(CPI70E3) MSGF(QSYS/QCPFMSG)" in n for n in plan.notes)
