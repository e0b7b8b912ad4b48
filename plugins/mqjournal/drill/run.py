"""A restore drill run: the catalog's copies as candidates, the sample, each chosen copy drilled on its partition and
its outcome recorded in the catalog (`Catalog.record_drill`: a pass on a claimed copy proves it, `restore_drill`; a
failure leaves the copy proving nothing). No Airflow here: the DAG's steps (mqjournal.airflow.drill) and tests call
these."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from datetime import UTC, datetime

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog, DrillRecord, StoredObject
from mqjournal.drill.partition import DrillResult, drill_copy
from mqjournal.drill.sampling import Candidate, Rule, Sample, choose, previous_run_keys
from mqjournal.errors import MqJournalError
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.sizefmt import size
from mqjournal.timefmt import local_time

log = logging.getLogger(__name__)

SessionFor = Callable[[str], AbstractContextManager[IbmiSession]]


class HostNotInFleet(MqJournalError):
    """The catalog holds copies of a host that the fleet file (how to reach each host) does not name: its copies'
    drills cannot be made."""


def candidates(catalog: Catalog, store_url: str) -> list[Candidate]:
    """Every copy of the store whose save file the catalog has not discarded (backup expiry), with its last drill."""
    last: dict[str, DrillRecord] = {}
    for d in catalog.drills():
        if d.store_url == store_url:
            last[d.key] = d  # oldest first: the newest wins
    discarded: dict[str, set[str]] = {}
    found = []
    for c in catalog.stored_copies(store_url):
        s = c.stored
        if s.host not in discarded:
            discarded[s.host] = catalog.discarded_save_files(s.host)
        if s.save_file_path in discarded[s.host]:
            continue
        drilled = last.get(s.key)
        found.append(
            Candidate(
                store_url=store_url,
                key=s.key,
                host=s.host,
                qmgr=s.qmgr,
                size_bytes=s.size_bytes,
                proven=c.proves,
                last_drilled_at=drilled.drilled_at if drilled else None,
                last_outcome=drilled.outcome if drilled else None,
                save_file=s.save_file_path,
            )
        )
    return found


def sample(catalog: Catalog, store_url: str, rule: Rule, now: datetime | None = None) -> Sample:
    previous = previous_run_keys(
        [(d.run_id, d.key, d.drilled_at) for d in catalog.drills() if d.store_url == store_url]
    )
    return choose(candidates(catalog, store_url), rule, now or datetime.now(UTC), previous)


def proposal_text(sample: Sample, store_url: str, library: str) -> str:
    """What a drill run of `sample` does and the copies it drills, as Markdown: the approval gate's body, and what
    `mqjournal store drill` prints before it drills anything."""
    lines = [
        f"Restore drill: each copy below is uploaded from the backup store {store_url} into a new scratch save file "
        f"(DRLnnnnnnn) in {library} on its partition, IBM i's list of what it holds (QSYS2.SAVE_FILE_OBJECTS) is "
        "compared with the catalog, and the scratch save file is deleted (DLTF). Nothing else on the partition is "
        "written or deleted. A claimed copy that passes is proven (restore_drill); one that fails counts no more.",
        "",
    ]
    if not sample.chosen:
        return "\n".join([*lines, sample.text()]) + "\n"
    lines += [
        "| host | queue manager | copy | save file | size | proof now | last drill |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in sample.chosen:
        last = f"{local_time(c.last_drilled_at)} ({c.last_outcome})" if c.last_drilled_at else "never"
        proof = "proven" if c.proven else "**unproven** (a claim, or a problem found)"
        lines.append(f"| {c.host} | {c.qmgr} | `{c.key}` | {c.save_file} | {size(c.size_bytes)} | {proof} | {last} |")
    lines += ["", sample.text()]
    return "\n".join(lines) + "\n"


def drill_keys(
    catalog: Catalog,
    store: BackupStore,
    keys: Sequence[str],
    *,
    run_id: str,
    library: str,
    session_for: SessionFor,
) -> list[DrillResult]:
    """Drill the copies `keys` of `store` (one session per host, the hosts one after another) and record each outcome
    in the catalog. A copy the catalog no longer has, or whose save file was discarded since it was chosen, is left
    out (logged); a host that cannot be reached gives each of its copies an `error` outcome."""
    by_key = {c.stored.key: c.stored for c in catalog.stored_copies(store.url)}
    by_host: dict[str, list[StoredObject]] = defaultdict(list)
    for key in keys:
        stored = by_key.get(key)
        if stored is None or stored.save_file_path in catalog.discarded_save_files(stored.host):
            log.info("%s: no longer in the catalog or discarded since it was chosen: not drilled", key)
            continue
        by_host[stored.host].append(stored)
    results: list[DrillResult] = []
    for host, copies in sorted(by_host.items()):
        with ExitStack() as stack:
            try:
                session = stack.enter_context(session_for(host))
            except MqJournalError as exc:  # nothing was sent to the host: each copy's drill could not be made
                for stored in copies:
                    results.append(_not_made(catalog, stored, exc, run_id))
                continue
            for stored in copies:
                result = drill_copy(session, store, stored, library=library, first_number=catalog.drill_count() + 1)
                record(catalog, result, run_id)
                results.append(result)
    return results


def _not_made(catalog: Catalog, stored: StoredObject, exc: MqJournalError, run_id: str) -> DrillResult:
    result = DrillResult(
        key=stored.key,
        store_url=stored.store_url,
        host=stored.host,
        qmgr=stored.qmgr,
        save_file=stored.save_file_path,
        outcome="error",
        problem=f"no session to {stored.host}: {exc.problem}",
        action=exc.action,
    )
    record(catalog, result, run_id)
    return result


def record(catalog: Catalog, result: DrillResult, run_id: str, at: datetime | None = None) -> None:
    library, name = result.save_file.split("/")
    catalog.record_drill(
        DrillRecord(
            host=result.host,
            qmgr=result.qmgr,
            store_url=result.store_url,
            key=result.key,
            save_file_library=library,
            save_file=name,
            run_id=run_id,
            drilled_at=at or datetime.now(UTC),
            outcome=result.outcome,
            scratch=result.scratch,
            problem="; ".join(x for x in (result.problem, result.scratch_left) if x) or None,
            action=result.action,
        )
    )
