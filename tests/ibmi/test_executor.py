"""Saving and deleting receivers on a simulated partition: verified, catalogued, idempotent, never unsafe."""

from __future__ import annotations

from datetime import UTC, datetime

from mqjournal.names import receiver_save_text, save_file_names
from mqjournal.policy import Policy
from mqjournal.sim import mq
from tests.ibmi.executing import planned, receivers_on_host


def test_save_verifies_on_the_host_and_records_the_save_file_in_the_catalog(sim_fleet, executor):
    to_save, _ = planned(executor)
    result = executor.save(to_save, save_library="QGPL")
    assert sorted(result.saved) == sorted(to_save) and result.not_saved == []
    (save_file,) = result.save_files
    on_host = receivers_on_host(sim_fleet)
    assert all(on_host[name].status == "SAVED" for name in to_save)
    assert save_file in sim_fleet.host().partition.save_files
    for name in to_save:
        (record,) = executor.catalog.saves_of("ibmi1", "QMTEST", name)
        assert f"{record.save_file_library}/{record.save_file}" == save_file
        assert record.attached_at == on_host[name].attached_at


def test_a_rerun_of_save_repeats_nothing(sim_fleet, executor):
    to_save, _ = planned(executor)
    executor.save(to_save, save_library="QGPL")
    files = set(sim_fleet.host().partition.save_files)
    again = executor.save(to_save, save_library="QGPL")
    assert sorted(again.already_saved) == sorted(to_save) and again.saved == []
    assert set(sim_fleet.host().partition.save_files) == files


def test_the_attached_receiver_is_not_saved(executor):
    attached = next(r.name for r in executor.live().receivers if r.status == "ATTACHED")
    result = executor.save([attached], save_library="QGPL")
    assert result.saved == [] and result.not_saved[0][0] == attached


