"""The safety proof (issue #12): mqjournal never loses a receiver and never leaves a command unrecorded.

- `invariants.py`: the checker, against the simulator's own truth, the audit log and the catalog;
- `scenario.py`: one simulated partition per case, reached as the DAG reaches it, and the steps under test;
- `faults.py` / `worker.py`: the faults injected per command (and a worker process to SIGKILL);
- `test_fault_matrix.py`: every command of the save, delete and recovery paths x every fault kind;
- `test_stateful.py`: host events, mqjournal steps and faults interleaved by hypothesis;
- `linux_invariants.py`, `linux_scenario.py`, `test_linux_stateful.py`: the same for a Linux queue manager's linear
  log (#32): no extent MQ needs is lost, nothing is let go without a proven copy, every command is recorded;
- `linux_matrix.py`, `linux_worker.py`, `test_linux_fault_matrix.py`: the Linux fault matrix, every command and SFTP
  transfer of the Linux collect, archive, release, startup and media recovery steps (from each step's fault-free
  audit log), in Archive and Manual mode, times every fault kind that makes sense for it, then a rerun and the
  invariants; its session line: `linux fault matrix: N cases, N held, 0 extents lost, 0 unrecorded commands`.
"""
