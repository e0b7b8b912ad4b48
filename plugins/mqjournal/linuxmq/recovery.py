"""Recovery plans for a Linux queue manager's linear log (#32), pure: what the host shows now and the catalog's proven
copies in, the plan the approval gate shows out.

Two kinds, the platform's counterparts of IBM i's (docs/linux-interfaces.md section 6, RDO):
- startup: strmqm replays the log from RECLOG, so every extent from RECLOG to the current one must be in
  `<LogPath>active/`; one missing and the queue manager does not start (AMQ6767, IBM i's AMQ7432). The missing ones
  are put back from the store, then strmqm, as IBM i's startup recovery ends with STRMQM. A queue manager that runs
  is not started (it would not notice until its next restart): the extents are put back for that restart.
- media: rcrmqobj re-creates an object from its media image and the log after it, so every extent from the image's
  extent to the current one must be there. A queue shows its own (DISPLAY QSTATUS MEDIALOG); a damaged queue shows
  no status at all (AMQ8149S), and MQ shows none for other objects, so then the queue manager's MEDIALOG, the oldest
  of any object's, bounds the restore: never fewer extents than the object needs. rcrmqobj needs a running queue
  manager, so a media recovery of one that does not run is refused: its startup recovery comes first.
The log points come from DISPLAY QMSTATUS when the queue manager runs; when it does not (it answers no MQSC), from
its last snapshot, reaching up to the newest extent the directory lists (extents written after that collection
are needed too). A needed extent that is neither in the directory nor in a copy the store still proves is a gap:
the plan does not run, and says what to do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from mqjournal.catalog import StoredExtent
from mqjournal.linuxmq import commands
from mqjournal.linuxmq.extents import EXTENT_NUMBERS, Extent, LogPoints
from mqjournal.linuxmq.platforms import LINUX, PLATFORMS, HostPlatform
from mqjournal.linuxmq.restore import plan_range
from mqjournal.linuxmq.snapshot import ExtentName, PlatformName
from mqjournal.names import HostName, MqObjectName, QueueManagerName
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import Gap
from mqjournal.recovery.refusals import PlanHasGaps, PlanWentStale
from mqjournal.recovery.restore import RecoveryRefused
from mqjournal.sizefmt import size

__all__ = [
    "LINUX_KINDS",
    "LinuxAction",
    "LinuxRecoveryPlan",
    "LinuxRecoveryRequest",
    "LinuxStep",
    "LogState",
    "missing_extents",
    "plan_linux_recovery",
    "steps_to_run",
]

LINUX_KINDS: Mapping[RecoveryKind, str] = {
    RecoveryKind.STARTUP: "strmqm cannot start, an extent from RECLOG on is missing (AMQ6767): put it back from the "
    "backup store, then strmqm",
    RecoveryKind.MEDIA: "a damaged object: put back the extents from its media image on, then rcrmqobj",
}
"""The kinds a Linux host takes, with the line a person reads about each; the others are IBM i's."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LinuxRecoveryRequest(_Model):
    """The trigger form, for a Linux host."""

    host: HostName
    qmgr: QueueManagerName
    kind: RecoveryKind
    object: MqObjectName | None = Field(None, description="media: the object to re-create with rcrmqobj")
    object_type: str = Field("all", description="media: rcrmqobj's -t word (queue, channel, ..., all)")

    @field_validator("object_type")
    @classmethod
    def _object_type(cls, value: str) -> str:
        # The form's default is IBM i's RCRMQMOBJ OBJTYPE(*ALL): on Linux, rcrmqobj's "all".
        return commands.object_type("all" if value.upper() == "*ALL" else value)

    @classmethod
    def checked(cls, **fields: Any) -> LinuxRecoveryRequest:
        """The request, or RecoveryRefused naming what a Linux host cannot do (another kind, a media recovery without
        the object's name) before anything is read."""
        request = cls.model_validate(fields)
        where = f"{request.qmgr} on the Linux host {request.host}"
        if request.kind not in LINUX_KINDS:
            raise RecoveryRefused(
                where,
                f"a {request.kind.value} recovery is IBM i's ({request.kind.description}); a Linux queue manager "
                "keeps no journal receivers",
                "use "
                + " or ".join(f"{k.value} ({line})" for k, line in LINUX_KINDS.items())
                + "; a lost queue manager is restored from a backup of its data and log directories, outside mqjournal",
            )
        if request.kind is RecoveryKind.MEDIA and request.object is None:
            raise RecoveryRefused(
                where,
                "a media recovery names the object to re-create: MQ's error log (AMQERR01.LOG, AMQ7472 'Object <name>, "
                "type <type> damaged.') says which",
                "give the object's name and its rcrmqobj type (queue, channel, ...; all when not known)",
            )
        return request

    @property
    def object_is_queue(self) -> bool:
        return self.object_type in commands.QUEUE_TYPES


