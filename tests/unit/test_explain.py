"""Every receiver says why it has its action, naming the point that holds it; every alert says what to do."""

from __future__ import annotations

from datetime import timedelta

from mqjournal import rules
from mqjournal.explain import alert_explanations, explanation, media_recovery_forms, why
from mqjournal.planrows import PlannedQueueManager, PlannedReceiver
from tests.plan.builders import HOUR, T0, chain, changed, names, snapshot

BILL = names(0, 62)
PAY = names(0, 60)
MEDIA_AT = T0 + 24 * HOUR + timedelta(seconds=5)  # 2026-11-21 08:00:05 +01:00, AMQA000024's first minute
STARTUP_AT = T0 + 24 * HOUR + timedelta(seconds=9)


def _billing():
    """BILLING: a damaged queue (AMQ7472) holds AMQ7462 at AMQA000024; receivers saved up to AMQA000049."""
    receivers = chain(BILL, library="QMBILL01", saved=tuple(BILL[:50]))
    return snapshot(
        receivers, oldest=BILL[24], needed_at=MEDIA_AT, host="ibmi-prod2", qmgr="BILLING", library="QMBILL01",
        startup=BILL[61], startup_at=T0 + 61 * HOUR + timedelta(minutes=29), media=BILL[24], media_at=MEDIA_AT,
    )  # fmt: skip


def _payroll():
    """PAYROLL: a unit of work open since AMQA000024's time holds AMQ7460; nothing saved yet."""
    receivers = chain(PAY, library="QMPAYROLL")
    return snapshot(
        receivers, oldest=PAY[24], needed_at=STARTUP_AT, host="ibmi-prod1", qmgr="PAYROLL", library="QMPAYROLL",
        startup=PAY[24], startup_at=STARTUP_AT, media=PAY[59], media_at=T0 + 59 * HOUR + timedelta(minutes=29),
        collected_at=T0 + 61 * HOUR + timedelta(minutes=30),
    )  # fmt: skip


# What the lead's plan columns hold for these two (set here, so the tests read the same before and after they land).
_EXTRA = {
    "BILLING": {
        "holding_point": "AMQ7462", "holding_point_at": MEDIA_AT, "alerts": ["MEDIA_POINT_OLD"],
        "damaged_objects": ["APP.REQUEST.QUEUE (QLOCAL)"],
    },
    "PAYROLL": {"holding_point": "AMQ7460", "holding_point_at": STARTUP_AT, "alerts": ["STARTUP_POINT_OLD"]},
}  # fmt: skip


def fleet_rows() -> tuple[list[PlannedQueueManager], list[PlannedReceiver]]:
    """The plan rows of BILLING and PAYROLL as the Spark job writes them and read_plan reads them back."""
    snaps = [_billing(), _payroll()]
    as_of = max(s.collected_at for s in snaps)
    plan = rules.plan_fleet(snaps, as_of=as_of)
    times = {(s.qmgr, r.name): r for s in snaps for r in s.receivers}
    qms = []
    for q in plan.queue_managers:
        extra = _EXTRA[q.qmgr]
        age = int((as_of - extra["holding_point_at"]).total_seconds())
        qms.append(changed(q, **extra, utc_offset_minutes=60, holding_point_age_seconds=age, collected_at=as_of))
    rows = []
    for r in plan.receivers:
        source = times[(r.qmgr, r.receiver)]
        rows.append(
            changed(r, attached_at=source.attached_at, detached_at=source.detached_at, saved_at=source.saved_at)
        )
    return qms, rows


def _pick(qmgr: str, receiver: str) -> tuple[PlannedReceiver, PlannedQueueManager]:
    qms, rows = fleet_rows()
    q = next(q for q in qms if q.qmgr == qmgr)
    return next(r for r in rows if r.qmgr == qmgr and r.receiver == receiver), q


def test_a_receiver_held_by_a_damaged_object_names_the_media_point_with_its_time_and_age():
    receiver, q = _pick("BILLING", "AMQA000030")
    assert why(receiver, q) == (
        "AMQA000030 kept: needed for media recovery, AMQ7462 point 2026-11-21 08:00:05 +01:00 (37 h ago)"
    )


