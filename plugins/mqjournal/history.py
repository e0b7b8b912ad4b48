"""Which earlier collections the plan job reads: only those a rule looks at, so its cost grows with the fleet, not
with how long mqjournal has been in use.

The plan's history rules (STARTUP_RECOVERY_STUCK, MEDIA_RECOVERY_STUCK: mqjournal.rules.recovery_stuck) look at a
queue manager's newest `stuck_after_runs` collections, the current one included; nothing else reads history. The
snapshots folder holds one partition per run (`run_id=...`), and the DAG names each file after its queue manager
(`<host>__<library>.jsonl`), so the partitions needed are found from listings alone, newest first, without opening
a file. Linux queue managers' snapshots have a folder of their own, one file per host and run (`<host>.jsonl`), and
their stuck alerts look at the newest linuxmq.plan.STUCK_AFTER_RUNS earlier ones: the same walk, by host
(`host_of`).

How new a partition is: in a folder, the partition folder's modification time, which a collect's write (a rename
into it) sets: one stat per partition, none per file, so a year of daily runs costs 365 stats, not 365 x the
fleet's files. An object store has no folders: there a partition is as new as its newest file, which takes one
listing of each earlier partition (mqjournal.datafolder). No file is read either way.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from pathlib import Path
from typing import NamedTuple

from mqjournal.datafolder import DataPath, file_modified

SUFFIX = ".jsonl"
SEPARATOR = "__"


def queue_manager_of(file_name: str) -> tuple[str, str] | None:
    """(host, library) of a DAG snapshot file; None for any other file (the CLI's snapshots.jsonl holds several)."""
    if not file_name.endswith(SUFFIX):
        return None
    host, sep, library = file_name.removesuffix(SUFFIX).rpartition(SEPARATOR)
    return (host, library) if sep and host and library else None


class PlanInputs(NamedTuple):
    """What one run's plan reads: the run's collections, and the earlier ones its rules need."""

    snapshots: DataPath | None
    """The run's IBM i snapshots; None when it collected none (a Linux-only fleet)."""
    history: list[DataPath]
    """Earlier IBM i run partitions (`partitions_needed`)."""
    linux_snapshots: DataPath | None
    """The run's Linux snapshots; None when it collected none."""
    linux_history: list[DataPath]
    """Earlier Linux run partitions (`partitions_needed` by `host_of`)."""


def host_of(file_name: str) -> str | None:
    """The host of a Linux snapshot file (`<host>.jsonl`: each of the host's queue managers); None for another file."""
    host = file_name.removesuffix(SUFFIX)
    return host if file_name.endswith(SUFFIX) and host else None


def _files(partition: DataPath) -> list[str]:
    """The partition's collection files."""
    return [entry.name for entry in partition.iterdir() if entry.name.endswith(SUFFIX) and entry.is_file()]


def _written(partition: DataPath) -> float:
    """When the partition was last written to: its folder's time, or on an object store its newest file's."""
    if isinstance(partition, Path):
        return partition.stat().st_mtime
    times = [file_modified(entry) for entry in partition.iterdir() if entry.name.endswith(SUFFIX)]
    return max((t for t in times if t is not None), default=0.0)


def partitions_needed(
    snapshots: DataPath,
    current: DataPath,
    runs: int,
    *,
    key_of: Callable[[str], Hashable | None] = queue_manager_of,
) -> list[DataPath]:
    """The run partitions under `snapshots`, other than `current`, that hold one of the newest `runs` earlier
    collections of a queue manager collected in `current`, newest first (by when each was last written). A partition
    whose files do not say which queue managers they hold is read whenever the walk reaches it: when unsure, the plan
    sees more, never less. Only the partitions the walk reaches are listed. `key_of` says what a file holds: an IBM i
    queue manager (the default), or a Linux host's (`host_of`)."""
    earlier = [p for p in snapshots.glob("run_id=*") if p.is_dir() and p.name != current.name]
    wanted = {key for name in _files(current) if (key := key_of(name)) is not None}
    if not wanted:  # a current run the names do not describe: every earlier collection may matter
        return sorted(earlier, key=lambda p: p.name)
    seen = dict.fromkeys(wanted, 0)
    partitions = sorted(earlier, key=_written, reverse=True)
    needed: list[DataPath] = []
    for partition in partitions:
        if all(count >= runs for count in seen.values()):
            break
        keys = [key_of(name) for name in _files(partition)]
        if any(k is None or seen.get(k, runs) < runs for k in keys):
            needed.append(partition)
            for k in keys:
                if k in seen:
                    seen[k] += 1
    return needed
