"""What the trigger forms offer: the fleet file's hosts and host/queue manager pairs, read when the DAG is parsed.

One queue manager name can live on two partitions (ORDERS on ibmi-prod1 and ibmi-prod2), so the forms offer pairs.
A host whose queue managers the fleet file leaves to discovery offers itself only. A fleet file that cannot be read
offers nothing and the DAG still parses: the run's first step then says what is wrong with the file.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import NamedTuple

from mqjournal.airflow.settings import Settings
from mqjournal.fleet import load_fleet

log = logging.getLogger(__name__)


class FleetChoices(NamedTuple):
    hosts: list[str]
    pairs: list[str]  # host/QMGR
    queue_managers: list[str]  # the names, each once
    linux_hosts: list[str]  # the Linux hosts (#32), which only the recovery form offers so far
    linux_queue_managers: list[str]


def fleet_choices(settings: Settings) -> FleetChoices:
    path = settings.fleet_file
    try:
        found = path.stat()
        changed: tuple[int, int] | None = (found.st_mtime_ns, found.st_size)
    except OSError:
        changed = None
    # A DAG file asks once per field: the file is read once per change, not once per field on every parse.
    return _choices(path, changed)


@functools.lru_cache(maxsize=8)
def _choices(path: Path, changed: tuple[int, int] | None) -> FleetChoices:
    try:
        fleet = load_fleet(path)
    except Exception as exc:  # the DAG must parse; select_targets names the problem when a run starts
        log.warning("the trigger forms offer no hosts: the fleet file %s cannot be read (%s)", path, exc)
        return FleetChoices([], [], [], [], [])
    pairs = [f"{h.name}/{q.name}" for h in fleet.hosts for q in h.queue_managers]
    names = sorted({q.name for h in fleet.hosts for q in h.queue_managers})
    linux_names = sorted({q.name for h in fleet.linux_hosts for q in h.queue_managers})
    return FleetChoices([h.name for h in fleet.hosts], pairs, names, [h.name for h in fleet.linux_hosts], linux_names)


def split_choice(choice: str) -> tuple[str | None, str]:
    """`host/QMGR` -> (host, QMGR); a bare `QMGR` -> (None, QMGR): that name on every selected host."""
    host, _, qmgr = choice.rpartition("/")
    return (host or None), qmgr
