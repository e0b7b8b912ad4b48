"""What a recovery plan is: the request, the ordered steps, the gaps that stop it, and what it will leave behind.

A plan is data (JSON through XCom and onto the approval gate); each step names a command builder of
`mqjournal.ibmi.commands` and its arguments, so the executor rebuilds every command from validated names at the
moment it runs it, never from stored text.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from mqjournal import timefmt
from mqjournal.ibmi import commands
from mqjournal.names import ObjectName, QueueManagerName, mq_name
from mqjournal.recovery.kinds import RecoveryKind


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Request(_Model):
    host: str = Field(min_length=1)
    qmgr: QueueManagerName
    kind: RecoveryKind
    needed_at: AwareDatetime | None = Field(None, description="startup: the time AMQ7432 reports (default: its latest)")
    object: str | None = Field(None, description="media: the damaged object (default: the latest AMQ7472)")
    object_type: str = Field("*ALL", description="media: RCRMQMOBJ OBJTYPE")
    threshold_kb: int | None = Field(None, ge=1, le=commands.MAX_THRESHOLD_KB, description="naming: new threshold")

    @field_validator("object")
    @classmethod
    def _object(cls, value: str | None) -> str | None:
        return None if value in (None, "") else mq_name(value)

    @field_validator("object_type")
    @classmethod
    def _object_type(cls, value: str) -> str:
        return commands._mq_object_type(value)


class Action(StrEnum):
    """A step's command, by the name of its builder in `mqjournal.ibmi.commands`."""

    RESTORE_LIBRARY = "restore_library"
    RESTORE_QMGR_DIRECTORY = "restore_qmgr_directory"
    CREATE_RECEIVER = "create_receiver"
    GIVE_RECEIVER_TO_QMQM = "give_receiver_to_qmqm"
    CREATE_JOURNAL = "create_journal"
    ATTACH_RECEIVER = "attach_receiver"
    RESTORE_RECEIVER = "restore_receiver"
    ASSOCIATE_RECEIVERS = "associate_receivers"
    START_QMGR = "start_qmgr"
    RECREATE_OBJECT = "recreate_object"
    REFRESH_CLUSTER = "refresh_cluster"
    SET_FULL_REPOSITORY = "set_full_repository"
    RECORD_MEDIA_IMAGES = "record_media_images"
    DELETE_SAVE_FILE = "delete_save_file"
    # A save file the restore needs, brought back from the backup store (docs/recovery.md, "Restores from the store").
    CREATE_SAVE_FILE = "create_save_file"
    DELETE_PARTIAL_UPLOAD = "delete_partial_upload"
    UPLOAD_SAVE_FILE = "upload_save_file"
    CHECK_SAVE_FILE = "check_save_file"


BUILDERS: Mapping[Action, Callable[..., commands.Command]] = MappingProxyType(
    {
        Action.RESTORE_LIBRARY: commands.restore_library,
        Action.RESTORE_QMGR_DIRECTORY: commands.restore_qmgr_directory,
        Action.CREATE_RECEIVER: commands.create_receiver,
        Action.GIVE_RECEIVER_TO_QMQM: commands.give_receiver_to_qmqm,
        Action.CREATE_JOURNAL: commands.create_journal,
        Action.ATTACH_RECEIVER: commands.attach_receiver,
        Action.RESTORE_RECEIVER: commands.restore_receiver,
        Action.ASSOCIATE_RECEIVERS: commands.associate_receivers,
        Action.START_QMGR: commands.start_qmgr,
        Action.RECREATE_OBJECT: commands.recreate_object,
        Action.REFRESH_CLUSTER: commands.refresh_cluster,
        Action.SET_FULL_REPOSITORY: commands.set_full_repository,
        Action.RECORD_MEDIA_IMAGES: commands.record_media_images,
        Action.DELETE_SAVE_FILE: commands.delete_save_file,
        Action.CREATE_SAVE_FILE: commands.create_save_file,
        Action.DELETE_PARTIAL_UPLOAD: commands.delete_partial_upload,
    }
)
"""The command builder of each step action that is a command: a new one is one entry here (a test holds every
action listed here or in RUN_BY_THE_EXECUTOR)."""


def upload_text(origin: str, key: str, library: str, name: str) -> str:
    return f"SFTP PUT {commands.save_file_path(library, name)} from the backup store object {key} (save file {origin})"


def check_text(library: str, name: str, objects: str) -> str:
    return f"{commands.save_file_objects(library, name)} -- must list {objects}"