def test_a_receiver_held_by_an_open_unit_of_work_names_the_startup_point():
    receiver, q = _pick("PAYROLL", "AMQA000030")
    assert why(receiver, q) == (
        "AMQA000030 saved by this run, then kept: needed for startup recovery, AMQ7460 point "
        "2026-11-21 08:00:09 +01:00 (37 h ago)"
    )


def test_receivers_before_the_oldest_needed_say_they_are_not_needed():
    receiver, q = _pick("PAYROLL", "AMQA000003")
    assert why(receiver, q) == (
        "AMQA000003 saved by this run, then deleted once approved: not needed by MQ (older than AMQA000024, the "
        "oldest receiver it needs)"
    )
    saved, billing = _pick("BILLING", "AMQA000003")
    assert why(saved, billing).endswith("the oldest receiver it needs), saved before")


def test_the_attached_receiver_says_so():
    receiver, q = _pick("BILLING", "AMQA000061")
    assert why(receiver, q) == "AMQA000061 kept: the attached receiver, which the journal writes to"


def test_a_retained_receiver_says_when_it_was_detached():
    receiver, q = _pick("BILLING", "AMQA000010")
    retained = changed(receiver, action="keep", reason="RETAINED")
    assert why(retained, q) == (
        "AMQA000010 kept: retention policy: recently detached, or among the newest receivers kept online "
        "(detached 2026-11-20 19:00:00 +01:00 (50 h ago))"
    )


def test_a_blocked_queue_manager_says_why_in_words():
    receiver, q = _pick("BILLING", "AMQA000010")
    blocked = changed(q, block_reason="SNAPSHOT_STALE,CHAIN_BROKEN")
    text = why(changed(receiver, action="keep", reason="BLOCKED"), blocked)
    assert text == (
        "AMQA000010 kept: the queue manager is blocked: its snapshot is older than the policy's "
        "max_snapshot_age_hours; the receiver chain is broken (a sequence gap, or links that disagree)"
    )


def test_receivers_outside_the_chain_and_the_site_backups_reasons_read_as_words():
    receiver, q = _pick("BILLING", "AMQA000010")
    assert "not in the journal's receiver chain" in why(changed(receiver, reason="NOT_IN_CHAIN", action="keep"), q)
    waits = why(changed(receiver, reason="NOT_SAVED_BY_SITE", action="keep"), q)
    assert waits.endswith("not saved by the site's backup yet")
    older = why(changed(receiver, reason="OLDER_NOT_SAVED_BY_SITE", action="keep"), q)
    assert "DLTJRNRCV deletes the oldest first" in older


def test_receivers_kept_for_one_reason_share_one_explanation():
    qms, rows = fleet_rows()
    q = next(q for q in qms if q.qmgr == "BILLING")
    needed = {
        explanation(r, q)
        for r in rows
        if r.qmgr == "BILLING" and r.chain_position is not None and 24 <= r.chain_position < 61
    }
    assert len(needed) == 1


def test_a_plan_written_before_the_holding_point_columns_still_explains():
    receiver, q = _pick("BILLING", "AMQA000030")
    written = q.model_dump().items()
    old = PlannedQueueManager.model_validate(
        {k: v for k, v in written if not k.startswith("holding_point") and k != "utc_offset_minutes"}
    )
    assert why(receiver, old) == "AMQA000030 kept: needed by MQ: AMQA000024 is the oldest receiver it needs"


def test_an_old_startup_point_says_how_to_find_the_unit_of_work():
    _, q = _pick("PAYROLL", "AMQA000030")
    [line] = alert_explanations(q)
    assert line.startswith(
        "STARTUP_POINT_OLD: a unit of work open since 2026-11-21 08:00:09 +01:00 (37 h ago) holds AMQ7460"
    )
    assert "WRKMQMTRN TYPE(*ALL) MQMNAME(PAYROLL)" in line
    assert "DISPLAY CONN(*) TYPE(CONN) WHERE(UOWLOGDA NE ' ') UOWLOGDA UOWLOGTI" in line
    assert "WRKMQMCHST MQMNAME(PAYROLL) WHERE(*INDOUBT *EQ YES)" in line


