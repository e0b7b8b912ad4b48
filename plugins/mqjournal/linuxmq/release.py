"""Release a Linux queue manager's log extents that neither restart nor media recovery needs, once each has a copy
proven now (#32): re-checked on the live queue manager right before, as IBM i's delete is.

1. The queue manager's log state read again now (linuxmq/collector.py without media images: nothing changes).
2. A copy the catalog records of each extent still listed (and approved) proven again in the store
   (ExtentStore.still_holds: the store's kept checksum, else the bytes read in full); a copy that no longer proves
   is not one, and one proving copy of an extent is enough.
3. The plan made again from that state and those copies (linuxmq/plan.py): an extent is released only when the live
   plan says RELEASE, whatever an earlier plan said (the plan waited for its approval; MQ moved on).
4. Archive mode: `SET LOG ARCHIVED('Snnnnnnn.LOG')` (runmqsc, on its standard input), after which MQ reuses or
   deletes the extent itself when it also needs it no more. Manual mode: `rm -f <extent>` (Windows: `del "<extent>"`,
   whose exit status is 0 either way: its words are read, platforms.WindowsPlatform.removal_refused). Each command is
   in the audit log before it is sent and with its outcome after (the session's).
5. What the queue manager shows after decides, not the answers alone (`_confirm`): an extent still listed after rm,
   or still the oldest waiting (ARCHLOG) after SET LOG ARCHIVED, is kept whatever the host answered; one the host
   refused that is gone from the log directory was let go by an attempt whose answer was lost.
What is not released is said with why, and kept.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from mqjournal.catalog import Catalog
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.linuxmq import collector
from mqjournal.linuxmq.extents import Extent, LogManagement
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxmq.plan import ExtentAction, plan_queue_manager
from mqjournal.linuxmq.platforms import LINUX, HostPlatform
from mqjournal.linuxmq.snapshot import LinuxSnapshot

__all__ = ["ReleaseResult", "release_extents"]

log = logging.getLogger(__name__)


@dataclass
class ReleaseResult:
    host: str
    qmgr: str
    released: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)  # extent -> why it stays
    # Of `kept`: those whose release was due and did not happen (a copy that does not prove now, the host refused, or
    # the extent still there after): work left undone. The rest the live plan keeps, which is no failure (a rerun
    # after a release whose answer was lost finds MQ told already).
    undone: set[str] = field(default_factory=set)


def release_extents(
    session: IbmiSession,
    qmgr: str,
    *,
    bin_dir: str,
    run_id: str,
    store: ExtentStore,
    catalog: Catalog,
    approved: set[str] | None = None,
    platform: HostPlatform = LINUX,
) -> ReleaseResult:
    """Release what the live plan releases (of `approved` only, when given: what the gate showed), reading the host
    in its `platform`'s forms."""
    result = ReleaseResult(session.host, qmgr)
    now = collector.collect(
        session, qmgr, host=session.host, run_id=run_id, bin_dir=bin_dir, media_images="imgsched", platform=platform
    )
    plan = plan_queue_manager(now, _proven(now, catalog, store, approved, result))
    refused: dict[str, str] = {}
    for decision in plan.decisions:
        name = decision.extent
        if decision.action is not ExtentAction.RELEASE:
            if approved is not None and name in approved:
                result.kept.setdefault(name, f"the live plan says {decision.action.value}: {decision.reason}")
            continue
        if approved is not None and name not in approved:
            continue  # not shown at the gate
        extent = Extent.parse(name)
        if now.log_management is LogManagement.ARCHIVE:
            out = session.run(platform.set_log_archived(bin_dir, qmgr, extent))
            said = (out.stderr or out.stdout).strip().splitlines()
            problem = (
                None
                if out.exit_status == 0
                else f"the host refused it (status {out.exit_status}: {said[-1] if said else 'no output'})"
            )
        else:
            out = session.run(platform.remove_extent(now.log_path, extent))
            problem = platform.removal_refused(out, platform.file_path(now.log_path, name))
        if problem is None:
            result.released.append(name)
        else:
            refused[name] = problem
    if result.released or refused:
        _confirm(session, qmgr, bin_dir, now.log_management, now.log_path, result, refused, platform)
    return result


def _proven(
    now: LinuxSnapshot, catalog: Catalog, store: ExtentStore, approved: set[str] | None, result: ReleaseResult
) -> set[str]:
    """The extents listed now (and approved, when that is given) of which the store holds a catalogued copy now: one
    copy proving is enough, and copies of extents long gone are not read again. An extent none of whose copies
    proves is kept, with the last problem found."""
    wanted = {e.name for e in now.extents if approved is None or e.name in approved}
    proven: set[str] = set()
    problems: dict[str, str] = {}
    for copy in catalog.extent_copies(now.host, now.qmgr):
        if copy.extent not in wanted or copy.extent in proven:
            continue
        problem = store.still_holds(copy)
        if problem is None:
            proven.add(copy.extent)
        else:
            problems[copy.extent] = f"its copy {copy.key} does not prove it now: {problem}"
    for name, why in problems.items():
        if name not in proven:
            result.kept[name] = why
            result.undone.add(name)
    return proven


def _confirm(
    session: IbmiSession,
    qmgr: str,
    bin_dir: str,
    management: LogManagement,
    log_path: str,
    result: ReleaseResult,
    refused: dict[str, str],
    platform: HostPlatform,
) -> None:
    """What the queue manager shows after, not the answers' exit statuses alone (SET LOG's messages are not known),
    one read for each question:
    - an extent the host said it let go is kept when a removed one is still listed, or a notified one is still the
      oldest waiting for notification (ARCHLOG);
    - an extent the host refused is released when it is no longer in the log directory: a command sent again after
      its answer was lost finds it let go already (MQ reuses a notified extent at once, then refuses to be told of
      it again: MQRCCF_LOG_EXTENT_NOT_FOUND), so the refusal is the repeat's, not the release's. One still listed
      is kept, with the refusal."""
    listed: set[str] | None = None
    if result.released:
        if management is LogManagement.ARCHIVE:
            waiting = collector.log_status(session, qmgr, bin_dir=bin_dir, platform=platform).get("ARCHLOG")
            still = {waiting} if waiting else set()
            why = "the queue manager still shows it as the oldest extent waiting for notification (ARCHLOG)"
        else:
            still = listed = {e.name for e in collector.log_extents(session, qmgr, log_path, platform=platform)}
            why = "it is still in the log directory after its removal"
        for name in [n for n in result.released if n in still]:
            result.released.remove(name)
            result.kept[name] = why
            result.undone.add(name)
            log.warning("%s %s: %s not released: %s", session.host, qmgr, name, why)
    if not refused:
        return
    if listed is None:
        listed = {e.name for e in collector.log_extents(session, qmgr, log_path, platform=platform)}
    for name, why in refused.items():
        if name in listed:
            result.kept[name] = why
            result.undone.add(name)
            log.warning("%s %s: %s kept: %s", session.host, qmgr, name, why)
        else:
            result.released.append(name)
            log.info("%s %s: %s refused, and gone from the log directory: let go already", session.host, qmgr, name)