RUN_BY_THE_EXECUTOR: Mapping[Action, Callable[..., str]] = MappingProxyType(
    {
        Action.UPLOAD_SAVE_FILE: upload_text,
        Action.CHECK_SAVE_FILE: check_text,
    }
)
"""Steps that are not one command to judge by its exit status and messages: an SFTP upload from the backup store
(no CL command: the executor streams the stored bytes over the session's SFTP channel) and the check that the
uploaded save file lists what is to be restored (a read whose answer is judged by its content). Each with the line
that shows it in a plan; `mqjournal.recovery.upload` runs them."""


class Step(_Model):
    action: Action
    args: dict[str, str | int | bool | None]
    why: str
    receiver: ObjectName | None = Field(None, description="the receiver the step is about, if any")
    attached_at: AwareDatetime | None = None

    def command(self, *, runner: commands.SqlRunner = "qsh") -> commands.Command:
        """The command to send, rebuilt (and its names validated again) from the step's arguments. `runner` is the
        host's SQL runner (IbmiSession.sql_runner): how the one SQL step, ASSOCIATE_RECEIVERS, reaches db2. It is
        the host's setting, not the plan's, so a plan made for one runner runs on a host set up for the other."""
        if self.action in RUN_BY_THE_EXECUTOR:
            raise TypeError(f"{self.action.value} is run by the recovery executor itself, not sent as a command")
        build = BUILDERS[self.action]
        if self.action is Action.ASSOCIATE_RECEIVERS:
            return build(**self.args, runner=runner)
        return build(**self.args)

    @property
    def text(self) -> str:
        """The CL command or SQL statement as an admin would type it (without the PASE/Qshell wrapper); for a step the
        executor runs itself, the transfer or the read it makes."""
        if self.action in RUN_BY_THE_EXECUTOR:
            return RUN_BY_THE_EXECUTOR[self.action](**self.args)
        command = self.command().text
        statements = commands.sql_statements(command)
        return statements[0] if statements else shlex.split(command)[1]


class Gap(_Model):
    """Something a restore needs that is not there: the plan cannot run until it is resolved."""

    obj: str
    problem: str
    action: str

    def __str__(self) -> str:
        return f"{self.obj}: {self.problem}; {self.action}"


class RecoveryPlan(_Model):
    request: Request
    created_at: AwareDatetime
    qmgr_library: ObjectName
    journal: ObjectName
    steps: list[Step] = Field(default_factory=list)
    gaps: list[Gap] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    site_media: list[str] = Field(
        default_factory=list,
        description="receivers only the site's own backup holds (backup: site): restored by the operator from the "
        "site's media, then the plan is made again; until then the plan does not run",
    )
    restore_point: AwareDatetime | None = Field(
        None, description="library: the latest moment the restored queue manager will reflect"
    )

    @property
    def executable(self) -> bool:
        return not self.gaps and not self.site_media and bool(self.steps)

    @property
    def restored_receivers(self) -> list[str]:
        return [s.receiver for s in self.steps if s.action is Action.RESTORE_RECEIVER and s.receiver]

    def markdown(self) -> str:
        """The plan as the approval gate and `mqjournal recover --plan-only` show it."""
        r = self.request
        lines = [f"## {r.kind.value} recovery of {r.qmgr} ({self.qmgr_library}) on {r.host}", ""]
        if self.gaps:
            lines += ["**This plan cannot run: the restore needs what the catalog or the host does not have.**", ""]
            lines += [f"- GAP {gap}" for gap in self.gaps] + [""]
        if self.site_media:
            lines += ["**Restore these from the site's backup media first, then plan again:**", ""]
            lines += [f"- {note}" for note in self.site_media] + [""]
        if self.restore_point is not None:
            # created_at is the host's clock (gather reads it there), so its zone is the partition's; the restore
            # point may be a catalog time, which the catalog gives back in UTC.
            shown = timefmt.local_time(self.restore_point, offset_of(self.created_at))
            lines += [f"Restore point: {shown}", ""]
        if self.steps:
            lines += ["| # | command | why |", "|---|---|---|"]
            lines += [f"| {i} | `{s.text}` | {s.why} |" for i, s in enumerate(self.steps, start=1)]
            lines.append("")
        lines += [f"- {note}" for note in self.notes]
        return "\n".join(lines).rstrip() + "\n"


def offset_of(moment: datetime) -> int | None:
    """The UTC offset `moment` carries, in minutes east of UTC as timefmt.local_time takes it (None: naive)."""
    offset = moment.utcoffset()
    return None if offset is None else int(offset.total_seconds() // 60)


def step(action: Action, why: str, *, about: str | None = None, attached_at: datetime | None = None, **args) -> Step:
    """A step; `args` are the builder's keyword arguments, `about` the receiver it concerns (for the report)."""
    return Step(action=action, args=args, why=why, receiver=about, attached_at=attached_at)
