"""On-call drills: trouble an admin stages on a simulated partition, running or not, to rehearse recovery.

Each drill changes the partition as IBM i and MQ would leave it, through the simulator's own rules (mq.py, the CL
interpreter), so what follows is what a real partition would answer:

- `power-off`: the queue manager ends abnormally (the partition lost power, or its jobs were ended *IMMED). No
  checkpoint is taken and its units of work stay in flight, so the next STRMQM runs a startup recovery pass from the
  AMQ7460 point, and ends with AMQ7432 when a receiver from there on is gone.
- `delete-receiver`: another job deletes receivers outside mqjournal, as `DLTJRNRCV ... DLTOPT(*IGNINQMSG)` does,
  from the oldest in the journal's directory through the one named (DLTJRNRCV takes them in attach order only, so
  deleting a needed receiver deletes the older ones with it). The attached receiver is refused (CPF7022).
- `damage-object`: an MQ object becomes damaged (AMQ7472 on QMQMMSG): it can no longer be imaged, so AMQ7462 stops
  moving and RCRMQMOBJ must re-create it from its media image (a media recovery).
- `open-unit-of-work`: an application begins a unit of work and never ends it: AMQ7460 stops moving at its first
  record (seeds: "If the journal receiver named in AMQ7460 is not advanced, this indicates that there is an
  incomplete unit of work").

A simulator serving the state folder (`mqjournal sim`, the demo) takes drills through its inbox, the state folder's
`drills/` (a request file each, answered by a `.done` file), so they act on the running partition under its lock;
with none serving, `stage` changes the saved partition directly.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mqjournal.sim import mq
from mqjournal.sim.host import SimulatedHost
from mqjournal.sim.joblog import CommandError
from mqjournal.sim.model import Partition, QueueManager, Status

DrillKind = Literal["power-off", "delete-receiver", "damage-object", "open-unit-of-work"]
DRILL_KINDS: tuple[DrillKind, ...] = ("power-off", "delete-receiver", "damage-object", "open-unit-of-work")
INBOX = "drills"
SERVING = "serving.pid"
# The job that deletes receivers outside mqjournal: an operator's, not the planner's user.
OTHER_JOB_USER = "QSYSOPR"


class Drill(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: DrillKind
    host: str
    qmgr: str
    receiver: str | None = None  # delete-receiver: the newest receiver to delete
    object: str | None = None  # damage-object: the MQ object


class DrillRefused(ValueError):
    """The drill cannot be staged as asked (an unknown queue manager, the attached receiver ...): nothing changed."""


def queue_manager(partition: Partition, given: str) -> QueueManager:
    """The partition's queue manager `given` names: exactly, else the only one differing in case alone."""
    exact = partition.queue_manager(given)
    if exact is not None:
        return exact
    alike = [q for q in partition.queue_managers if q.name.casefold() == given.casefold()]
    if len(alike) == 1:
        return alike[0]
    names = ", ".join(q.name for q in partition.queue_managers) or "none"
    raise DrillRefused(f"{partition.name} has no queue manager {given}; its queue managers: {names}")


def apply(host: SimulatedHost, drill: Drill) -> str:
    """Stage `drill` on `host` (under its lock, saved after); the line that says what now holds. DrillRefused."""
    try:
        return _apply(host, drill)
    except CommandError as exc:  # the partition refused (its library lost: CPF9810 ...): nothing was staged
        raise DrillRefused(f"{drill.kind} of {drill.qmgr} on {drill.host}: {exc}") from exc


def _apply(host: SimulatedHost, drill: Drill) -> str:
    if drill.kind == "delete-receiver":
        return _delete_receivers(host, drill)
    with host.state() as partition:
        qm = queue_manager(partition, drill.qmgr)
        if drill.kind == "power-off":
            if not qm.running:
                raise DrillRefused(f"{qm.name} on {partition.name} is not running: there is no power to cut")
            in_flight = len(qm.open_units_of_work)
            mq.crash(partition, qm)
            point = mq.startup_point(qm)
            return (
                f"{qm.name} on {partition.name} ended abnormally ({in_flight} unit(s) of work in flight): STRMQM "
                f"replays the journal from the AMQ7460 point of {partition.local(point.at):%Y-%m-%d %H:%M:%S}"
            )
        if drill.kind == "damage-object":
            name = drill.object or ""
            if qm.object(name) is None:
                known = ", ".join(o.name for o in qm.objects)
                raise DrillRefused(f"{qm.name} on {partition.name} has no object {name!r}; its objects: {known}")
            mq.damage(partition, qm, name)
            return (
                f"{name} of {qm.name} on {partition.name} is damaged (AMQ7472): AMQ7462 stays at its last media "
                "image until RCRMQMOBJ re-creates it"
            )
        if not qm.running:
            raise DrillRefused(f"{qm.name} on {partition.name} is not running: no application can begin work")
        uow = mq.open_unit_of_work(partition, qm)
        return (
            f"{uow.id} began on {qm.name} on {partition.name} at {partition.local(uow.started_at):%Y-%m-%d %H:%M:%S} "
            "and stays open: AMQ7460 cannot move past it"
        )


