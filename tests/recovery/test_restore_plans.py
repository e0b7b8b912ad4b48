"""The restore planner on built states: what it restores, in which order, what it runs after, and its gaps."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mqjournal import mqmessages, msgformats
from mqjournal.catalog import CatalogedReceiver, LibrarySaveRecord, SaveRecord
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import Action, RecoveryPlan, Request
from mqjournal.recovery.restore import Inputs, RecoveryRefused, plan_restore
from mqjournal.snapshot import (
    Checkpoint,
    DamagedObject,
    JournalRef,
    QueueMessage,
    Receiver,
    RecoveryPoint,
    Snapshot,
    UndecodableMessage,
)

TZ = timezone(timedelta(hours=1))
T0 = datetime(2026, 11, 2, 8, 0, tzinfo=TZ)
HOUR = timedelta(hours=1)
LIB = "QMTEST"
SAVF = ("QGPL", "MQJSAVE0")
COLLECTED = T0 + 6 * HOUR


def name(i: int) -> str:
    return f"AMQA{i:06d}"


def receiver(i: int, status: str = "SAVED") -> Receiver:
    attached = T0 + i * HOUR
    return Receiver(
        name=name(i),
        library=LIB,
        status=status,
        attached_at=attached,
        detached_at=None if status == "ATTACHED" else attached + HOUR,
        saved_at=attached + HOUR + timedelta(minutes=5) if status in ("SAVED", "FREED") else None,
        size_bytes=4096,
        threshold_kb=500,
        first_sequence=i * 100 + 1,
        last_sequence=(i + 1) * 100,
        journal="AMQAJRN",
        journal_library=LIB,
    )


def save(i: int, savf: tuple[str, str] = SAVF) -> SaveRecord:
    r = receiver(i)
    return SaveRecord(
        host="ibmi1",
        qmgr="TEST",
        qmgr_library=LIB,
        receiver=r.name,
        library=LIB,
        attached_at=r.attached_at,
        detached_at=r.detached_at,
        first_sequence=r.first_sequence,
        last_sequence=r.last_sequence,
        previous=name(i - 1) if i else None,
        next=name(i + 1),
        size_bytes=r.size_bytes,
        save_file_library=savf[0],
        save_file=savf[1],
        saved_at=r.saved_at,
        verified_at=r.saved_at,
        run_id="maint",
    )


def cataloged(*indexes: int, savf: tuple[str, str] = SAVF) -> list[CatalogedReceiver]:
    out = []
    for i in indexes:
        s = save(i, savf)
        out.append(
            CatalogedReceiver(
                name=s.receiver,
                library=LIB,
                attached_at=s.attached_at,
                detached_at=s.detached_at,
                first_sequence=s.first_sequence,
                last_sequence=s.last_sequence,
                previous=s.previous,
                next=s.next,
                size_bytes=s.size_bytes,
                saves=(s,),
            )
        )
    return out


def message(msg_id: str, text: str, at: datetime, *tokens: object) -> QueueMessage:
    """A QMQMMSG message as collected: its text is for people, its replacement data (hex) is what is read."""
    data = mqmessages.encode(mqmessages.LAYOUTS[msg_id], tokens).hex().upper() if tokens else None
    return QueueMessage(id=msg_id, at=at, text=text, queue=f"{LIB}/QMQMMSG", tokens=data)


def amq7432(needed: datetime) -> QueueMessage:
    # German *DMY wording: nothing is read from it.
    stamp = needed.strftime("%d.%m.%y %H:%M:%S")
    return message(
        "AMQ7432",
        f"IBM MQ-Journaleintrag nicht verfügbar. Journalempfänger ab Datum und Uhrzeit {stamp} zurückspeichern.",
        T0 + 6 * HOUR,
        0,
        0,
        needed,
        "TEST",
    )


def _as_collected(messages: list[QueueMessage]) -> dict:
    """What the collector reads from the messages' replacement data (by mqjournal's layouts here: these messages are
    laid out by them): the newest AMQ7432's entry time and the newest AMQ7472 per object."""
    amq7432 = [m for m in messages if m.id == "AMQ7432" and m.tokens]
    entry = msgformats.read("AMQ7432", amq7432[-1].tokens, not_after=COLLECTED).values if amq7432 else None
    damaged = {}
    for m in sorted(messages, key=lambda m: m.at):
        found = (
            msgformats.read("AMQ7472", m.tokens, not_after=COLLECTED).values if m.id == "AMQ7472" and m.tokens else None
        )
        if found is not None:
            damaged[(found["object"], found["object_type"])] = m.at
    return {
        "entry_needed_at": None if entry is None else entry["at"],
        "damaged_objects": [
            DamagedObject(object=obj, object_type=kind, reported_at=at) for (obj, kind), at in damaged.items()
        ],
    }


