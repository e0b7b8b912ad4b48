"""A queue manager's IFS directory on the simulated partition: SAV of it into a save file, RST of it, its loss.

IBM MQ for IBM i keeps a queue manager in two places: its library holds "journals, journal receivers, and objects
required to control the work management of the queue manager", and its IFS directory holds "IBM MQ configuration
files, the descriptions of IBM MQ objects, and the data they contain" (IBM MQ 9.0, "Availability, backup, recovery,
and restart on IBM i", https://www.ibm.com/support/knowledgecenter/SSFKSJ_9.0.0/com.ibm.mq.adm.doc/q021790_.htm).
So SAVLIB of the library does not save the queues' messages; IBM's procedures save and restore the IFS data with
SAV and RST beside SAVLIB and RSTLIB (e.g. "RST DEV('/QSYS.LIB/QGPL.LIB/QMUSERDATA.FILE') OBJ('/QIBM/UserData/mqm')",
IBM MQ 9.3 "Restore queue managers after upgrading IBM MQ on IBM i",
https://ibm.com/support/knowledgecenter/SSFKSJ_9.3.0/install/q116530_.html).

SIMPLIFICATION: the directory is `QueueManager` itself (its definitions, its objects and their messages), marked
present or lost by `QueueManager.directory_present`; SAV copies it whole and RST puts the copy back, the queue
manager ended. Only a queue manager's own directory can be saved or restored (OBJ naming one path), which is all
the client sends. The messages' IDs for SAV and RST (CPC370C, CPC370D, CPFA0A9, CPFA09E) are the simulator's:
they were not confirmed in a public source here; clients judge SAV and RST by the exit status.
"""

from __future__ import annotations

from mqjournal.names import qmgr_directory
from mqjournal.sim import mq
from mqjournal.sim.joblog import JobLog, escape
from mqjournal.sim.model import DirectoryImage, Partition, QueueManager, SaveFile


def owner_of(partition: Partition, path: str) -> QueueManager | None:
    """The queue manager whose IFS directory `path` is (exactly: SAV OBJ names the directory itself)."""
    return next((qm for qm in partition.queue_managers if qmgr_directory(qm.name) == path), None)


def save_directory(partition: Partition, path: str, save_file: SaveFile, log: JobLog) -> None:
    """SAV DEV(save file) OBJ((path)): the queue manager's directory as it is now, into an empty save file."""
    qm = owner_of(partition, path)
    if qm is None or not qm.directory_present:
        raise escape("CPFA0A9", path)
    image = DirectoryImage(saved_at=partition.tick(), path=path, queue_manager=qm.model_copy(deep=True))
    save_file.clear()
    save_file.kind = "DIR"
    save_file.directory_image = image
    # The directory and its queue files: one object for the directory, one for each object's file.
    log.send("CPC370C", str(1 + len(qm.objects)))


def restore_directory(partition: Partition, save_file: SaveFile, path: str, log: JobLog) -> None:
    """RST DEV(save file) OBJ((path)): the saved directory replaces what is there; the queue manager stays ended."""
    image = save_file.directory_image
    if image is None or image.path != path:
        raise escape("CPFA0A9", path)
    current = next((qm for qm in partition.queue_managers if qm.name == image.queue_manager.name), None)
    if current is not None and current.running:
        # MQ's jobs hold the queue files open: the restore cannot replace them.
        raise escape("CPFA09E", path)
    saved = image.queue_manager.model_copy(deep=True)
    saved.running = False
    saved.directory_present = True
    if current is not None:
        # The library's side is not in the directory: what the journal's library holds stays as it is.
        saved.library = current.library
        partition.queue_managers[partition.queue_managers.index(current)] = saved
    else:
        partition.queue_managers.append(saved)
    log.send("CPC370D", str(1 + len(saved.objects)))


def lose_directory(partition: Partition, qm: QueueManager) -> None:
    """The directory is gone (a lost disk, an `rm -r`): MQ ends at once, its object files and messages with it.
    The queue manager stays in mqs.ini, so STRMQM names the missing directory (mq.start)."""
    if qm.running:
        mq.crash(partition, qm)
    qm.objects = []
    qm.directory_present = False
