"""The CL commands the simulated partition understands, answered with IBM i's messages and refusals.

Each command validates its parameters as the command analyzer would, changes the partition, and reports through
the job log. Refusals raise CommandError carrying the escape message; nothing is changed by a refused command.
A command that prints (WRKJRNA, DSPJRNRCVA, DSPJRN with OUTPUT(*PRINT)) returns its spooled output, which `system`
writes to stdout.

Positional parameters (`Spec.positional`): the order of each command's "Positional n" parameters in IBM's CL
reference. Verified against the reference's parameter tables: SAVOBJ (OBJ 1, LIB 2, DEV 3, OBJTYPE 4;
https://www.ibm.com/docs/en/i/7.5?topic=ssw_ibm_i_75/cl/savobj.html), CHGJRN (JRN 1;
https://www.ibm.com/support/knowledgecenter/ssw_ibm_i_72/cl/chgjrn.htm), DLTJRN-style JRN 1. The others follow the
reference's convention (the required object first, then the device) and are ASSUMED; the MQ commands (RCDMQMIMG,
STRMQM ...) take keywords only here because their positional counts were not found.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from mqjournal.errors import InvalidName
from mqjournal.names import object_name, qmgr_name
from mqjournal.sim import journal as jrn
from mqjournal.sim import library as lib
from mqjournal.sim import mq, qmgrdir, savfdata, streamfiles
from mqjournal.sim.authority import chkobj
from mqjournal.sim.clparse import ClCommand, ClSyntaxError, unquote
from mqjournal.sim.joblog import CommandError, JobLog, escape, post
from mqjournal.sim.model import Partition, SavedObject, SaveFile, Status, qualified

_MQ_NAME = re.compile(r"[A-Za-z0-9._/%]{1,48}")

LIBRARY_LIST = ("QSYS", "QSYS2", "QHLPSYS", "QUSRSYS", "QGPL", "QTEMP")


@dataclass
class InquiryWait(Exception):
    """The command sent an inquiry and the job must wait for an operator's reply (INQMSGRPY(*RQD)).

    The runner releases the partition while waiting and then calls `resume(reply)` under the lock again.
    """

    message_key: int
    resume: Callable[[str], None]


@dataclass(frozen=True)
class Spec:
    # Returns the command's spooled output (OUTPUT(*PRINT)), or None.
    run: Callable[[Partition, ClCommand, JobLog, str], str | None]
    keywords: frozenset[str]
    required: frozenset[str] = frozenset()
    positional: tuple[str, ...] = ()
    changes: bool = True
    """False for a command that only reads the partition (CHKOBJ, the displays): the host need not save it after."""


def _name(value: str | None, keyword: str, what: str = "object") -> str:
    text = unquote(value or "")
    if len(text) > 10:
        # The command analyzer cuts the value to the parameter's length in its diagnostic: a real capture reads
        # "CPD0074: Value 'WARNING_TE' for PGM exceeds 10 characters." for PGM(C3S411/WARNING_TEST).
        raise ClSyntaxError("CPD0074", text[:10], keyword, "10")
    try:
        return object_name(text, what=what)
    except InvalidName:
        raise ClSyntaxError("CPD0078", value or "", keyword) from None


def _qualified(partition: Partition, value: str | None, keyword: str, objtype: str) -> tuple[str, str]:
    """LIB/NAME, *LIBL/NAME or NAME, resolved through the library list as IBM i does."""
    raw = value or ""
    library, _, name = raw.rpartition("/")
    name = _name(name, keyword)
    if library in ("", "*LIBL"):
        for candidate in LIBRARY_LIST:
            if candidate in partition.libraries and partition.object_exists(candidate, name, objtype):
                return candidate, name
        return "*LIBL", name
    if library == "*CURLIB":
        return "QGPL", name
    return _name(library, keyword, "library"), name


def _qmgr(command: ClCommand) -> str:
    value = unquote(command.single("MQMNAME", "*DFT") or "")
    if value == "*DFT":
        raise escape("AMQ8118", "*DFT")
    try:
        return qmgr_name(value)
    except InvalidName:
        raise ClSyntaxError("CPD0078", value, "MQMNAME") from None


def _require_library(partition: Partition, library: str) -> None:
    if library not in partition.libraries:
        raise escape("CPF9810", library)


# --- MQ commands --------------------------------------------------------------------------------------------


def rcdmqmimg(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    qm = mq.find_queue_manager(partition, _qmgr(command))
    pattern = unquote(command.single("OBJ") or "")
    objtype = command.single("OBJTYPE") or ""
    mq.record_images(partition, qm, pattern, objtype, log)
    # RCDMQMIMG forces a checkpoint, and MQ logs AMQ7460/AMQ7462 and rewrites AMQJRNINF.
    display = (command.single("DSPJRNDTA", "*NO") or "*NO") == "*YES"
    mq.announce_recovery_points(partition, qm, log if display else None)


def rcrmqmobj(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    qm = mq.find_queue_manager(partition, _qmgr(command))
    mq.recreate_object(partition, qm, unquote(command.single("OBJ") or ""), command.single("OBJTYPE") or "", log)


def strmqm(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    mq.start(partition, mq.find_queue_manager(partition, _qmgr(command)), log)


def endmqm(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    qm = mq.find_queue_manager(partition, _qmgr(command))
    images = (command.single("ENDCCTJOB", "*NO") == "*YES") and (command.single("RCDMQMIMG", "*YES") != "*NO")
    mq.end(partition, qm, log, record_images=images)


# --- journal commands ---------------------------------------------------------------------------------------


def chgjrn(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    library, name = _qualified(partition, command.single("JRN"), "JRN", "*JRN")
    journal = partition.journals.get(qualified(library, name))
    if journal is None:
        raise escape("CPF2105", name, library, "JRN")
    spec = command.single("JRNRCV", "*SAME")
    if spec == "*SAME":
        return
    if spec != "*GEN":
        rcv_library, rcv_name = _qualified(partition, spec, "JRNRCV", "*JRNRCV")
        spec = f"{rcv_library}/{rcv_name}"
    jrn.change_journal(partition, journal, spec, log)


def crtjrnrcv(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    library, name = _qualified(partition, command.single("JRNRCV"), "JRNRCV", "*JRNRCV")
    if library == "*LIBL":
        library = "QGPL"
    threshold = command.single("THRESHOLD", "1500000")
    if threshold == "*NONE":
        threshold_kb = 1_919_999
    elif not threshold.isdigit() or not 1 <= int(threshold) <= 1_000_000_000:
        raise ClSyntaxError("CPD0084", "", "THRESHOLD", threshold)
    else:
        threshold_kb = int(threshold)
    jrn.create_receiver(partition, library, name, threshold_kb=threshold_kb, text=unquote(command.single("TEXT", "''")))
    log.send("CPC7001", name, library)


def chgobjown(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    objtype = command.single("OBJTYPE") or ""
    if objtype != "*JRNRCV":
        raise ClSyntaxError("CPD0084", "", "OBJTYPE", objtype)
    library, name = _qualified(partition, command.single("OBJ"), "OBJ", "*JRNRCV")
    receiver = partition.receivers.get(qualified(library, name))
    if receiver is None:
        raise escape("CPF2105", name, library, "JRNRCV")
    receiver.owner = _name(command.single("NEWOWN"), "NEWOWN", "user profile")
    log.send("CPC2203", name, library, "JRNRCV")


def dltjrnrcv(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    library, name = _qualified(partition, command.single("JRNRCV"), "JRNRCV", "*JRNRCV")
    option = command.single("DLTOPT", "*NONE")
    if option not in ("*NONE", "*IGNINQMSG", "*IGNTGTRCV", "*IGNEXITPGM"):
        raise ClSyntaxError("CPD0084", "", "DLTOPT", option or "")
    receiver = partition.receivers.get(qualified(library, name))
    if receiver is None:
        raise escape("CPF2105", name, library, "JRNRCV")
    if receiver.locked_by_job is not None:
        # The job waiting on CPA7025 still holds the receiver.
        raise escape("CPF9803", "", name, library)
    # DLTJRNRCV's restrictions (IBM CL reference, DLTJRNRCV: "must not be attached to a local journal"; "must not be
    # in the middle of a chain of online receivers ... must be deleted in the same order in which they were
    # detached") are verified; the message IDs sent for them are not (see their catalogue entries).
    if receiver.status is Status.ATTACHED:
        raise _not_deleted(log, "CPF7022", name, library, receiver.journal or "", receiver.journal_library or "")
    if not jrn.is_oldest_in_chain(partition, receiver):
        raise _not_deleted(log, "CPF7024", name, library)

    def delete() -> None:
        # No completion message: success is the absence of an escape (and the receiver gone from the directory).
        jrn.delete_receiver(partition, receiver)

    if receiver.fully_saved or option == "*IGNINQMSG":
        delete()
        return
    # Never fully saved: inquiry CPA7025 goes to QSYSOPR for a job that is not interactive.
    inquiry = post(partition, "QSYS", "QSYSOPR", "CPA7025", name, library, from_user=job)
    inquiry.from_job = job

    def answer(reply: str) -> None:
        receiver.locked_by_job = None
        inquiry.reply = reply
        if reply.upper() == "I":
            delete()
        else:
            raise _not_deleted(log, "CPF7021", name, library)

    if partition.inquiry_reply == "*DFT":
        # Public CL that relies on INQMSGRPY(*DFT) expects the default reply of CPA7025 to be I (delete anyway):
        # the very reason the planner never lets a never-saved receiver reach DLTJRNRCV.
        answer("I")
        return
    receiver.locked_by_job = job
    raise InquiryWait(message_key=inquiry.key, resume=answer)


# A refused DLTJRNRCV ends as IBM i's DLT commands do: the diagnostic that gives the reason, then one escape that only
# sums up. CPF2125 "No objects deleted." is that escape for DLT commands (its text is in IBM/JTOpen); that DLTJRNRCV
# sends it, and the IDs of the diagnostics, are assumed (docs/ibmi-interfaces.md): clients must not key off them.
NOT_DELETED_ESCAPE = "CPF2125"


def _not_deleted(log: JobLog, diagnostic: str, *tokens: object) -> CommandError:
    log.send(diagnostic, *tokens)
    return CommandError(log.send(NOT_DELETED_ESCAPE), log.messages)


# --- save files, save and restore ---------------------------------------------------------------------------


def _save_file(partition: Partition, command: ClCommand, keyword: str) -> SaveFile:
    library, name = _qualified(partition, command.single(keyword), keyword, "*FILE")
    save_file = partition.save_files.get(qualified(library, name))
    if save_file is None:
        if library != "*LIBL":
            _require_library(partition, library)
        raise escape("CPF9812", name, library)
    return save_file


def crtsavf(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    library, name = _qualified(partition, command.single("FILE"), "FILE", "*FILE")
    if library == "*LIBL":
        library = "QGPL"
    _require_library(partition, library)
    if qualified(library, name) in partition.save_files:
        log.send("CPF5813", name, library)
        raise escape("CPF7302", name, library)
    if partition.faults.asp_full:
        raise escape("CPF9898", "Auxiliary storage pool 1 is full; the save file was not created")
    partition.save_files[qualified(library, name)] = SaveFile(
        name=name, library=library, created_at=partition.tick(), text=unquote(command.single("TEXT", "''"))
    )
    log.send("CPC9801", "", name, library, "", "FILE")


def clrsavf(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    save_file = _save_file(partition, command, "FILE")
    save_file.clear()
    log.send("CPC3725", save_file.name, save_file.library)


def dltf(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    save_file = _save_file(partition, command, "FILE")
    del partition.save_files[save_file.key]
    log.send("CPC2191", save_file.name, save_file.library)


def _device_savf(command: ClCommand) -> None:
    device = command.single("DEV")
    if device != "*SAVF":
        # Tape and optical devices are not attached to a simulated partition.
        raise escape("CPF9814", device or "")


def savobj(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    _device_savf(command)
    library = _name(command.single("LIB"), "LIB", "library")
    _require_library(partition, library)
    objtype = command.single("OBJTYPE", "*ALL")
    if objtype not in ("*ALL", "*JRNRCV"):
        raise escape("CPF3770", library)
    save_file = _save_file(partition, command, "SAVF")
    clear = command.single("CLEAR", "*NONE")
    if not save_file.empty and clear not in ("*ALL", "*REPLACE"):
        # IBM i would ask CPA4067 (C G); a save that must not overwrite a backup is cancelled instead.
        raise escape("CPF3770", library)
    free = command.single("STG", "*KEEP") == "*FREE"
    compression = _data_compression(command)
    if partition.faults.asp_full:
        raise escape("CPF9898", "Auxiliary storage pool 1 is full; the save file cannot be extended")
    patterns = [_pattern(v) for v in command.values("OBJ") or []]
    selected = [
        r
        for r in sorted(partition.receivers_in(library), key=lambda r: r.name)
        if any(fnmatch.fnmatchcase(r.name, p) for p in patterns)
    ]
    missing = [p for p in patterns if "*" not in p and not any(r.name == p for r in selected)]
    for name in missing:
        log.send("CPF9801", "", name, library)
    at = partition.tick()
    saved = []
    for receiver in selected:
        attached = receiver.status is Status.ATTACHED
        if attached and free:
            continue  # the storage of an attached receiver cannot be freed
        if attached:
            # IBM: "If you save a journal receiver that is currently attached, you receive a diagnostic message."
            lib.attached_receiver_saved(receiver, log)
        saved.append(SavedObject(receiver=receiver.model_copy(deep=True), saved_at=at, saved_while_attached=attached))
        receiver.saved_at = at
        # Entries written after a save of the attached receiver are not in it: it stays "never fully saved".
        if not attached:
            receiver.fully_saved = True
            receiver.status = Status.FREED if free else Status.SAVED
            if free:
                receiver.size_bytes = 4_096
    if not saved:
        raise escape("CPF3770", library)
    save_file.clear()
    save_file.objects = saved
    save_file.saved_library = library
    _compressed(partition, save_file, compression)
    if missing or len(saved) < len(selected):
        # A partial save to a save file ends with CPF3701 (CPF3771 is a partial save of one library to media):
        # IBM i "Retrieving the device name from save completion messages",
        # https://www.ibm.com/support/knowledgecenter/ssw_ibm_i_72/rzaiu/rzaiusavecomplete.htm
        raise CommandError(
            log.send("CPF3701", str(len(saved)), library, str(len(missing) + len(selected) - len(saved))), log.messages
        )
    log.send("CPC3722", str(len(saved)), library)


def _data_compression(command: ClCommand) -> str:
    """DTACPR: *DEV (the default: compression only on tape, none in a save file), *NO, *YES, *LOW, *MEDIUM, *HIGH."""
    value = command.single("DTACPR", "*DEV") or ""
    if value not in savfdata.DATA_COMPRESSION:
        raise ClSyntaxError("CPD0084", "", "DTACPR", value)
    return value


def _compressed(partition: Partition, save_file: SaveFile, compression: str) -> None:
    """The save's data as written into the save file: its storage, compressed, times the partition's size factor."""
    save_file.compression = compression
    save_file.data_bytes = savfdata.saved_data_bytes(
        save_file.saved_storage_bytes,
        compression,
        partition.save_file_size_factor,
        partition.save_compression_ratios,
    )


def _pattern(value: str) -> str:
    value = unquote(value)
    if value == "*ALL":
        return "*"
    stem = value[:-1] if value.endswith("*") else value
    _name(stem or "A", "OBJ")
    return value


def rstobj(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    _device_savf(command)
    saved_library = _name(command.single("SAVLIB"), "SAVLIB", "library")
    target = command.single("RSTLIB", "*SAVLIB")
    target = saved_library if target == "*SAVLIB" else _name(target, "RSTLIB", "library")
    save_file = _save_file(partition, command, "SAVF")
    patterns = [_pattern(v) for v in command.values("OBJ") or []]
    objtype = command.single("OBJTYPE", "*ALL") or "*ALL"
    lib.restore_objects(partition, save_file, saved_library, target, patterns, objtype, log)


# --- whole libraries ----------------------------------------------------------------------------------------------


def _omits(command: ClCommand, library: str) -> list[lib.Omit]:
    """OMITOBJ((LIB/NAME TYPE) ...) or, for one element, OMITOBJ(LIB/NAME TYPE); names may be generic or *ALL."""
    values = command.values("OMITOBJ")
    if not values or values == ["*NONE"]:
        return []
    elements = [v[1:-1].split() for v in values] if all(v.startswith("(") for v in values) else [values]
    omits = []
    for element in elements:
        if not 1 <= len(element) <= 2:
            raise ClSyntaxError("CPD0084", "", "OMITOBJ", " ".join(element))
        qualified_name = element[0]
        objtype = element[1] if len(element) == 2 else "*ALL"
        if objtype not in lib.OBJECT_TYPES:
            raise ClSyntaxError("CPD0084", "", "OMITOBJ", objtype)
        omit_library, _, name = qualified_name.rpartition("/")
        omit_library = omit_library or "*ALL"
        if omit_library != "*ALL":
            omit_library = _name(omit_library, "OMITOBJ", "library")
        if name != "*ALL":
            _name(name[:-1] if name.endswith("*") and len(name) > 1 else name, "OMITOBJ")
        omits.append(lib.Omit(omit_library, name, objtype))
    return omits


def savlib(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    _device_savf(command)
    library = _name(command.single("LIB"), "LIB", "library")
    omits = _omits(command, library)
    updhst = command.single("UPDHST", "*YES")
    if updhst not in ("*YES", "*NO"):
        raise ClSyntaxError("CPD0084", "", "UPDHST", updhst or "")
    compression = _data_compression(command)
    save_file = _save_file(partition, command, "SAVF")
    if library not in partition.libraries:
        raise escape("CPF3781", library)
    clear = command.single("CLEAR", "*NONE")
    if not save_file.empty and clear not in ("*ALL", "*REPLACE"):
        # As for SAVOBJ: the CPA4067 inquiry is answered by cancelling, never by overwriting a backup.
        raise escape("CPF3770", library)
    if partition.faults.asp_full:
        raise escape("CPF9898", "Auxiliary storage pool 1 is full; the save file cannot be extended")
    lib.save_library(partition, library, save_file, omits, update_history=updhst == "*YES", log=log)
    _compressed(partition, save_file, compression)


def rstlib(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    _device_savf(command)
    library = _name(command.single("SAVLIB"), "SAVLIB", "library")
    omits = _omits(command, library)
    save_file = _save_file(partition, command, "SAVF")
    lib.restore_library(partition, save_file, library, omits, log)


# --- IFS directories (SAV, RST) -------------------------------------------------------------------------------

_SAVE_FILE_PATH = re.compile(r"/QSYS\.LIB/([^/]+)\.LIB/([^/]+)\.FILE", re.IGNORECASE)


def _save_file_device(partition: Partition, command: ClCommand) -> SaveFile:
    """DEV('/QSYS.LIB/LIB.LIB/NAME.FILE'): the save file, by its QSYS.LIB path as SAV and RST take it."""
    device = unquote(command.single("DEV") or "")
    match = _SAVE_FILE_PATH.fullmatch(device)
    if match is None:
        # Tape, optical and other paths are not attached to a simulated partition.
        raise escape("CPF9814", device)
    library, name = _name(match[1], "DEV", "library"), _name(match[2], "DEV")
    save_file = partition.save_files.get(qualified(library, name))
    if save_file is None:
        _require_library(partition, library)
        raise escape("CPF9812", name, library)
    return save_file


def _one_path(command: ClCommand) -> str:
    """OBJ(('path')) or OBJ('path'): one path, included (SIMPLIFICATION: no lists, patterns or *OMIT elements)."""
    values = command.values("OBJ") or []
    elements = [v[1:-1].split() if v.startswith("(") else [v] for v in values]
    if len(elements) != 1 or len(elements[0]) not in (1, 2) or elements[0][1:] not in ([], ["*INCLUDE"]):
        raise ClSyntaxError("CPD0084", "", "OBJ", " ".join(values))
    path = unquote(elements[0][0])
    if not path.startswith("/"):
        raise ClSyntaxError("CPD0084", "", "OBJ", path)
    return path


def sav(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    save_file = _save_file_device(partition, command)
    path = _one_path(command)
    if not save_file.empty:
        # SIMPLIFICATION: IBM i asks (CPA4067) before it writes over a save; the simulator refuses instead.
        raise escape("CPF9898", f"Save file {save_file.key} is not empty; nothing was saved")
    if partition.faults.asp_full:
        raise escape("CPF9898", "Auxiliary storage pool 1 is full; the save file cannot be extended")
    qmgrdir.save_directory(partition, path, save_file, log)
    _compressed(partition, save_file, "*DEV")


def rst(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    save_file = _save_file_device(partition, command)
    qmgrdir.restore_directory(partition, save_file, _one_path(command), log)


def cpytostmf(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    option = command.single("STMFOPT", "*NONE")
    if option not in ("*NONE", "*ADD", "*REPLACE"):
        raise ClSyntaxError("CPD0084", "", "STMFOPT", option or "")
    source, target = unquote(command.single("FROMMBR") or ""), unquote(command.single("TOSTMF") or "")
    # SIMPLIFICATION: *ADD appends to an existing stream file; the simulator only replaces (no client sends *ADD).
    streamfiles.cpytostmf(partition, source, target, option != "*NONE", log)


def dltlib(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    lib.delete_library(partition, _name(command.single("LIB"), "LIB", "library"), log)


def crtjrn(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    library, name = _qualified(partition, command.single("JRN"), "JRN", "*JRN")
    if library == "*LIBL":
        library = "QGPL"
    rcv_library, rcv_name = _qualified(partition, command.single("JRNRCV"), "JRNRCV", "*JRNRCV")
    if rcv_library == "*LIBL":
        rcv_library = library
    manage = command.single("MNGRCV", "*SYSTEM")
    if manage not in ("*SYSTEM", "*USER"):
        raise ClSyntaxError("CPD0084", "", "MNGRCV", manage or "")
    delete = command.single("DLTRCV", "*NO")
    if delete not in ("*YES", "*NO"):
        raise ClSyntaxError("CPD0084", "", "DLTRCV", delete or "")
    msgq_library, msgq = "QSYS", "QSYSOPR"
    if command.single("MSGQ") is not None:
        msgq_library, msgq = _qualified(partition, command.single("MSGQ"), "MSGQ", "*MSGQ")
        if msgq_library == "*LIBL":
            msgq_library = "QSYS" if msgq == "QSYSOPR" else library
    _require_library(partition, library)
    if qualified(library, name) in partition.journals:
        raise escape("CPF7010", name, library, "JRN")
    receiver = partition.receivers.get(qualified(rcv_library, rcv_name))
    if receiver is None:
        raise escape("CPF2105", rcv_name, rcv_library, "JRNRCV")
    if receiver.status is not Status.EMPTY:
        # Only a receiver that has never been attached to a journal can start one.
        raise escape("CPF7013", rcv_name, rcv_library, name)
    jrn.create_journal(
        partition,
        library,
        name,
        receiver,
        system_managed=manage == "*SYSTEM",
        delete_receivers=delete == "*YES",
        message_queue=(msgq_library, msgq),
        text=unquote(command.single("TEXT", "''") or "''"),
    )
    log.send("CPC7002", name, library)


# --- journal displays: WRKJRNA, DSPJRNRCVA, DSPJRN -----------------------------------------------------------------
#
# Read-only. Run through `system` (not an interactive job), OUTPUT(*) prints like OUTPUT(*PRINT) -- the CL reference's
# OUTPUT parameter: "Output requested by a batch job is printed with the job's spooled output" -- and `system` writes
# spooled output to stdout (IBM i PASE system utility). What is verified: which facts each command reports (WRKJRNA:
# the journal's attributes and, with DETAIL(*RCVDIR), the receiver directory with each receiver's status and save
# date, as its F15 display shows; DSPJRNRCVA: attach/detach/save times, size, threshold, first and last sequence
# numbers, previous and next receivers; DSPJRN: the entries of the receiver range, RCVRNG(*CURRENT) by default),
# e.g. WRKJRNA JRN(x) OUTPUT(*PRINT) DETAIL(*RCVDIR) prints the receiver directory (spooled file QPDSPJNA;
# comp.sys.ibm.as400.misc "Journal Receivers Again", 2007). ASSUMED: the exact print layout (columns, spacing, the
# page heading) and the date format (MM/DD/YY HH:MM:SS, the *MDY default); the simulator keeps no journal entries'
# contents, so DSPJRN prints one line per receiver with its sequence range and entry count, not one per entry.
# Nothing here is parsed by mqjournal: the collector reads the same facts from QSYS2 views.

_OUTPUT_VALUES = ("*", "*PRINT")


def _stamp(partition: Partition, moment: datetime | None) -> str:
    # The partition's clock then, DST included, as every IBM i display shows a time (no offset).
    return partition.local(moment).strftime("%m/%d/%y %H:%M:%S") if moment is not None else ""


def _output(command: ClCommand) -> None:
    output = command.single("OUTPUT", "*") or "*"
    if output not in _OUTPUT_VALUES:
        # *OUTFILE is a real value of these commands; the simulator does not write output files.
        raise ClSyntaxError("CPD0084", "", "OUTPUT", output)


def _journal(partition: Partition, command: ClCommand):
    library, name = _qualified(partition, command.single("JRN"), "JRN", "*JRN")
    journal = partition.journals.get(qualified(library, name))
    if journal is None:
        raise escape("CPF2105", name, library, "JRN")
    return journal


def _heading(partition: Partition, title: str, subject: str) -> str:
    return f"{title:<40} {subject:<21} {partition.name:<10} {_stamp(partition, partition.now)}  Page 1\n"


def _field(label: str, value: object, indent: int = 2) -> str:
    return f"{' ' * indent}{label + ' ':.<{40 - indent}}:   {value}\n"


def wrkjrna(partition: Partition, command: ClCommand, log: JobLog, job: str) -> str:
    journal = _journal(partition, command)
    _output(command)
    details = command.values("DETAIL") or ["*ALL"]
    if any(d not in ("*ALL", "*CURATR", "*RCVDIR") for d in details):
        raise ClSyntaxError("CPD0084", "", "DETAIL", " ".join(details))
    out = [_heading(partition, "Work with Journal Attributes", f"{journal.library}/{journal.name}")]
    if {"*ALL", "*CURATR"} & set(details):
        out += [
            _field("Journal", journal.name),
            _field("Library", journal.library, 4),
            _field("Attached receiver", journal.attached or "*NONE"),
            _field("Library", journal.attached_library or "", 4),
            _field("Journal message queue", journal.message_queue),
            _field("Library", journal.message_queue_library, 4),
            _field("Manage receivers", "*SYSTEM" if journal.system_managed else "*USER"),
            _field("Delete receivers", "*YES" if journal.delete_receivers else "*NO"),
            _field("Text", journal.text),
        ]
    if {"*ALL", "*RCVDIR"} & set(details):
        directory = partition.journal_receivers(journal)
        total_kb = sum(r.size_bytes for r in directory) // 1024
        out.append("\n                              Receiver Directory\n")
        out.append(_field("Total size of receivers (in kilobytes)", total_kb))
        out.append("  Receiver    Library     Number  Attach Date/Time   Status      Save Date/Time\n")
        for number, r in enumerate(directory, start=1):
            out.append(
                f"  {r.name:<10}  {r.library:<10}  {number:05d}   {_stamp(partition, r.attached_at):<17}  "
                f"{r.status.value:<10}  {_stamp(partition, r.saved_at)}\n"
            )
    return "".join(out)


def dspjrnrcva(partition: Partition, command: ClCommand, log: JobLog, job: str) -> str:
    library, name = _qualified(partition, command.single("JRNRCV"), "JRNRCV", "*JRNRCV")
    receiver = partition.receivers.get(qualified(library, name))
    if receiver is None:
        raise escape("CPF2105", name, library, "JRNRCV")
    _output(command)
    r = receiver
    return "".join(
        [
            _heading(partition, "Display Journal Receiver Attributes", f"{r.library}/{r.name}"),
            _field("Receiver", r.name),
            _field("Library", r.library, 4),
            _field("Journal", r.journal or "*NONE"),
            _field("Library", r.journal_library or "", 4),
            _field("Threshold (K)", r.threshold_kb),
            _field("Size (K)", r.size_bytes // 1024),
            _field("Status", r.status.value),
            _field("Attached date/time", _stamp(partition, r.attached_at)),
            _field("Detached date/time", _stamp(partition, r.detached_at)),
            _field("Saved date/time", _stamp(partition, r.saved_at)),
            _field("Number of entries", r.entries),
            _field("First sequence number", r.first_sequence if r.first_sequence is not None else ""),
            _field("Last sequence number", r.last_sequence if r.last_sequence is not None else ""),
            _field("Previous receiver", r.previous or ""),
            _field("Library", r.previous_library or "", 4),
            _field("Next receiver", r.next or ""),
            _field("Library", r.next_library or "", 4),
            _field("Text", r.text),
        ]
    )


def dspjrn(partition: Partition, command: ClCommand, log: JobLog, job: str) -> str:
    journal = _journal(partition, command)
    _output(command)
    rng = command.single("RCVRNG", "*CURRENT") or "*CURRENT"
    directory = [r for r in partition.journal_receivers(journal) if r.readable and r.first_sequence is not None]
    if rng == "*CURRENT":
        directory = [r for r in directory if r.status is Status.ATTACHED]
    elif rng != "*CURCHAIN":
        raise ClSyntaxError("CPD0084", "", "RCVRNG", rng)
    if not directory:
        raise escape("CPF7062", journal.name, journal.library)
    out = [_heading(partition, "Display Journal Entries", f"{journal.library}/{journal.name}")]
    out.append("  Receiver    First sequence  Last sequence   Entries     First entry        Last entry\n")
    for r in directory:
        out.append(
            f"  {r.name:<10}  {r.first_sequence:>14}  {r.last_sequence:>14}  {r.entries:>10}  "
            f"{_stamp(partition, r.first_entry_at):<17}  {_stamp(partition, r.last_entry_at)}\n"
        )
    return "".join(out)


# --- MQ clusters ----------------------------------------------------------------------------------------------------


def rfrmqmcl(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    qm = mq.find_queue_manager(partition, _qmgr(command))
    # '*' is every cluster the queue manager belongs to. Any other character value is taken as a cluster name;
    # one the queue manager does not belong to (*ALL among them: it is no special value here) is refused by MQ.
    cluster = unquote(command.single("CLUSTER") or "")
    repos = command.single("REPOS", "*NO")
    if repos not in ("*NO", "*YES"):
        raise ClSyntaxError("CPD0084", "", "REPOS", repos or "")
    mq.refresh_cluster(partition, qm, cluster, repos == "*YES", log)


def chgmqm(partition: Partition, command: ClCommand, log: JobLog, job: str) -> None:
    qm = mq.find_queue_manager(partition, _qmgr(command))
    value = command.single("REPOS")
    if command.single("REPOSNL") not in (None, "*SAME"):
        raise ClSyntaxError("CPD0084", "", "REPOSNL", command.single("REPOSNL") or "")
    if value is None or value == "*SAME":
        if not qm.running:
            raise escape("AMQ8146", qm.name)
        log.send("AMQ8005", "", "", "", "", qm.name)
        return
    name = unquote(value).strip()
    if name in ("", "*NONE"):
        mq.set_repository(partition, qm, None, log)
        return
    if not _MQ_NAME.fullmatch(name):
        raise ClSyntaxError("CPD0084", "", "REPOS", value)
    mq.set_repository(partition, qm, name, log)


COMMANDS: dict[str, Spec] = {
    "RCDMQMIMG": Spec(
        rcdmqmimg, frozenset({"OBJ", "OBJTYPE", "MQMNAME", "DSPJRNDTA", "MQMDIRP"}), frozenset({"OBJ", "OBJTYPE"})
    ),
    "RCRMQMOBJ": Spec(rcrmqmobj, frozenset({"OBJ", "OBJTYPE", "MQMNAME", "MQMDIRP"}), frozenset({"OBJ", "OBJTYPE"})),
    "STRMQM": Spec(strmqm, frozenset({"MQMNAME", "RDEFSYS", "NOCHK"})),
    "ENDMQM": Spec(endmqm, frozenset({"MQMNAME", "OPTION", "ENDCCTJOB", "RCDMQMIMG", "TIMEOUT"})),
    "CHGJRN": Spec(
        chgjrn,
        frozenset({"JRN", "JRNRCV", "SEQOPT", "JRNSTATE", "MNGRCV", "DLTRCV", "TEXT"}),
        frozenset({"JRN"}),
        ("JRN", "JRNRCV"),
    ),
    "CRTJRNRCV": Spec(
        crtjrnrcv, frozenset({"JRNRCV", "ASP", "THRESHOLD", "TEXT", "AUT"}), frozenset({"JRNRCV"}), ("JRNRCV",)
    ),
    "CHGOBJOWN": Spec(
        chgobjown,
        frozenset({"OBJ", "OBJTYPE", "NEWOWN", "CUROWNAUT", "ASPDEV"}),
        frozenset({"OBJ", "OBJTYPE", "NEWOWN"}),
        ("OBJ", "OBJTYPE", "NEWOWN"),
    ),
    "DLTJRNRCV": Spec(dltjrnrcv, frozenset({"JRNRCV", "DLTOPT"}), frozenset({"JRNRCV"}), ("JRNRCV", "DLTOPT")),
    "CRTSAVF": Spec(crtsavf, frozenset({"FILE", "TEXT", "AUT", "ASP", "MAXRCDS"}), frozenset({"FILE"}), ("FILE",)),
    "CLRSAVF": Spec(clrsavf, frozenset({"FILE"}), frozenset({"FILE"}), ("FILE",)),
    "DLTF": Spec(dltf, frozenset({"FILE", "SYSTEM", "RMVCST"}), frozenset({"FILE"}), ("FILE",)),
    "SAVOBJ": Spec(
        savobj,
        frozenset(
            {
                "OBJ",
                "LIB",
                "DEV",
                "OBJTYPE",
                "SAVF",
                "CLEAR",
                "STG",
                "UPDHST",
                "TGTRLS",
                "DTACPR",
                "SAVACT",
                "ACCPTH",
                "PRECHK",
            }
        ),
        frozenset({"OBJ", "LIB", "DEV"}),
        ("OBJ", "LIB", "DEV", "OBJTYPE"),
    ),
    "RSTOBJ": Spec(
        rstobj,
        frozenset({"OBJ", "SAVLIB", "DEV", "OBJTYPE", "SAVF", "RSTLIB", "MBROPT", "ALWOBJDIF", "VOL"}),
        frozenset({"OBJ", "SAVLIB", "DEV"}),
        ("OBJ", "SAVLIB", "DEV", "OBJTYPE"),
    ),
    "SAVLIB": Spec(
        savlib,
        frozenset(
            {
                "LIB",
                "DEV",
                "SAVF",
                "CLEAR",
                "UPDHST",
                "TGTRLS",
                "DTACPR",
                "SAVACT",
                "SAVACTWAIT",
                "SAVACTMSGQ",
                "ACCPTH",
                "PRECHK",
                "OMITOBJ",
                "SPLFDTA",
                "QDTA",
            }
        ),
        frozenset({"LIB", "DEV"}),
        ("LIB", "DEV"),
    ),
    "RSTLIB": Spec(
        rstlib,
        frozenset({"SAVLIB", "DEV", "SAVF", "OMITOBJ", "MBROPT", "ALWOBJDIF", "OPTION", "VOL"}),
        frozenset({"SAVLIB", "DEV"}),
        ("SAVLIB", "DEV"),
    ),
    # SAV and RST take DEV first and OBJ second (IBM i 7.1 CL reference, SAV: "DEV ... Required, Positional 1",
    # "OBJ ... Optional, Positional 2"; http://www.ibm.com/support/knowledgecenter/ssw_ibm_i_71/cl/sav.htm).
    "SAV": Spec(
        sav, frozenset({"DEV", "OBJ", "SUBTREE", "UPDHST", "SAVACT", "OUTPUT"}), frozenset({"DEV"}), ("DEV", "OBJ")
    ),
    "RST": Spec(
        rst, frozenset({"DEV", "OBJ", "SUBTREE", "OPTION", "ALWOBJDIF", "OUTPUT"}), frozenset({"DEV"}), ("DEV", "OBJ")
    ),
    "DLTLIB": Spec(dltlib, frozenset({"LIB", "ASPDEV"}), frozenset({"LIB"}), ("LIB",)),
    "CPYTOSTMF": Spec(
        cpytostmf,
        frozenset(
            {"FROMMBR", "TOSTMF", "STMFOPT", "CVTDTA", "DBFCCSID", "STMFCCSID", "TBL", "ENDLINFMT", "AUT", "STMFCODPAG"}
        ),
        frozenset({"FROMMBR", "TOSTMF"}),
        ("FROMMBR", "TOSTMF"),
    ),
    "CRTJRN": Spec(
        crtjrn,
        frozenset(
            {
                "JRN",
                "JRNRCV",
                "ASP",
                "MSGQ",
                "MNGRCV",
                "DLTRCV",
                "MNGRCVDLY",
                "DLTRCVDLY",
                "RCVSIZOPT",
                "JRNOBJLMT",
                "FIXLENDTA",
                "MINENTDTA",
                "JRNCACHE",
                "TEXT",
                "AUT",
            }
        ),
        frozenset({"JRN", "JRNRCV"}),
        ("JRN", "JRNRCV"),
    ),
    "WRKJRNA": Spec(
        wrkjrna, frozenset({"JRN", "OUTPUT", "DETAIL"}), frozenset({"JRN"}), ("JRN", "OUTPUT"), changes=False
    ),
    "DSPJRNRCVA": Spec(
        dspjrnrcva, frozenset({"JRNRCV", "OUTPUT"}), frozenset({"JRNRCV"}), ("JRNRCV", "OUTPUT"), changes=False
    ),
    # DSPJRN's entry selection (FILE, OBJ, FROMENT, JRNCDE ...) is not modelled, so those keywords are refused.
    "DSPJRN": Spec(dspjrn, frozenset({"JRN", "RCVRNG", "OUTPUT"}), frozenset({"JRN"}), ("JRN",), changes=False),
    "RFRMQMCL": Spec(rfrmqmcl, frozenset({"CLUSTER", "MQMNAME", "REPOS"}), frozenset({"CLUSTER"})),
    "CHGMQM": Spec(chgmqm, frozenset({"MQMNAME", "FORCE", "TEXT", "REPOS", "REPOSNL"})),
}

# CHKOBJ (read-only: `mqjournal doctor` checks authorities with it) lives in authority.py. Its OBJTYPE(*CMD) check
# finds the commands of this table, itself included, so it is given the table's names rather than importing them.
COMMANDS["CHKOBJ"] = Spec(
    functools.partial(chkobj, commands=COMMANDS.keys()),
    frozenset({"OBJ", "OBJTYPE", "MBR", "AUT"}),
    frozenset({"OBJ", "OBJTYPE"}),
    changes=False,
)