def snapshot(receivers: list[Receiver], messages: list[QueueMessage] = (), media: datetime | None = None) -> Snapshot:
    return Snapshot(
        run_id="recovery",
        collected_at=COLLECTED,
        host="ibmi1",
        qmgr="TEST",
        qmgr_library=LIB,
        journal=JournalRef(name="AMQAJRN", library=LIB),
        checkpoint=Checkpoint(forced=False, ok=False),
        amqjrninf=None,
        startup_recovery=None,
        media_recovery=RecoveryPoint(receiver=None, at=media) if media else None,
        receivers=receivers,
        messages=list(messages),
        **_as_collected(list(messages)),
    )


def inputs(kind: RecoveryKind, snap: Snapshot | None, known: list[CatalogedReceiver], **extra) -> Inputs:
    request = Request(host="ibmi1", qmgr="TEST", kind=kind, **extra.pop("request", {}))
    extra.setdefault("save_files_on_host", {f"{SAVF[0]}/{SAVF[1]}"})
    return Inputs(
        request=request,
        qmgr_library=LIB,
        journal="AMQAJRN",
        now=extra.pop("now", T0 + 6 * HOUR),
        snapshot=snap,
        cataloged=known,
        **extra,
    )


def actions(plan: RecoveryPlan) -> list[Action]:
    return [s.action for s in plan.steps]


# --- startup ------------------------------------------------------------------------------------------------------

LIVE = [receiver(4, "SAVED"), receiver(5, "ATTACHED")]  # 0-3 were deleted after their save


def test_startup_restores_the_missing_receivers_from_the_amq7432_entry_on_newest_first_then_strmqm():
    snap = snapshot(LIVE, [amq7432(T0 + 2 * HOUR + timedelta(minutes=30))])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, cataloged(0, 1, 2, 3, 4)))
    assert plan.executable and plan.gaps == []
    assert plan.restored_receivers == [name(3), name(2)]
    assert actions(plan) == [
        Action.RESTORE_RECEIVER,
        Action.RESTORE_RECEIVER,
        Action.ASSOCIATE_RECEIVERS,
        Action.START_QMGR,
    ]
    assert plan.steps[0].text == (
        f"RSTOBJ OBJ({name(3)}) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/MQJSAVE0)"
    )
    assert plan.steps[0].attached_at == T0 + 3 * HOUR
    assert plan.steps[-1].text == "STRMQM MQMNAME('TEST')"


def test_startup_restores_only_receivers_that_are_not_readable_on_the_host():
    # The host still has 3, online; 2 is there with its storage freed (saved with STG(*FREE)): only 2 comes back.
    snap = snapshot(
        [receiver(2, "FREED"), receiver(3, "ONLINE"), *LIVE], [amq7432(T0 + 2 * HOUR + timedelta(minutes=30))]
    )
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, cataloged(0, 1, 2)))
    assert plan.restored_receivers == [name(2)]
    assert plan.gaps == []


def test_startup_with_nothing_missing_only_starts_the_queue_manager():
    snap = snapshot([receiver(i) for i in range(5)] + [receiver(5, "ATTACHED")], [amq7432(T0 + 2 * HOUR)])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, []))
    assert actions(plan) == [Action.START_QMGR]


def test_the_timestamp_given_wins_over_the_amq7432_on_the_host():
    snap = snapshot(LIVE, [amq7432(T0 + 2 * HOUR + timedelta(minutes=30))])
    plan = plan_restore(
        inputs(RecoveryKind.STARTUP, snap, cataloged(0, 1, 2, 3), request={"needed_at": T0 + timedelta(minutes=30)})
    )
    assert plan.restored_receivers == [name(3), name(2), name(1), name(0)]


