"""Which earlier collections the plan job reads: only those a rule looks at, so its cost grows with the fleet, not
with how long mqjournal has been in use.

The plan's history rules (STARTUP_RECOVERY_STUCK, MEDIA_RECOVERY_STUCK: mqjournal.rules.recovery_stuck) look at a
queue manager's newest `stuck_after_runs` collections, the current one included; nothing else reads history. The
snapshots folder holds one partition per run (`run_id=...`), and the DAG names each file after its queue manager
(`<host>__<library>.jsonl`), so the partitions needed are found from folder listings alone, newest first, without
opening a file; older partitions are never listed.
"""

from __future__ import annotations

import os
from pathlib import Path

SUFFIX = ".jsonl"
SEPARATOR = "__"


def queue_manager_of(file_name: str) -> tuple[str, str] | None:
    """(host, library) of a DAG snapshot file; None for any other file (the CLI's snapshots.jsonl holds several)."""
    if not file_name.endswith(SUFFIX):
        return None
    host, sep, library = file_name.removesuffix(SUFFIX).rpartition(SEPARATOR)
    return (host, library) if sep and host and library else None


def _files(partition: Path) -> list[str]:
    with os.scandir(partition) as entries:
        return [e.name for e in entries if e.is_file() and e.name.endswith(SUFFIX)]


def partitions_needed(snapshots: Path, current: Path, runs: int) -> list[Path]:
    """The run partitions under `snapshots`, other than `current`, that hold one of the newest `runs` earlier
    collections of a queue manager collected in `current`, newest first (by the folder's modification time, which
    a collect's write sets). A partition whose files do not say which queue managers they hold is read whenever the
    walk reaches it: when unsure, the plan sees more, never less."""
    earlier = [p for p in snapshots.glob("run_id=*") if p.is_dir() and p.resolve() != current.resolve()]
    wanted = {key for name in _files(current) if (key := queue_manager_of(name)) is not None}
    if not wanted:  # a current run the names do not describe: every earlier collection may matter
        return sorted(earlier)
    seen = dict.fromkeys(wanted, 0)
    partitions = sorted(earlier, key=lambda p: p.stat().st_mtime, reverse=True)
    needed: list[Path] = []
    for partition in partitions:
        if all(count >= runs for count in seen.values()):
            break
        keys = [queue_manager_of(name) for name in _files(partition)]
        if any(k is None or seen.get(k, runs) < runs for k in keys):
            needed.append(partition)
            for k in keys:
                if k in seen:
                    seen[k] += 1
    return needed