def test_an_old_startup_point_that_does_not_hold_the_oldest_receiver_is_read_from_the_recovery_points():
    _, q = _pick("BILLING", "AMQA000030")
    [line] = alert_explanations(changed(q, alerts=["STARTUP_POINT_OLD"]))
    assert "open since 2026-11-22 21:29:00 +01:00 (1 min ago)" in line


def test_an_old_media_point_names_the_damaged_object_and_the_rcrmqmobj_for_it():
    _, q = _pick("BILLING", "AMQA000030")
    [line] = alert_explanations(q)
    assert "damaged APP.REQUEST.QUEUE (QLOCAL)" in line
    # AMQ7472 prints QLOCAL; RCRMQMOBJ takes *LCLQ
    assert "RCRMQMOBJ OBJ(APP.REQUEST.QUEUE) OBJTYPE(*LCLQ) MQMNAME(BILLING)" in line
    assert "http" not in line and "](" not in line  # plain text: a Markdown caller names the DAG with a link


def test_an_old_media_point_names_the_recovery_dag_and_what_to_enter_in_its_form():
    _, q = _pick("BILLING", "AMQA000030")
    [line] = alert_explanations(q)
    assert line.endswith(
        "the recovery DAG mq_journal_recovery can do it, restoring first any receiver it needs: trigger it with host "
        '"ibmi-prod2", queue manager "BILLING", kind of recovery "media", damaged object "APP.REQUEST.QUEUE", '
        'object type "*LCLQ".'
    )
    assert media_recovery_forms(q) == [
        {
            "host": "ibmi-prod2",
            "qmgr": "BILLING",
            "kind": "media",
            "object": "APP.REQUEST.QUEUE",
            "object_type": "*LCLQ",
        }
    ]


def test_each_damaged_object_gets_its_own_recovery_run():
    _, q = _pick("BILLING", "AMQA000030")
    two = changed(q, damaged_objects=["APP.REQUEST.QUEUE (QLOCAL)", "APP.REPLY (QALIAS)"])
    [line] = alert_explanations(two)
    assert 'trigger it once per object, with host "ibmi-prod2"' in line
    assert 'damaged object "APP.REQUEST.QUEUE", object type "*LCLQ"; with host "ibmi-prod2"' in line
    assert line.endswith('damaged object "APP.REPLY", object type "*ALSQ".')
    assert [f["object"] for f in media_recovery_forms(two)] == ["APP.REQUEST.QUEUE", "APP.REPLY"]


def test_the_caller_names_the_recovery_dag_its_own_way():
    _, q = _pick("BILLING", "AMQA000030")
    [line] = alert_explanations(q, recovery_dag="[mq_journal_recovery](dags/mq_journal_recovery)")
    assert "the recovery DAG [mq_journal_recovery](dags/mq_journal_recovery) can do it" in line


def test_an_old_media_point_without_a_reported_object_points_to_qmqmmsg():
    _, q = _pick("BILLING", "AMQA000030")
    [line] = alert_explanations(changed(q, damaged_objects=[]))
    assert "DSPMSG MSGQ(QMBILL01/QMQMMSG)" in line
    assert "RCRMQMOBJ OBJ(*ALL) OBJTYPE(*ALL) MQMNAME(BILLING)" in line
    assert line.endswith(
        'trigger it with host "ibmi-prod2", queue manager "BILLING", kind of recovery "media" and the damaged '
        "object's name (empty: the newest AMQ7472's)."
    )


def test_other_alerts_keep_their_vocabulary_text():
    _, q = _pick("BILLING", "AMQA000030")
    assert alert_explanations(changed(q, alerts=["NEXT_RECEIVER_NAME_TAKEN"])) == [
        "NEXT_RECEIVER_NAME_TAKEN: the next receiver name exists: switching will stop (CPI70E3)"
    ]