def test_a_receiver_neither_on_the_host_nor_in_the_catalog_is_a_continuity_gap():
    snap = snapshot(LIVE, [amq7432(T0 + 2 * HOUR + timedelta(minutes=30))])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, cataloged(0, 1, 2)))  # 3 was deleted without a save
    assert not plan.executable
    (gap,) = plan.gaps
    assert gap.obj == f"entries 301-400 between {name(2)} and {name(4)}"
    assert "neither on the host nor in the catalog" in gap.problem
    assert "GAP" in plan.markdown()


def test_a_needed_receiver_without_a_verified_save_is_a_gap():
    # 3 is on the host with its storage freed, but the catalog has no save of it: it cannot be made readable.
    snap = snapshot([receiver(3, "FREED"), *LIVE], [amq7432(T0 + 3 * HOUR + timedelta(minutes=30))])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, []))
    (gap,) = plan.gaps
    assert gap.obj.startswith(f"{LIB}/{name(3)} (attached ")
    assert gap.problem == "it is not on the host and the catalog has no verified save of it"


def test_a_save_file_gone_from_the_host_is_a_gap():
    snap = snapshot(LIVE, [amq7432(T0 + 3 * HOUR + timedelta(minutes=30))])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, cataloged(3), save_files_on_host={"QGPL/OTHER"}))
    (gap,) = plan.gaps
    assert "QGPL/MQJSAVE0 no longer exist on ibmi1" in gap.problem
    assert "bring the save file back" in gap.action


def test_a_name_in_use_on_the_host_is_a_gap():
    # An admin made a receiver with the name of the one to restore (never attached): RSTOBJ would fail CPF2112.
    squatter = Receiver(name=name(3), library=LIB, status="EMPTY", size_bytes=0)
    snap = snapshot([squatter, *LIVE], [amq7432(T0 + 3 * HOUR + timedelta(minutes=30))])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, cataloged(3)))
    (gap,) = plan.gaps
    assert gap.obj == f"{LIB}/{name(3)}"
    assert "another receiver of that name (never attached)" in gap.problem and "CPF2112" in gap.problem


def test_an_entry_older_than_anything_known_is_a_gap():
    snap = snapshot(LIVE, [amq7432(T0 - 5 * HOUR)])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, cataloged(0, 1, 2, 3)))
    (gap,) = plan.gaps
    assert "older than every receiver" in gap.problem


# --- media --------------------------------------------------------------------------------------------------------


def test_media_recovery_restores_from_the_amq7462_point_and_recreates_the_damaged_object():
    damaged = message(
        "AMQ7472", "Objekt APP.REQUEST.QUEUE, Typ LCLQ beschädigt.", T0 + 5 * HOUR, 0, 0, "APP.REQUEST.QUEUE", "LCLQ"
    )
    snap = snapshot(LIVE, [damaged], media=T0 + 2 * HOUR + timedelta(minutes=15))
    plan = plan_restore(inputs(RecoveryKind.MEDIA, snap, cataloged(0, 1, 2, 3)))
    assert plan.restored_receivers == [name(3), name(2)]
    assert actions(plan)[-2:] == [Action.ASSOCIATE_RECEIVERS, Action.RECREATE_OBJECT]
    assert plan.steps[-1].text == "RCRMQMOBJ OBJ('APP.REQUEST.QUEUE') OBJTYPE(*LCLQ) MQMNAME('TEST')"
    assert plan.request.object == "APP.REQUEST.QUEUE" and plan.request.object_type == "*LCLQ"


def _unread_amq7472(at: datetime) -> UndecodableMessage:
    return UndecodableMessage(
        message_id="AMQ7472",
        sent_at=at,
        problem="the data is shorter than (*BIN 2) (*BIN 2) (*CHAR 48) (*CHAR 10)",
        dspmsgd="DSPMSGD RANGE(AMQ7472) MSGF(QMQM/AMQMSG)",
    )


def test_media_recovery_without_a_decodable_amq7472_asks_for_the_object_naming_dspmsgd():
    snap = snapshot(LIVE, media=T0 + 2 * HOUR).model_copy(
        update={"undecodable_messages": [_unread_amq7472(T0 + 5 * HOUR)]}
    )
    with pytest.raises(RecoveryRefused) as refused:
        plan_restore(inputs(RecoveryKind.MEDIA, snap, cataloged(0, 1, 2, 3)))
    assert "no AMQ7472 in QMQMMSG decodes" in refused.value.problem
    assert "give the damaged object's name" in refused.value.action
    assert "DSPMSGD RANGE(AMQ7472) MSGF(QMQM/AMQMSG)" in refused.value.action


