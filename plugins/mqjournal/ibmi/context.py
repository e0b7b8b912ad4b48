"""What every step on one queue manager shares: the session to its partition, the journal, the host's time zone,
the catalog and the run. The save, delete and recovery executors are each a HostContext with their own steps."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog, Operation, OperationKind
from mqjournal.ibmi.collector import Target, read_receivers, read_state
from mqjournal.ibmi.downloadroutes import DownloadRoutes
from mqjournal.ibmi.readings import PartitionZone
from mqjournal.ibmi.reconcile import reconcile
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.planrows import QueueManagerRef
from mqjournal.snapshot import Receiver, Snapshot


@dataclass(frozen=True)
class HostContext:
    session: IbmiSession
    target: Target  # the queue manager's journal: its library is where its receivers live
    host: str  # the partition's name in the fleet file, as the catalog records it
    tz: PartitionZone  # the partition's time zone: IBM i reports local times without an offset
    catalog: Catalog
    run_id: str  # the DAG run (or CLI run) that every catalog record and save file name is tied to
    # Where save files are copied off the partition, and restored from. Without one nothing is copied, so nothing
    # counts as backed up off the partition and no receiver is deleted by mqjournal's own saves.
    store: BackupStore | None = None
    # How this host's save files are downloaded, as `mqjournal doctor` recorded it (none: directly).
    routes: DownloadRoutes | None = None

    @property
    def ref(self) -> QueueManagerRef:
        return QueueManagerRef(host=self.host, qmgr=self.target.qmgr, library=self.target.library)

    def live(self, since: datetime | None = None) -> Snapshot:
        """The queue manager's state read now (no checkpoint taken); messages from `since` on, when given."""
        return read_state(self.session, self.target, host=self.host, run_id=self.run_id, tz=self.tz, since=since)

    def receivers_now(self) -> list[Receiver]:
        """The journal's receivers read now, nothing else of the queue manager's state (read_receivers)."""
        return read_receivers(self.session, self.target, tz=self.tz)

    def reconciled(self, live: Snapshot) -> list[str]:
        """What interrupted earlier steps on this queue manager turned out to have done, closed against `live`."""
        return reconcile(self.session, self.catalog, live, host=self.host).findings

    def operation(self, kind: OperationKind, names: list[str], **fields: object) -> Operation:
        """A catalog intent on this queue manager, to be written before its command is sent."""
        return Operation.model_validate(
            {
                "host": self.host,
                "qmgr": self.target.qmgr,
                "qmgr_library": self.target.library,
                "kind": kind,
                "library": self.target.library,
                "receivers": " ".join(names),
                "run_id": self.run_id,
                **fields,
            }
        )