class LogState(_Model):
    """What the host shows of the queue manager's log, read right before a plan is made."""

    read_at: AwareDatetime
    running: bool = Field(description="dspmq shows it Running")
    log_path: str = Field(description="the extents' directory (LOGPATH, or qm.ini's LogPath + active/)")
    extent_bytes: int = Field(ge=0, description="LogFilePages x 4 KiB")
    current: ExtentName | None = Field(description="CURRLOG (None: not known)")
    restart: ExtentName | None = Field(description="RECLOG")
    media: ExtentName | None = Field(description="MEDIALOG: the oldest extent any object's media recovery needs")
    points_from: str = Field(description="where the three points were read: DISPLAY QMSTATUS, or a snapshot")
    on_disk: list[str] = Field(description="the extent files the directory lists now (S and R), by name")
    object_media: ExtentName | None = Field(None, description="media: the object's own MEDIALOG, when MQ shows one")
    object_media_from: str = Field("", description="media: how the object's first needed extent was found")

    def points(self) -> LogPoints | None:
        if self.current is None or self.restart is None or self.media is None:
            return None
        return LogPoints(Extent.parse(self.current), Extent.parse(self.restart), Extent.parse(self.media))


class LinuxAction(StrEnum):
    PUT_EXTENT = "put_extent"  # an SFTP upload of a proven copy, proven on the host by sha256sum
    START_QMGR = "start_qmgr"  # strmqm
    RECREATE_OBJECT = "recreate_object"  # rcrmqobj -m QM -t TYPE NAME


class LinuxStep(_Model):
    action: LinuxAction
    text: str = Field(description="what is sent, as an admin would type it (shown; never run from this text)")
    why: str
    stored: StoredExtent | None = Field(None, description="put_extent: the copy put back")
    object_type: str | None = None
    object: MqObjectName | None = None

    def key(self) -> tuple[str, ...]:
        """Steps are the same when they do the same to the same thing (an extent from the same copy)."""
        if self.stored is not None:
            return (self.action.value, self.stored.extent, self.stored.key)
        return (self.action.value, self.object_type or "", self.object or "")


class LinuxRecoveryPlan(_Model):
    platform: Literal["linux"] = "linux"
    host_platform: PlatformName = Field("linux", description="the host's platform: its commands' forms")
    request: LinuxRecoveryRequest
    created_at: AwareDatetime
    bin_dir: str
    state: LogState
    first_needed: ExtentName | None = Field(None, description="the oldest extent the recovery reads")
    last_needed: ExtentName | None = Field(None, description="the newest")
    steps: list[LinuxStep] = Field(default_factory=list)
    gaps: list[Gap] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def executable(self) -> bool:
        return not self.gaps and bool(self.steps)

    @property
    def puts(self) -> list[StoredExtent]:
        return [s.stored for s in self.steps if s.stored is not None]

    def markdown(self) -> str:
        """The plan as the approval gate shows it: the extents to put back first, with where each copy came from."""
        r = self.request
        label = PLATFORMS[self.host_platform].label
        lines = [f"## {r.kind.value} recovery of {r.qmgr} on {r.host} ({label}, log {self.state.log_path})", ""]
        if self.gaps:
            lines += ["**This plan cannot run: the recovery needs extents neither the host nor the store has.**", ""]
            lines += [f"- GAP {gap}" for gap in self.gaps] + [""]
        if self.puts:
            lines += ["Extents to put back into the log directory, each proven by the host's SHA-256 after it:", ""]
            lines += ["| extent | size | archived by run | copy in the backup store | SHA-256 |", "|---" * 5 + "|"]
            lines += [
                f"| {c.extent} | {size(c.size_bytes)} | {c.run_id} | {c.key} | {c.sha256[:16]}… |" for c in self.puts
            ]
            lines.append("")
        if self.steps:
            lines += ["| # | command | why |", "|---|---|---|"]
            lines += [f"| {i} | `{s.text}` | {s.why} |" for i, s in enumerate(self.steps, start=1)]
            lines.append("")
        lines += [f"- {note}" for note in self.notes]
        return "\n".join(lines).rstrip() + "\n"


# --- what the recovery reads ----------------------------------------------------------------------------------------


