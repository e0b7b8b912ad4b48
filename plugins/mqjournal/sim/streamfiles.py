"""Stream files of a simulated partition: what PASE `cp` makes of a save file, and the `umask`, `mkdir`, `rm` that go
with it, as IBM's ansible `ibmi_fetch` uses them to download a save file (docs/ibmi-interfaces.md, section 5).

What IBM i does, as far as the sources go: PASE `cp /QSYS.LIB/LIB.LIB/NAME.FILE DIR` copies a save file's records
into a stream file byte for byte (ansible-for-i `plugins/action/ibmi_fetch.py` downloads that copy and compares
its checksum with the host's); `rm` removes it. What the simulator does:
- Only stream files copied from a save file are kept (`Partition.stream_files`), holding the save as it was when
  copied; their bytes are the save file's (`savfdata`), so a digest or a download of the copy equals the save
  file's. Directories are only those `mkdir` made (and /tmp); `mkdir -p` makes every missing one of the path (POSIX).
- Messages are AIX's (`cp: SRC: No such file or directory`, `mkdir: cannot create DIR.`): ASSUMED wording; the client
  reads only the exit status and shows the text.
- Modes: a new file is 0666 less the umask. Authority to the save file is QSYS.LIB's (`qsyslib.read_save_file`);
  IFS directory authority is not simulated (SIMPLIFICATION).
"""

from __future__ import annotations

import errno
import posixpath

from mqjournal.sim import savfdata
from mqjournal.sim.joblog import CommandError, JobLog
from mqjournal.sim.model import Partition, StreamFile, qualified
from mqjournal.sim.protocol import ExecResult
from mqjournal.sim.qsyslib import ROOT, read_save_file, resolve, save_file_image


def in_qsys_lib(path: str) -> bool:
    text = posixpath.normpath(posixpath.join("/", path))
    return text.upper() == ROOT or text.upper().startswith(ROOT + "/")


def stream_file(partition: Partition, path: str) -> StreamFile:
    found = partition.stream_files.get(posixpath.normpath(path))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory")
    return found


def file_image(partition: Partition, path: str) -> savfdata.SaveFileImage:
    """What a PASE program opening `path` reads: a save file in QSYS.LIB, or a stream file copied from one."""
    if in_qsys_lib(path):
        return save_file_image(partition, path)
    return savfdata.SaveFileImage.of(stream_file(partition, path).copy_of)


