"""Work a maintenance run promised and left undone (mqjournal.undone): which step outcomes count, and what the task,
the run's note and the approval gate say of them."""

from __future__ import annotations

from mqjournal.outcomes import DeleteResult, SaveResult
from mqjournal.undone import delete_left_undone, gate_warning, left_undone, note_tail, save_left_undone

PAYROLL = "ibmi1/PAYROLL/QMPAYROLL"
ORDERS = "ibmi1/ORDERS/QMORDERS"
UNREACHABLE = "the backup store at s3://mq-backups is unreachable: connection refused"
NOT_COPIED = f"its save file QGPL/QMPAYR0001 was not copied into the backup store: {UNREACHABLE}"


def store_outage() -> SaveResult:
    """PAYROLL's save as a store outage leaves it: saved on the partition, the copy failed."""
    return SaveResult(
        target=PAYROLL,
        saved=["AMQA000010", "AMQA000011", "AMQA000012"],
        save_files=["QGPL/QMPAYR0001"],
        not_copied=[("QGPL/QMPAYR0001", UNREACHABLE)],
        unproven=[("AMQA000010", NOT_COPIED), ("AMQA000011", NOT_COPIED), ("AMQA000012", NOT_COPIED)],
    )


def test_a_save_whose_copy_failed_left_work_undone_naming_the_save_file_and_the_receivers():
    lines = save_left_undone(store_outage())

    assert lines[0] == f"save file QGPL/QMPAYR0001 not copied into the backup store: {UNREACHABLE}"
    assert lines[1].startswith("3 receivers without a backup off the partition, so not deletable: ")
    assert "AMQA000010-AMQA000012 (3 receivers)" in lines[1]


def test_a_save_that_copied_everything_left_nothing_undone():
    done = SaveResult(target=PAYROLL, saved=["AMQA000010"], save_files=["QGPL/QMPAYR0001"], copied=["k"])

    assert save_left_undone(done) == []


def test_a_receiver_gone_or_attached_at_the_save_is_not_undone_work():
    # The executor leaves the receivers the host moved on from out of `unproven`: only `not_saved` names them.
    moved_on = SaveResult(target=PAYROLL, not_saved=[("AMQA000013", "not on the system")])

    assert save_left_undone(moved_on) == []


def test_a_delete_refused_for_lack_of_proof_and_a_failed_dltjrnrcv_are_undone_work():
    refused = DeleteResult(
        target=PAYROLL,
        kept=[("AMQA000010", "no proven backup: QGPL/QMPAYR0001 has no verified copy in the backup store")],
        unproven=[("AMQA000010", "no proven backup: QGPL/QMPAYR0001 has no verified copy in the backup store")],
        failed=("AMQA000009", "CPF7021: receiver in use"),
    )

    assert delete_left_undone(refused) == [
        "not deleted, no proven backup: AMQA000010: no proven backup: QGPL/QMPAYR0001 has no verified copy in the "
        "backup store",
        "the deletes stopped at AMQA000009: CPF7021: receiver in use",
    ]


def test_a_receiver_kept_because_it_is_needed_again_is_not_undone_work():
    needed = DeleteResult(target=PAYROLL, kept=[("AMQA000010", "not deletable now (NEEDED_STARTUP)")])

    assert delete_left_undone(needed) == []


def test_the_run_lists_what_each_queue_manager_left_undone_and_the_note_names_them():
    undone = left_undone(
        saves=[store_outage(), SaveResult(target=ORDERS)],
        deletes=[DeleteResult(target=ORDERS)],
        not_found=["ibmi2/QMGONE: journal QMGONE/AMQAJRN not found on ibmi2"],
    )

    assert list(undone) == ["ibmi2/QMGONE", "ibmi1/PAYROLL"]
    assert undone["ibmi2/QMGONE"] == [
        "not found, so not collected, saved or deleted: journal QMGONE/AMQAJRN not found on ibmi2"
    ]
    tail = note_tail(undone)
    assert tail.startswith("LEFT UNDONE on 2 queue managers: ibmi2/QMGONE (not found, ")
    assert f"ibmi1/PAYROLL (save file QGPL/QMPAYR0001 not copied into the backup store: {UNREACHABLE}; ...)" in tail


def test_nothing_left_undone_adds_nothing_to_the_note():
    assert note_tail(left_undone(saves=[SaveResult(target=ORDERS)])) == ""


def test_the_note_names_three_queue_managers_and_counts_the_rest():
    undone = {f"ibmi{i}/QM": ["not found, so not collected, saved or deleted: gone"] for i in range(5)}

    assert note_tail(undone).endswith("; and 2 more")


def test_the_gate_warns_above_its_table_of_the_copies_that_failed_and_the_receivers_no_answer_deletes():
    to_delete = {PAYROLL: ["AMQA000010", "AMQA000011"], ORDERS: ["AMQA000100"]}

    block = gate_warning(to_delete, [store_outage(), SaveResult(target=ORDERS)], saves_ran=True)

    assert block.startswith("> **Warning: this run's saves left work undone.**")
    assert f"> - ibmi1/PAYROLL: save file QGPL/QMPAYR0001 was not copied into the backup store: {UNREACHABLE}" in block
    # Only the receivers the gate offers: AMQA000012 is saved, but not planned for deletion.
    assert "> - ibmi1/PAYROLL: not deleted whatever the answer: AMQA000010-AMQA000011 (2 receivers): " in block
    assert "AMQA000012" not in block and "ORDERS" not in block


def test_the_gate_names_a_queue_manager_whose_save_step_failed():
    block = gate_warning({PAYROLL: ["AMQA000010"]}, [], saves_ran=True)

    assert "> - ibmi1/PAYROLL: its save step failed (see the save task's log): of its 1 receiver, only those saved" in (
        block
    )


def test_the_gate_has_no_warning_when_the_saves_copied_everything():
    done = SaveResult(target=PAYROLL, saved=["AMQA000010"], copied=["k"])

    assert gate_warning({PAYROLL: ["AMQA000010"]}, [done], saves_ran=True) == ""
