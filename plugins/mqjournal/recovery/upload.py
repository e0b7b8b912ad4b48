"""The recovery steps the executor runs itself rather than send as one command: the upload of a save file from the
backup store, and the check that the uploaded save file lists what is to be restored from it.

Both answer with an error naming the save file and what to do, never with a bare exception. An upload is never
retried once bytes went (`upload_save_file`): the save file may hold part of them, so the rerun's plan deletes it
and creates it again first (fromstore, DELETE_PARTIAL_UPLOAD).
"""

from __future__ import annotations

from mqjournal.backupstore import BackupStore
from mqjournal.errors import MqJournalError
from mqjournal.ibmi.backups import save_file_contents
from mqjournal.ibmi.transfer import SaveFileNotEmpty, UploadIncomplete, upload_save_file
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.recovery.fromstore import needed_objects
from mqjournal.recovery.plan import Step

RERUN_AFTER_AN_INTERRUPTED_UPLOAD = (
    "run the recovery again: it deletes the save file (DLTF), creates it again (CRTSAVF) and uploads the stored copy "
    "again before anything is restored from it"
)


class OwnStepFailed(MqJournalError):
    """An upload or a check did not succeed: the save file, the problem and what to do, for the executor's
    StepFailed."""


def run_upload(session: IbmiSession, store: BackupStore | None, s: Step) -> tuple[str, str]:
    """(outcome, message) of an UPLOAD_SAVE_FILE step: the stored copy, verified again, in the save file, its size on
    the host compared. Raises OwnStepFailed."""
    a = s.args
    target = f"{a['library']}/{a['name']}"
    if store is None:
        raise OwnStepFailed(
            target,
            f"no backup store was given to this run, and {target} is to be uploaded from the store's {a['key']}",
            "run the recovery with the backup store the plan was made with (MQJOURNAL_BACKUP_STORE)",
        )
    try:
        stored = upload_save_file(session, store, str(a["key"]), str(a["library"]), str(a["name"]))
    except (SaveFileNotEmpty, UploadIncomplete) as exc:
        # The plan made right before this run found the save file missing or emptied it: data in it now is part of
        # this upload, or was put there meanwhile. The rerun's plan reads what it lists and decides.
        raise OwnStepFailed(target, exc.problem, RERUN_AFTER_AN_INTERRUPTED_UPLOAD) from None
    except MqJournalError as exc:
        raise OwnStepFailed(target, exc.problem, exc.action, msg_id=exc.msg_id) from None
    return "done", f"{stored.size_bytes} bytes of {stored.key} uploaded; the save file on the host has that size"


def check_upload(session: IbmiSession, check: Step) -> str | None:
    """Why the save file of a CHECK_SAVE_FILE step does not list every object it must (None when it does).

    QSYS2.SAVE_FILE_OBJECTS reads the save file itself: IBM i reads a save file only once it was written whole, so an
    incomplete upload cannot list what the stored copy holds."""
    path = f"{check.args['library']}/{check.args['name']}"
    try:
        content = save_file_contents(session, [path])[path]
    except MqJournalError as exc:
        return f"what {path} holds could not be read ({exc.problem})"
    if content.exists is not True:
        return f"{path} is not on the host" if content.exists is False else f"whether {path} exists could not be read"
    if content.receivers is None:
        return f"{path} exists but its object list (QSYS2.SAVE_FILE_OBJECTS) cannot be read: the upload is incomplete"
    missing = sorted(needed_objects(check) - content.receivers)
    if missing:
        return f"{path} does not list {', '.join(f'{lib}/{name}' for lib, name in missing)}: the upload is incomplete"
    return None


def run_check(session: IbmiSession, s: Step) -> tuple[str, str]:
    """(outcome, message) of a CHECK_SAVE_FILE step. Raises OwnStepFailed."""
    problem = check_upload(session, s)
    if problem is not None:
        raise OwnStepFailed(f"{s.args['library']}/{s.args['name']}", problem, RERUN_AFTER_AN_INTERRUPTED_UPLOAD)
    return "done", f"{s.args['library']}/{s.args['name']} lists {s.args['objects']}"