def test_a_newer_amq7472_that_does_not_decode_is_noted_in_the_media_plan():
    damaged = message("AMQ7472", "", T0 + 4 * HOUR, 0, 0, "APP.REQUEST.QUEUE", "LCLQ")
    snap = snapshot(LIVE, [damaged], media=T0 + 2 * HOUR + timedelta(minutes=15))
    snap = snap.model_copy(update={"undecodable_messages": [_unread_amq7472(T0 + 5 * HOUR)]})
    plan = plan_restore(inputs(RecoveryKind.MEDIA, snap, cataloged(0, 1, 2, 3)))
    assert plan.request.object == "APP.REQUEST.QUEUE"
    assert any("newer AMQ7472 did not decode" in n and "DSPMSGD RANGE(AMQ7472)" in n for n in plan.notes)


# --- library --------------------------------------------------------------------------------------------------------


def library_save(saved_at: datetime = T0 + 3 * HOUR + timedelta(minutes=30)) -> LibrarySaveRecord:
    return LibrarySaveRecord(
        host="ibmi1",
        qmgr="TEST",
        qmgr_library=LIB,
        journal="AMQAJRN",
        save_file_library="QGPL",
        save_file="MQLSAVE0",
        saved_at=saved_at,
        verified_at=saved_at,
        attached_receiver=name(3),
        attached_at=T0 + 3 * HOUR,
        oldest_needed_receiver=name(2),
        oldest_needed_at=T0 + 2 * HOUR + timedelta(minutes=10),
        threshold_kb=500,
        run_id="libsave",
        directory="/QIBM/UserData/mqm/qmgrs/TEST",
        directory_save_file="MQLSAVE0D",
    )


def library_inputs(known: list[CatalogedReceiver] | None = None, **extra) -> Inputs:
    extra.setdefault("save_files_on_host", {"QGPL/MQJSAVE0", "QGPL/MQLSAVE0", "QGPL/MQLSAVE0D"})
    known = known if known is not None else cataloged(0, 1, 2, 3, 4)
    return inputs(RecoveryKind.LIBRARY, None, known, library_saves=[library_save()], **extra)


def test_a_lost_library_restores_the_library_save_a_new_generation_journal_and_the_later_receivers():
    plan = plan_restore(library_inputs())
    assert plan.gaps == []
    assert actions(plan) == [
        Action.RESTORE_LIBRARY,
        Action.RESTORE_QMGR_DIRECTORY,
        Action.CREATE_RECEIVER,
        Action.GIVE_RECEIVER_TO_QMQM,
        Action.CREATE_JOURNAL,
        Action.RESTORE_RECEIVER,
        Action.RESTORE_RECEIVER,
        Action.RESTORE_RECEIVER,
        Action.ASSOCIATE_RECEIVERS,
        Action.START_QMGR,
    ]
    assert plan.steps[0].text == (
        "RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF(QGPL/MQLSAVE0) OMITOBJ((QMTEST/AMQAJRN *JRN) (QMTEST/AMQA* *JRNRCV))"
    )
    # Restore generation 1: no name of it can clash with a receiver still to be restored.
    assert plan.steps[1].text == ("RST DEV('/QSYS.LIB/QGPL.LIB/MQLSAVE0D.FILE') OBJ(('/QIBM/UserData/mqm/qmgrs/TEST'))")
    assert plan.steps[2].text == "CRTJRNRCV JRNRCV(QMTEST/AMQA100005) THRESHOLD(500) TEXT('MQM LOCAL JOURNAL RECEIVER')"
    assert plan.steps[4].text == "CRTJRN JRN(QMTEST/AMQAJRN) JRNRCV(QMTEST/AMQA100005) MNGRCV(*SYSTEM) DLTRCV(*NO)"
    assert plan.restored_receivers == [name(4), name(3), name(2)]
    assert plan.restore_point == T0 + 5 * HOUR  # the newest catalogued receiver's detach