def _delete_receivers(host: SimulatedHost, drill: Drill) -> str:
    """DLTJRNRCV by another job, oldest first, through `drill.receiver`: run as CL, so IBM i's rules decide."""
    with host.lock:
        partition = host.partition
        qm = queue_manager(partition, drill.qmgr)
        journal = mq.journal_of(partition, qm)
        directory = partition.journal_receivers(journal)
        names = [r.name for r in directory]
        through = (drill.receiver or "").upper()
        if through not in names:
            raise DrillRefused(
                f"{through or 'no receiver'} is not in {qm.library}/{qm.journal_name}'s receivers on "
                f"{partition.name}; they are {', '.join(names) or 'none'}"
            )
        doomed = names[: names.index(through) + 1]
        if directory[len(doomed) - 1].status is Status.ATTACHED:
            raise DrillRefused(
                f"{through} is attached to {qm.library}/{qm.journal_name}: DLTJRNRCV refuses it (CPF7022)"
            )
        for name in doomed:
            done = host.run(f"system 'DLTJRNRCV JRNRCV({qm.library}/{name}) DLTOPT(*IGNINQMSG)'", OTHER_JOB_USER)
            if done.exit_status != 0:
                raise DrillRefused(f"DLTJRNRCV of {qm.library}/{name} failed: {done.stderr.strip()}")
    return (
        f"{', '.join(doomed)} deleted from {qm.library} on {partition.name} outside mqjournal (DLTJRNRCV "
        "DLTOPT(*IGNINQMSG)): a recovery pass that needs them ends with AMQ7432"
    )


# --- the inbox of a serving simulator --------------------------------------------------------------------------


def mark_serving(state_dir: Path) -> None:
    (state_dir / SERVING).write_text(str(os.getpid()), encoding="utf-8")


def unmark_serving(state_dir: Path) -> None:
    path = state_dir / SERVING
    if path.exists() and path.read_text(encoding="utf-8").strip() == str(os.getpid()):
        path.unlink()


def serving(state_dir: Path) -> bool:
    """Whether a live process serves the state folder (a simulator killed without stopping leaves a dead pid)."""
    try:
        pid = int((state_dir / SERVING).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    return True


def request(state_dir: Path, drill: Drill) -> Path:
    inbox = state_dir / INBOX
    inbox.mkdir(parents=True, exist_ok=True)
    path = inbox / f"{uuid.uuid4().hex}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(drill.model_dump_json(), encoding="utf-8")
    os.replace(tmp, path)  # the simulator never reads half a request
    return path


def run_inbox(state_dir: Path, hosts: dict[str, SimulatedHost]) -> int:
    """Stage every waiting request on the running partitions, answering each; how many were taken."""
    inbox = state_dir / INBOX
    if not inbox.is_dir():
        return 0
    taken = 0
    for path in sorted(inbox.glob("*.json")):
        try:
            drill = Drill.model_validate_json(path.read_text(encoding="utf-8"))
            host = hosts.get(drill.host)
            if host is None:
                raise DrillRefused(f"no simulated host {drill.host}; the hosts are {', '.join(hosts) or 'none'}")
            answer = {"ok": True, "text": apply(host, drill)}
        except Exception as exc:  # every request is answered once and removed, never retried on each poll
            answer = {"ok": False, "text": str(exc)}
        path.with_suffix(".done").write_text(json.dumps(answer), encoding="utf-8")
        path.unlink()
        taken += 1
    return taken


def await_answer(requested: Path, timeout: float) -> tuple[bool, str]:
    done = requested.with_suffix(".done")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done.exists():
            answer = json.loads(done.read_text(encoding="utf-8"))
            done.unlink()
            return bool(answer["ok"]), str(answer["text"])
        time.sleep(0.2)
    requested.unlink(missing_ok=True)
    return False, f"the simulator serving {requested.parent.parent} did not take the drill in {timeout:g} s"


def stage(state_dir: Path, drill: Drill, *, timeout: float = 30) -> tuple[bool, str]:
    """Stage `drill`: through the serving simulator's inbox, or on the saved partition when none serves it."""
    if serving(state_dir):
        return await_answer(request(state_dir, drill), timeout)
    path = state_dir / f"{drill.host}.json"
    host = SimulatedHost.load(path) if path.exists() else None
    if host is None:
        return False, f"no simulated partition {drill.host} in {state_dir}: serve the fleet once first (mqjournal sim)"
    try:
        return True, apply(host, drill)
    except DrillRefused as exc:
        return False, str(exc)
