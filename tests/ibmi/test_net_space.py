"""Net space, said twice about one run: the approval gate estimates it before the save (receivers to save, compressed
as the policy's DTACPR is expected to), the run report counts it after (the save files' real sizes on the host). On
a partition whose save files are real size and compress as expected, the two agree (issue #28: the gate showed
-176.6 MB net where the report of the same run showed save files of 2.6 KB)."""

from __future__ import annotations

import pytest

from mqjournal import rules
from mqjournal.ibmi.collector import collect
from mqjournal.planrows import PlannedQueueManager
from mqjournal.policy import Policy
from mqjournal.report import planned_net, planned_save_file_bytes
from mqjournal.runreport import RunFacts, render_markdown
from mqjournal.sim import savfdata
from mqjournal.sizefmt import signed_size, size

KEY = "ibmi1/TEST/QMTEST"


def plan(executor, policy: Policy) -> tuple[PlannedQueueManager, list[str], list[str]]:
    """The gate's row for TEST, and what it saves and deletes (as rules.plan_queue_manager plans them)."""
    snap = collect(executor.session, executor.target, host="ibmi1", run_id="run1", tz=executor.tz)
    qm, rows = rules.plan_queue_manager(snap, [snap], as_of=snap.collected_at, policy=policy)
    to_save = [r.receiver for r in rows if r.action in rules.SAVES]
    to_delete = [r.receiver for r in sorted(rows, key=lambda r: r.chain_position or 0) if r.action in rules.DELETES]
    return qm, to_save, to_delete


@pytest.mark.parametrize("compression", ["*NO", "*LOW", "*HIGH"])
def test_the_gate_and_the_report_of_one_run_agree_on_net_space(sim_fleet, executor, compression):
    with sim_fleet.host().state() as partition:
        partition.save_file_size_factor = 1.0  # save files as large as IBM i makes them
    policy = Policy(save_compression=compression)
    row, to_save, to_delete = plan(executor, policy)
    assert row.bytes_to_save > 1_000_000 and to_delete

    saved = executor.save(to_save, save_library="QGPL", policy=policy)
    deleted = executor.delete(to_delete, policy=policy)
    facts = RunFacts(
        run_id="run1",
        outcome="approved",
        queue_managers=[row],
        saves=[saved],
        deletes=[deleted],
    )

    written = sum(saved.save_file_bytes.values())
    assert set(saved.save_file_bytes) == set(saved.save_files) and written > 0
    # The save files are as the gate expected, up to the records that describe each save and the receivers' sizes,
    # which the plan reads in whole units of JOURNAL_RECEIVER_INFO.SIZE (rounded up).
    slack = 0.01 * written + 16 * savfdata.RECORD_BYTES * len(saved.save_files)
    assert abs(planned_save_file_bytes(row, policy) - written) <= slack
    report_net = deleted.freed_bytes - written
    assert saved.target.key == deleted.target.key == KEY
    assert deleted.freed_bytes == row.bytes_freed
    assert abs(planned_net(row, policy) - report_net) <= slack
    assert f"save files written {size(written)}: net {signed_size(report_net)}" in render_markdown(facts)