def _refused(request: LinuxRecoveryRequest, problem: str, action: str) -> RecoveryRefused:
    return RecoveryRefused(f"{request.kind.value} recovery of {request.qmgr} on {request.host}", problem, action)


def _newest_listed(current: Extent, on_disk: Iterable[str]) -> Extent:
    """The newest `S` extent listed, counted on from `current` across the wrap (an extent more than half the number
    space ahead is taken for an old one, as extents.fate takes it)."""
    newest, ahead = current, 0
    for name in on_disk:
        extent = Extent.parse(name)
        distance = (extent.number - current.number) % EXTENT_NUMBERS
        if not extent.reusable and ahead < distance < EXTENT_NUMBERS // 2:
            newest, ahead = extent, distance
    return newest


def needed_range(request: LinuxRecoveryRequest, state: LogState) -> tuple[Extent, Extent]:
    """The oldest and the newest extent the recovery reads; RecoveryRefused when that cannot be known or the
    recovery cannot run at all."""
    points = state.points()
    if points is None:
        raise _refused(
            request,
            f"its log points are not known ({state.points_from})",
            "a circular log is restored whole from a backup of the queue manager, not extent by extent; for a linear "
            "one, let a maintenance run collect it (or start it once by hand: AMQ6767 in its error log names the "
            "first extent missing), then plan again",
        )
    if request.kind is RecoveryKind.STARTUP:
        last = points.current if state.running else _newest_listed(points.current, state.on_disk)
        return points.restart, last
    if not state.running:
        raise _refused(
            request,
            "rcrmqobj re-creates an object on a running queue manager, and dspmq shows this one not running",
            "start it (or plan its startup recovery if it does not start), then plan the media recovery again",
        )
    # The object's own MEDIALOG is at or after the queue manager's (the oldest of any object's); without one, the
    # queue manager's bounds what the object can need. An own answer older still is taken as it is: more is read.
    first = Extent.parse(state.object_media) if state.object_media is not None else points.media
    return first, points.current


def missing_extents(request: LinuxRecoveryRequest, state: LogState) -> list[str]:
    """The extents the recovery reads that the directory does not list, oldest first: whose copies are to be proven."""
    first, last = needed_range(request, state)
    return list(plan_range(request.host, request.qmgr, first, last, state.on_disk, ()).missing)


# --- the plan -------------------------------------------------------------------------------------------------------


def plan_linux_recovery(
    request: LinuxRecoveryRequest,
    state: LogState,
    copies: Iterable[StoredExtent],
    *,
    bin_dir: str,
    unproven: Mapping[str, str] | None = None,
    platform: HostPlatform = LINUX,
) -> LinuxRecoveryPlan:
    """The plan for `request` from `state` and the catalog's `copies` of the queue manager's extents; `unproven`:
    the keys of copies the store no longer proves, with why (never put back). Its commands are written in the host's
    `platform`'s forms (what the gate shows is what is sent)."""
    first, last = needed_range(request, state)
    unproven = unproven or {}
    usable = [c for c in copies if c.key not in unproven]
    found = plan_range(request.host, request.qmgr, first, last, state.on_disk, usable)
    what = "restart" if request.kind is RecoveryKind.STARTUP else f"media recovery of {request.object}"
    steps = [
        LinuxStep(
            action=LinuxAction.PUT_EXTENT,
            text=f"SFTP PUT {platform.sftp_path(state.log_path, name)} from the backup store object "
            f"{found.copies[name].key}",
            why=f"{what} reads it, and it is not in the directory; archived by run {found.copies[name].run_id}",
            stored=found.copies[name],
        )
        for name in found.missing
        if name in found.copies
    ]
    gaps = [_gap(request, state, name, first, last, copies, unproven) for name in found.gaps]
    notes = [
        f"The {request.kind.value} recovery reads {first.name} through {last.name}, from log points read from "
        f"{state.points_from}: {len(found.missing)} of them missing from {state.log_path}, "
        f"{len(found.copies)} to put back from the backup store.",
    ]
    notes += [f"A copy the store no longer proves is not put back: {key}: {why}" for key, why in unproven.items()]
    if request.kind is RecoveryKind.STARTUP:
        if state.running:
            notes.append("The queue manager runs, so it is not started: the extents are put back for its next restart.")
        else:
            steps.append(
                LinuxStep(
                    action=LinuxAction.START_QMGR,
                    text=platform.start_queue_manager(bin_dir, request.qmgr).text,
                    why="its restart replays the log from RECLOG, every extent of it in the directory now",
                )
            )
            if not state.points_from.startswith("DISPLAY"):
                notes.append(
                    "A queue manager that does not run shows no log points: these are its last collection's, reaching "
                    "up to the newest extent the directory lists. Had it moved on since, strmqm may still name "
                    "another missing extent (AMQ6767): plan again then."
                )
    else:
        assert request.object is not None  # LinuxRecoveryRequest.checked
        steps.append(
            LinuxStep(
                action=LinuxAction.RECREATE_OBJECT,
                text=platform.recreate_object(bin_dir, request.qmgr, request.object_type, request.object).text,
                why="replay the object's media image and the log after it",
                object_type=request.object_type,
                object=request.object,
            )
        )
        notes.append(f"The first extent is {first.name}: {state.object_media_from}.")
        notes.append(
            "MEDIALOG moves on once the object is imaged again: the next collection's rcdmqimg, or IMGSCHED(AUTO)."
        )
    return LinuxRecoveryPlan(
        host_platform=platform.name,
        request=request,
        created_at=state.read_at,
        bin_dir=bin_dir,
        state=state,
        first_needed=first.name,
        last_needed=last.name,
        steps=steps,
        gaps=gaps,
        notes=notes,
    )