class Pase:
    """`umask`, `mkdir`, `cp`, `rm` for one command line (the umask lasts as long as the shell does)."""

    def __init__(self, partition: Partition) -> None:
        self._partition = partition
        self._umask = 0o022

    def umask(self, args: list[str]) -> ExecResult:
        if not args:
            return ExecResult(0, f"{self._umask:04o}\n")
        try:
            self._umask = int(args[0], 8) & 0o777
        except ValueError:
            return ExecResult(1, "", f"umask: {args[0]}: bad number\n")
        return ExecResult(0)

    def mkdir(self, args: list[str]) -> ExecResult:
        parents = "-p" in args
        err = []
        for path in (posixpath.normpath(a) for a in args if not a.startswith("-")):
            directories = self._partition.directories
            if path in directories or path == "/":
                if not parents:
                    err.append(f"mkdir: cannot create {path}.\n{path}: File exists\n")
                continue
            # -p makes each missing directory of the path, as POSIX mkdir does; without it the parent must exist.
            missing = [path]
            while parents and (parent := posixpath.dirname(missing[-1])) not in directories and parent != "/":
                missing.append(parent)
            if in_qsys_lib(path) or posixpath.dirname(missing[-1]) not in [*directories, "/"]:
                err.append(
                    f"mkdir: cannot create {path}.\n{path}: A file or directory in the path name does not exist.\n"
                )
                continue
            directories.extend(reversed(missing))
        return ExecResult(1 if err else 0, "", "".join(err))

    def cp(self, args: list[str]) -> ExecResult:
        files = [a for a in args if not a.startswith("-")]
        if len(files) != 2:
            return ExecResult(2, "", "Usage: cp [-fhipHILPU] [-d|-e] [-r|-R] [-E{force|ignore|warn}] Source Target\n")
        source, target = files
        if not in_qsys_lib(source):
            return ExecResult(1, "", f"cp: {source}: only save files are simulated as a source\n")
        if self._partition.faults.qsys_pase_copy_refused:
            # ASSUMED wording (AIX's strerror for ENOTSUP); the client reads only the exit status and shows the text.
            return ExecResult(1, "", f"cp: {source}: Operation not supported.\n")
        try:
            read_save_file(self._partition, source)  # the same existence and authority checks as any open
        except OSError as exc:
            return ExecResult(1, "", f"cp: {source}: {exc.strerror}\n")
        where = resolve(source)
        assert where.library is not None and where.name is not None
        save_file = self._partition.save_files[qualified(where.library, where.name)]
        target = posixpath.normpath(target)
        if target in self._partition.directories:
            target = posixpath.join(target, posixpath.basename(where.text))
        if in_qsys_lib(target) or posixpath.dirname(target) not in self._partition.directories:
            return ExecResult(1, "", f"cp: {target}: A file or directory in the path name does not exist.\n")
        self._partition.stream_files[target] = StreamFile(
            path=target, copy_of=save_file.model_copy(deep=True), mode=0o666 & ~self._umask
        )
        return ExecResult(0)

    def rm(self, args: list[str]) -> ExecResult:
        force = any(a.startswith("-") and "f" in a for a in args)
        err = []
        for path in (posixpath.normpath(a) for a in args if not a.startswith("-")):
            if self._partition.stream_files.pop(path, None) is None and not force:
                err.append(f"rm: {path}: A file or directory in the path name does not exist.\n")
        return ExecResult(1 if err else 0, "", "".join(err))


def cpytostmf(partition: Partition, source: str, target: str, replace: bool, log: JobLog) -> None:
    """CPYTOSTMF FROMMBR(source) TOSTMF(target) of a save file: "copies either a database file member or a save file
    to a stream file", with conversion only "when copying a database file member" (IBM i CL reference, CPYTOSTMF,
    ibm.com ssw_ibm_i_73/cl/cpytostmf.htm), so the stream file holds the save file's bytes. A failure is a diagnostic
    naming the object, then CPFA097 "Object not copied" naming FROMMBR: the shape of a real capture of CPYTOSTMF to a
    missing directory (IBM/ibmi-tobi issue #305: CPFA0A9 for the stream file, then CPFA097 for the member).
    SIMPLIFICATION: only save files are simulated as FROMMBR (a member path is refused like a missing object)."""

    def not_copied(diagnostic: str, obj: str) -> CommandError:
        log.send(diagnostic, obj)
        return CommandError(log.send("CPFA097", source), log.messages)

    if not in_qsys_lib(source):
        raise not_copied("CPFA0A9", source)
    try:
        read_save_file(partition, source)  # the same existence and authority checks as any open (*X, *R: ASSUMED)
    except PermissionError:
        raise not_copied("CPFA09C", source) from None
    except OSError:
        raise not_copied("CPFA0A9", source) from None
    where = resolve(source)
    assert where.library is not None and where.name is not None
    save_file = partition.save_files[qualified(where.library, where.name)]
    target = posixpath.normpath(target)
    if in_qsys_lib(target) or posixpath.dirname(target) not in partition.directories:
        raise not_copied("CPFA0A9", target)
    if target in partition.stream_files and not replace:
        raise not_copied("CPFA0A0", target)
    # AUT(*DFT) gives the owner *RWX and the public what the directory gives (ASSUMED from the parameter's name);
    # the simulator keeps it to the owner, as mqjournal's scratch directory is made with umask 077.
    partition.stream_files[target] = StreamFile(path=target, copy_of=save_file.model_copy(deep=True), mode=0o600)