def test_the_receiver_attached_during_the_save_comes_from_the_library_save_when_nothing_later_was_saved():
    # Receivers 0-2 were in the library save (detached), 3 was attached during it; nothing was saved since.
    plan = plan_restore(library_inputs(cataloged(0, 1, 2, savf=("QGPL", "MQLSAVE0"))))
    assert plan.gaps == []
    assert plan.restored_receivers == [name(3), name(2)]
    assert plan.steps[5].args["save_file"] == "MQLSAVE0"
    assert plan.restore_point == library_save().saved_at


def test_the_library_save_copy_cannot_bridge_to_later_receivers():
    # 4 was saved later but 3's full save is missing: 3's entries after the library save are in no save.
    known = cataloged(0, 1, 2, savf=("QGPL", "MQLSAVE0")) + cataloged(4)
    plan = plan_restore(library_inputs(known))
    assert not plan.executable
    (gap,) = [g for g in plan.gaps if name(3) in g.obj]
    assert "after the library save" in gap.problem


def test_a_library_plan_is_refused_while_the_library_is_on_the_host():
    plan = plan_restore(
        inputs(RecoveryKind.LIBRARY, snapshot(LIVE), cataloged(0, 1, 2, 3, 4), library_saves=[library_save()])
    )
    (gap,) = plan.gaps
    assert "restore over a live queue manager" in gap.problem


def test_a_library_save_whose_file_is_gone_is_a_gap():
    plan = plan_restore(library_inputs(save_files_on_host={"QGPL/MQJSAVE0"}))
    (gap,) = plan.gaps
    assert "QGPL/MQLSAVE0" in gap.problem and plan.steps == []


def test_cluster_refresh_within_90_days_is_repos_no_on_this_queue_manager_only():
    from mqjournal.fleet import ClusterConfig

    plan = plan_restore(
        library_inputs(
            clusters=[ClusterConfig(name="CLUS1", full_repository=False)], now=T0 + 5 * HOUR + timedelta(days=10)
        )
    )
    assert plan.steps[-1].text == "RFRMQMCL CLUSTER('CLUS1') MQMNAME('TEST') REPOS(*NO)"
    assert actions(plan)[-2:] == [Action.START_QMGR, Action.REFRESH_CLUSTER]


def test_beyond_90_days_a_full_repository_is_demoted_refreshed_with_repos_yes_and_promoted():
    from mqjournal.fleet import ClusterConfig

    plan = plan_restore(
        library_inputs(
            clusters=[ClusterConfig(name="CLUS1", full_repository=True)], now=T0 + 5 * HOUR + timedelta(days=100)
        )
    )
    assert [s.text for s in plan.steps[-3:]] == [
        "CHGMQM MQMNAME('TEST') REPOS(' ')",
        "RFRMQMCL CLUSTER('CLUS1') MQMNAME('TEST') REPOS(*YES)",
        "CHGMQM MQMNAME('TEST') REPOS('CLUS1')",
    ]
    assert any("beyond the 90-day repository expiry" in n for n in plan.notes)


# --- the plan as data ------------------------------------------------------------------------------------------


def test_a_plan_survives_json_and_rebuilds_the_same_commands():
    snap = snapshot(LIVE, [amq7432(T0 + 2 * HOUR + timedelta(minutes=30))])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, cataloged(0, 1, 2, 3)))
    again = RecoveryPlan.model_validate_json(plan.model_dump_json())
    assert again == plan
    assert [s.command() for s in again.steps] == [s.command() for s in plan.steps]


def test_an_entry_in_a_receiver_nobody_saved_is_a_gap_naming_its_neighbours():
    snap = snapshot(LIVE, [amq7432(T0 + 2 * HOUR + timedelta(minutes=30))])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, cataloged(0, 1, 3, 4)))
    (gap,) = plan.gaps
    assert f"between QMTEST/{name(1)}" in gap.problem and f"and QMTEST/{name(3)}" in gap.problem
    assert not plan.executable


def test_a_library_saves_ifs_part_gone_from_the_host_with_no_store_is_a_gap_not_a_plan():
    plan = plan_restore(library_inputs(save_files_on_host={"QGPL/MQJSAVE0", "QGPL/MQLSAVE0"}))
    assert not plan.executable
    (gap,) = [g for g in plan.gaps if "IFS directory" in g.obj]
    assert "QGPL/MQLSAVE0D" in gap.problem and "no backup store was given" in gap.problem
    assert not any(s.action is Action.RESTORE_QMGR_DIRECTORY for s in plan.steps)