def _gap(
    request: LinuxRecoveryRequest,
    state: LogState,
    name: str,
    first: Extent,
    last: Extent,
    copies: Iterable[StoredExtent],
    unproven: Mapping[str, str],
) -> Gap:
    bad = [f"{c.key}: {unproven[c.key]}" for c in copies if c.extent == name and c.key in unproven]
    copy_said = (
        f"its copies no longer prove in the store ({'; '.join(bad)})"
        if bad
        else "the catalog has no copy of it the host vouched for"
    )
    fails = "strmqm fails (AMQ6767)" if request.kind is RecoveryKind.STARTUP else "rcrmqobj fails (AMQ6767)"
    action = (
        f"put it back into {state.log_path} from a backup taken outside mqjournal (as a user of group mqm), then plan "
        f"again; without it {fails}"
    )
    if not state.running:
        # Its points are a collection's: MQ may have let this extent go since (Automatic mode) if restart moved on.
        action += (
            f". These log points are {state.points_from}: if the queue manager moved on since, start it once by hand "
            "and read which extent AMQ6767 names in its error log before restoring by hand"
        )
    return Gap(
        obj=f"extent {name} of {request.qmgr} on {request.host}",
        problem=f"the recovery reads {first.name} through {last.name}; {name} is not in {state.log_path}, and "
        f"{copy_said}",
        action=action,
    )


# --- what an approved plan may run ----------------------------------------------------------------------------------


def refuse_unrunnable(approved: LinuxRecoveryPlan, *, host: str) -> None:
    """A plan for another host, or with gaps, is refused before anything is sent."""
    r = approved.request
    if r.host != host:
        raise RecoveryRefused(
            f"plan of {r.qmgr} on {r.host}",
            f"this executor works on {host}",
            "run the plan against the host it was made for",
        )
    if approved.gaps:
        raise PlanHasGaps(
            f"{r.kind.value} plan of {r.qmgr} on {host}",
            "the plan has gaps: " + " | ".join(str(g) for g in approved.gaps),
            "resolve every gap, then plan and approve again; nothing was run",
        )


def steps_to_run(approved: LinuxRecoveryPlan, fresh: LinuxRecoveryPlan) -> tuple[LinuxRecoveryPlan, list[str]]:
    """The plan made again right before running (a subset of the approved one) and the approved steps it no longer
    needs (an earlier attempt put the extent back, or the queue manager runs now). PlanHasGaps when the fresh plan
    has gaps, PlanWentStale when it needs a step the approver did not see; nothing was run then."""
    r = approved.request
    where = f"{r.kind.value} plan of {r.qmgr} on {r.host}"
    if fresh.gaps:
        raise PlanHasGaps(
            where,
            "planned again on the live host, it has gaps: " + " | ".join(str(g) for g in fresh.gaps),
            "resolve every gap, then plan and approve again; nothing was run",
        )
    seen = {s.key() for s in approved.steps}
    extra = [s for s in fresh.steps if s.key() not in seen]
    if extra:
        raise PlanWentStale(
            where,
            f"the live host now needs {len(extra)} step(s) the approved plan does not have: "
            + "; ".join(f"`{s.text}`" for s in extra),
            "the plan went stale; plan and approve again (nothing was run)",
        )
    now = {s.key() for s in fresh.steps}
    return fresh, [s.text for s in approved.steps if s.key() not in now]
