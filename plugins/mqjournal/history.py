"""Which earlier collections the plan job reads: only those a rule looks at, so its cost grows with the fleet, not
with how long mqjournal has been in use.

The plan's history rules (STARTUP_RECOVERY_STUCK, MEDIA_RECOVERY_STUCK: mqjournal.rules.recovery_stuck) look at a
queue manager's newest `stuck_after_runs` collections, the current one included; nothing else reads history. The
snapshots folder holds one partition per run (`run_id=...`), and the DAG names each file after its queue manager
(`<host>__<library>.jsonl`), so the partitions needed are found from listings alone, newest first, without opening
a file.

A partition is as new as its newest file: an object store has no folders, so a folder's modification time is no
measure on one, and the same measure serves both kinds of data folder (mqjournal.datafolder). Every earlier
partition's files are listed with their times for that (one listing per partition on an object store); none is read.
"""

from __future__ import annotations

from mqjournal.datafolder import DataPath, file_modified

SUFFIX = ".jsonl"
SEPARATOR = "__"


def queue_manager_of(file_name: str) -> tuple[str, str] | None:
    """(host, library) of a DAG snapshot file; None for any other file (the CLI's snapshots.jsonl holds several)."""
    if not file_name.endswith(SUFFIX):
        return None
    host, sep, library = file_name.removesuffix(SUFFIX).rpartition(SEPARATOR)
    return (host, library) if sep and host and library else None


def _files(partition: DataPath) -> dict[str, float]:
    """The partition's collection files, with when each was last written."""
    found = {}
    for entry in partition.iterdir():
        if entry.name.endswith(SUFFIX) and (time := file_modified(entry)) is not None:
            found[entry.name] = time
    return found


def partitions_needed(snapshots: DataPath, current: DataPath, runs: int) -> list[DataPath]:
    """The run partitions under `snapshots`, other than `current`, that hold one of the newest `runs` earlier
    collections of a queue manager collected in `current`, newest first (by their newest file's modification time,
    which a collect's write sets). A partition whose files do not say which queue managers they hold is read
    whenever the walk reaches it: when unsure, the plan sees more, never less."""
    earlier = [p for p in snapshots.glob("run_id=*") if p.is_dir() and p.name != current.name]
    wanted = {key for name in _files(current) if (key := queue_manager_of(name)) is not None}
    if not wanted:  # a current run the names do not describe: every earlier collection may matter
        return sorted(earlier, key=lambda p: p.name)
    files = {p.name: _files(p) for p in earlier}
    seen = dict.fromkeys(wanted, 0)
    partitions = sorted(earlier, key=lambda p: max(files[p.name].values(), default=0.0), reverse=True)
    needed: list[DataPath] = []
    for partition in partitions:
        if all(count >= runs for count in seen.values()):
            break
        keys = [queue_manager_of(name) for name in files[partition.name]]
        if any(k is None or seen.get(k, runs) < runs for k in keys):
            needed.append(partition)
            for k in keys:
                if k in seen:
                    seen[k] += 1
    return needed
