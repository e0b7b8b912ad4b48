"""A message whose replacement data does not decode by the layout the partition declares (issue #29): the planner
raises MESSAGE_UNDECODABLE naming the message ID and the DSPMSGD that shows its format, and nothing else changes.
"""

from __future__ import annotations

from datetime import timedelta

from mqjournal.explain import alert_explanations
from mqjournal.snapshot import UndecodableMessage
from mqjournal.vocabulary import Alert
from tests.plan.builders import HOUR, T0, chain, names, snapshot
from tests.plan.test_rules import actions, only_qm, plan

CHAIN = chain(names(1, 6), saved=tuple(names(1, 5)))
NOW = T0 + 5 * HOUR + timedelta(minutes=30)


def _unread(msg_id: str, file: str = "QMQM/AMQMSG", minutes: int = 10) -> UndecodableMessage:
    return UndecodableMessage(
        message_id=msg_id,
        sent_at=NOW - timedelta(minutes=minutes),
        problem="&3 (at) reads 2062-01-01 00:00:00+00:00, not a time between 1990 and now",
        dspmsgd=f"DSPMSGD RANGE({msg_id}) MSGF({file})",
    )


def test_an_undecodable_message_raises_the_alert_naming_its_id_and_dspmsgd():
    unread = [_unread("AMQ7460", minutes=20), _unread("CPI70E3", "QSYS/QCPFMSG"), _unread("AMQ7460")]
    snap = snapshot(CHAIN, oldest="AMQA000004", collected_at=NOW).model_copy(update={"undecodable_messages": unread})
    qm = only_qm(plan(snap, as_of=NOW))
    assert Alert.MESSAGE_UNDECODABLE in qm.alerts
    assert qm.undecodable_messages == (
        "AMQ7460: DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG)",
        "CPI70E3: DSPMSGD RANGE(CPI70E3) MSGF(QSYS/QCPFMSG)",
    )
    [line] = [line for line in alert_explanations(qm) if line.startswith("MESSAGE_UNDECODABLE")]
    assert "AMQ7460, CPI70E3" in line
    assert "DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG); DSPMSGD RANGE(CPI70E3) MSGF(QSYS/QCPFMSG)" in line


def test_an_undecodable_message_neither_blocks_nor_unblocks_anything():
    unblocked = snapshot(CHAIN, oldest="AMQA000004", collected_at=NOW)
    blocked = snapshot(CHAIN, oldest="AMQA000004", collected_at=NOW, amqjrninf=None)
    for snap in (unblocked, blocked):
        said = snap.model_copy(update={"undecodable_messages": [_unread("AMQ7462")]})
        without, with_it = plan(snap, as_of=NOW), plan(said, as_of=NOW)
        assert actions(with_it) == actions(without)
        before, after = only_qm(without), only_qm(with_it)
        assert (after.blocked, after.block_reason, after.oldest_needed) == (
            before.blocked,
            before.block_reason,
            before.oldest_needed,
        )
        assert set(after.alerts) - set(before.alerts) == {Alert.MESSAGE_UNDECODABLE}
    assert only_qm(plan(blocked, as_of=NOW)).blocked and not only_qm(plan(unblocked, as_of=NOW)).blocked


def test_a_snapshot_without_undecodable_messages_raises_no_alert():
    qm = only_qm(plan(snapshot(CHAIN, oldest="AMQA000004", collected_at=NOW), as_of=NOW))
    assert Alert.MESSAGE_UNDECODABLE not in qm.alerts and qm.undecodable_messages == ()