def test_delete_removes_the_approved_receivers_oldest_first_and_records_them(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    result = executor.delete(to_delete, policy=Policy())
    assert result.deleted == to_delete and result.kept == [] and result.failed is None
    assert not set(to_delete) & set(receivers_on_host(sim_fleet))
    assert [d.receiver for d in executor.catalog.deletions_for("ibmi1", "QMTEST")] == to_delete


def test_a_rerun_of_delete_skips_what_is_gone_and_deletes_nothing_more(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    executor.delete(to_delete, policy=Policy())
    before = set(receivers_on_host(sim_fleet))
    again = executor.delete(to_delete, policy=Policy())
    assert sorted(again.already_gone) == sorted(to_delete) and again.deleted == []
    assert set(receivers_on_host(sim_fleet)) == before


def test_a_receiver_without_a_verified_save_in_the_catalog_is_kept(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    # Saved on the host by someone else: the catalog cannot prove where it is.
    shell = sim_fleet.connect()
    shell.cl("CRTSAVF FILE(QGPL/OTHER)")
    shell.cl(f"SAVOBJ OBJ({' '.join(to_save)}) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/OTHER)")
    result = executor.delete(to_delete, policy=Policy())
    assert result.deleted == []
    assert result.kept[0] == (to_delete[0], "not verifiably saved: no verified save in the catalog")
    assert set(to_delete) <= set(receivers_on_host(sim_fleet))


def test_a_receiver_needed_again_since_the_plan_survives(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    # Between plan and approval the third receiver becomes needed again (a state MQ cannot reach, injected): the next
    # checkpoint moves AMQJRNINF back to it, and the executor must follow the live partition, not its plan.
    third = sim_fleet.host().partition.receivers[f"QMTEST/{to_delete[2]}"]
    with sim_fleet.host().state() as partition:
        mq.impossible_old_unit_of_work(partition, partition.queue_manager("TEST"), third)
    assert sim_fleet.connect().cl("RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) MQMNAME(TEST)")[0] == 0

    result = executor.delete(to_delete, policy=Policy())
    assert result.deleted == to_delete[:2]
    assert result.kept[0] == (to_delete[2], "not deletable now (NEEDED_SAVED)")
    assert set(to_delete[2:]) <= set(receivers_on_host(sim_fleet))


def test_an_approval_that_skips_the_oldest_receiver_deletes_nothing(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    result = executor.delete(to_delete[1:], policy=Policy())
    assert result.deleted == []
    assert result.kept[0][1] == f"{to_delete[0]}, older in the chain, is not approved for deletion"


def test_a_failed_dltjrnrcv_stops_the_run(sim_fleet, executor):
    from mqjournal.sim.model import CommandFault

    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    with sim_fleet.host().state() as partition:
        partition.faults.commands.append(
            CommandFault(
                pattern=f"DLTJRNRCV JRNRCV\\(QMTEST/{to_delete[1]}",
                msg_id="CPF9803",
                tokens=["", to_delete[1], "QMTEST"],
            )
        )
    result = executor.delete(to_delete, policy=Policy())
    assert result.deleted == to_delete[:1]
    assert result.failed[0] == to_delete[1] and "CPF9803" in result.failed[1]
    assert set(to_delete[1:]) <= set(receivers_on_host(sim_fleet))


def test_deleted_receivers_restore_from_their_catalogued_save_file_and_strmqm_succeeds(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    executor.delete(to_delete, policy=Policy())
    shell = sim_fleet.connect()
    for name in to_delete:
        (record,) = executor.catalog.saves_of("ibmi1", "QMTEST", name)
        status, _out, err = shell.cl(
            f"RSTOBJ OBJ({name}) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({record.save_file_library}/{record.save_file})"
        )
        assert status == 0, err
    with sim_fleet.host().state() as partition:
        mq.crash(partition, partition.queue_manager("TEST"))
    assert shell.cl("STRMQM MQMNAME(TEST)")[0] == 0


def test_a_save_file_is_named_for_its_queue_manager_and_day_and_its_text_names_the_receivers(sim_fleet, executor):
    to_save, _ = planned(executor)
    result = executor.save(to_save, save_library="QGPL")
    (path,) = result.save_files
    save_file = sim_fleet.host().partition.save_files[path]
    today = executor.tz.local(datetime.now(UTC)).date()  # the partition's day
    assert save_file.name in save_file_names("QMTEST", today)
    assert save_file.text == receiver_save_text("TEST", to_save[0], to_save[-1], today)


def test_the_save_compresses_as_the_policy_says(sim_fleet, executor):
    to_save, _ = planned(executor)
    result = executor.save(to_save, save_library="QGPL", policy=Policy(save_compression="*HIGH"))
    (save_file,) = result.save_files
    sent = [e.command for e in sim_fleet.service.received.entries() if "SAVOBJ" in e.command]
    assert len(sent) == 1 and "DTACPR(*HIGH)" in sent[0]
    assert sim_fleet.host().partition.save_files[save_file].compression == "*HIGH"


def test_without_a_policy_the_save_uses_the_default_compression(sim_fleet, executor):
    to_save, _ = planned(executor)
    (save_file,) = executor.save(to_save, save_library="QGPL").save_files
    assert sim_fleet.host().partition.save_files[save_file].compression == Policy().save_compression == "*LOW"


def test_after_savobj_the_save_reads_the_receivers_again_and_not_the_whole_state(sim_fleet, executor):
    """What proves a save is the save file's object list and the receivers as the host shows them after SAVOBJ: the
    messages, AMQJRNINF and recovery points of a whole collect read are not read again for it (each one a statement
    over the partition's message queues, on the host's CPU)."""
    to_save, _ = planned(executor)
    sim_fleet.service.received.clear()
    result = executor.save(to_save, save_library="QGPL")
    assert sorted(result.saved) == sorted(to_save)
    sent = [e.command for e in sim_fleet.service.received.entries()]
    savobj = next(i for i, c in enumerate(sent) if "SAVOBJ" in c)
    reread = next(c for c in sent[savobj:] if "JOURNAL_RECEIVER_INFO" in c)
    assert "MESSAGE_QUEUE_INFO" not in reread and "AMQJRNINF" not in reread
    # The whole state is read once, before the save decides anything.
    assert sum("MESSAGE_QUEUE_INFO" in c for c in sent) == 1


def test_a_receiver_the_reread_shows_unsaved_is_not_counted_saved(sim_fleet, executor, monkeypatch):
    """The narrower read still decides: a receiver the host shows not saved after SAVOBJ is not recorded as saved."""
    from mqjournal.ibmi.context import HostContext

    to_save, _ = planned(executor)
    shown = HostContext.receivers_now

    def unsaved_first(self):
        receivers = shown(self)
        return [r.model_copy(update={"saved_at": None}) if r.name == to_save[0] else r for r in receivers]

    monkeypatch.setattr(HostContext, "receivers_now", unsaved_first)
    result = executor.save(to_save, save_library="QGPL")
    assert to_save[0] not in result.saved and sorted(result.saved) == sorted(to_save[1:])
    assert dict(result.not_saved)[to_save[0]].endswith("holds it but the host does not show it fully saved")
    assert executor.catalog.saves_of("ibmi1", "QMTEST", to_save[0]) == []


def _refuse_dltjrnrcv(sim_fleet, receiver: str, escape: list[str], *diagnostics: list[str]) -> None:
    from mqjournal.sim.model import CommandFault

    with sim_fleet.host().state() as partition:
        partition.faults.commands.append(
            CommandFault(
                pattern=f"DLTJRNRCV JRNRCV\\(QMTEST/{receiver}",
                msg_id=escape[0],
                tokens=escape[1:],
                diagnostics=list(diagnostics),
            )
        )


def _delete_operation(executor, receiver: str):
    return next(o for o in executor.catalog.operations("ibmi1") if o.kind == "delete" and o.receivers == receiver)


def _audited_dltjrnrcv(executor, receiver: str) -> dict:
    from mqjournal.ibmi.audit import read_audit

    return next(
        r for r in read_audit(executor.session.audit.path) if f"DLTJRNRCV JRNRCV(QMTEST/{receiver})" in r["command"]
    )


def test_a_dltjrnrcv_refused_with_a_diagnostic_then_cpf2125_keeps_the_receiver_and_says_why_and_what_to_do(
    sim_fleet, executor
):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    refused = to_delete[1]
    _refuse_dltjrnrcv(sim_fleet, refused, ["CPF2125"], ["CPF7024", refused, "QMTEST"])
    result = executor.delete(to_delete, policy=Policy())

    assert result.deleted == to_delete[:1] and set(to_delete[1:]) <= set(receivers_on_host(sim_fleet))
    (receiver, why) = result.failed
    assert receiver == refused and result.kept[0] == (refused, f"DLTJRNRCV failed: {why}")
    assert f"QMTEST/{refused}" in why and "an older receiver of its chain is still on the host" in why
    # The diagnostic gives the reason; the escape only sums up and is not what the operator reads.
    assert f"CPF7024: Receiver {refused} in QMTEST not deleted" in why and "No objects deleted" not in why
    assert "What to do: let the next run delete the older receivers first" in why
    operation = _delete_operation(executor, refused)
    assert (operation.state, operation.detail) == ("failed", why)
    assert _audited_dltjrnrcv(executor, refused)["msg_ids"] == ["CPF7024", "CPF2125"]


def test_a_dltjrnrcv_refused_with_message_ids_nobody_knows_is_still_a_refusal_that_keeps_the_receiver(
    sim_fleet, executor
):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    refused = to_delete[0]
    # Neither ID means anything to the client: the non-zero exit alone makes it a refusal.
    _refuse_dltjrnrcv(sim_fleet, refused, ["CPF2117", "", "", "JRNRCV", "0", "1"], ["CPF3202", refused, "QMTEST"])
    result = executor.delete(to_delete, policy=Policy())

    assert result.deleted == [] and set(to_delete) <= set(receivers_on_host(sim_fleet))
    (receiver, why) = result.failed
    assert receiver == refused and [name for name, _ in result.kept] == to_delete
    assert why.startswith(f"IBM i refused to delete QMTEST/{refused}, which is kept. It said: CPF3202: ")
    assert "What to do: read the messages above" in why and "run the delete step again" in why
    assert _delete_operation(executor, refused).state == "failed"
    assert not executor.catalog.deletions_for("ibmi1", "QMTEST")
