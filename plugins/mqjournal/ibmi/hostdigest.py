"""The host's own SHA-256 of a save file: what makes a copy in the backup store proof of a backup.

A copy compared only with itself (its size, its SHA-256 re-read from the store) proves that the store kept what
arrived, not that what arrived is the save file: a download of the right length can hold other bytes, and another
job's ``SAVOBJ ... CLEAR(*ALL)`` into the same save file between the check of its content and the download makes
the copy somebody else's save. So a copy counts only when the partition itself vouches for its bytes:

1. the save file's object list is read (QSYS2.SAVE_FILE_OBJECTS) and must hold every receiver the copy will say it
   holds;
2. the partition computes the save file's SHA-256 (a PASE program reading ``/QSYS.LIB/LIB.LIB/NAME.FILE``);
3. the object list is read again and must be unchanged;
4. the copy's SHA-256 must equal that digest (compared after the download: a save file changed after step 2 gives
   other bytes).

Otherwise the bytes are not ours: the copy is not kept, nothing is deleted on its account, and the error says why.
Clean-up asks the same before a DLTF: the host's digest of the save file now must equal the stored copy's.

Which program gives the digest (docs/ibmi-interfaces.md, section 5, with sources): `openssl dgst -sha256` of IBM's
5733-SC1 (IBM Portable Utilities: OpenSSH, OpenSSL, zlib for PASE) in /QOpenSys/usr/bin, then the open-source RPM
openssl in /QOpenSys/pkgs/bin, then GNU coreutils' `sha256sum` (RPM coreutils-gnu). The client finds which one
answers by digesting /dev/null (whose SHA-256 is known) once per session, as `capabilities` reads the SQL services
once per session. Db2's HASH_SHA256 over GET_BLOB_FROM_FILE is not used: GET_BLOB_FROM_FILE reads source stream and
source physical files under commitment control into a BLOB of at most 2 GB, which a save file of receivers exceeds.
A host where none answers has no proof to give: no copy from it counts, and `mqjournal doctor` says so.
"""

from __future__ import annotations

import hashlib
import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

from mqjournal.errors import MqJournalError
from mqjournal.ibmi import commands
from mqjournal.ibmi.backups import save_file_contents
from mqjournal.ibmi.transport import IbmiSession

__all__ = [
    "TOOLS",
    "CopyNotVouched",
    "DigestTool",
    "HostDigestError",
    "HostProof",
    "Listing",
    "NoHostDigest",
    "NotOurBytes",
    "SaveFileAbsent",
    "SaveFileUnreadable",
    "check_sha256",
    "digest_listed",
    "discover",
    "file_sha256",
    "parse_digest",
    "read_listing",
    "read_proof",
]

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


@dataclass(frozen=True)
class DigestTool:
    name: str  # commands.file_sha256's tool
    program: str
    brought_by: str


TOOLS = (
    DigestTool(
        "openssl",
        "/QOpenSys/usr/bin/openssl",
        "5733-SC1 IBM Portable Utilities (OpenSSH, OpenSSL and zlib for PASE)",
    ),
    DigestTool("openssl-rpm", "/QOpenSys/pkgs/bin/openssl", "the open-source RPM openssl (yum install openssl)"),
    DigestTool("sha256sum", "/QOpenSys/pkgs/bin/sha256sum", "the open-source RPM coreutils-gnu"),
)
"""In the order the client tries them: IBM's licensed program first, then the open-source RPMs."""

TRY_TOOLS = ", ".join(t.program for t in TOOLS)
INSTALL = (
    "install 5733-SC1 option 1 (IBM Portable Utilities: OpenSSL in PASE), or the open-source RPM openssl or "
    "coreutils-gnu (yum install openssl), and give the profile *X on its directory"
)


class HostDigestError(MqJournalError):
    """The host did not vouch for a copy's bytes: the copy is not kept (or, in clean-up, the save file stays)."""


class NoHostDigest(HostDigestError):
    """The partition has no program that computes a file's SHA-256: no copy from it can be proven."""


class NotOurBytes(HostDigestError):
    """The save file on the host is not (or no longer) the one the copy describes, or its digest could not be read."""


class SaveFileAbsent(NotOurBytes):
    """The save file is not on the host (QSYS2.OBJECT_STATISTICS does not list it)."""


class SaveFileUnreadable(NotOurBytes):
    """The digest program may not read the save file (Permission denied): the profile lacks *R to it or *X on its
    library."""


class CopyNotVouched(HostDigestError):
    """A downloaded copy's SHA-256 differs from the host's digest of the save file: the bytes are not the save's."""


# "hex *path" (coreutils format: openssl dgst -r, sha256sum with a '\' first when the name was escaped) or
# "SHA256(path)= hex" / "SHA2-256(path)= hex" (openssl dgst without -r, OpenSSL 1.x / 3.x).
_DIGEST_LINE = re.compile(r"^(?:\\?([0-9a-f]{64})\s+\*?\S.*|SHA2?-?256\(.*\)= ([0-9a-f]{64}))$")


def parse_digest(stdout: str) -> str | None:
    """The SHA-256 in a digest program's answer for one file, or None when the answer is not one."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if len(lines) != 1:
        return None
    match = _DIGEST_LINE.match(lines[0].strip())
    return None if match is None else (match.group(1) or match.group(2))


_CACHE: weakref.WeakKeyDictionary[IbmiSession, DigestTool | None] = weakref.WeakKeyDictionary()


def discover(session: IbmiSession) -> DigestTool | None:
    """The first of TOOLS that gives the known SHA-256 of /dev/null on this partition (None: none does); asked once
    per session. A program that is missing (exit 126/127), fails, or answers another digest is passed over."""
    if session in _CACHE:
        return _CACHE[session]
    found = None
    for tool in TOOLS:
        out = session.run(commands.file_sha256(tool.name, commands.DIGEST_PROBE))
        if out.exit_status == 0 and parse_digest(out.stdout) == EMPTY_SHA256:
            found = tool
            break
    _CACHE[session] = found
    return found


def _require_tool(session: IbmiSession, where: str) -> DigestTool:
    tool = discover(session)
    if tool is None:
        raise NoHostDigest(
            where,
            f"the host offers no SHA-256 of a file (none of {TRY_TOOLS} answered), so no copy of its save files can "
            "be compared with the host's bytes: none counts as a backup and no receiver is deleted on its account",
            INSTALL,
        )
    return tool


def _host_sha256(session: IbmiSession, tool: DigestTool, path: str, where: str) -> str:
    out = session.run(commands.file_sha256(tool.name, path))
    digest = parse_digest(out.stdout) if out.exit_status == 0 else None
    if digest is None:
        said = (out.stderr.strip() or out.stdout.strip())[-300:] or f"exit status {out.exit_status}"
        # Both print strerror(EACCES): OpenSSL "Can't open F for reading, ...", sha256sum "sha256sum: F: ...".
        error = SaveFileUnreadable if "Permission denied" in said else NotOurBytes
        raise error(
            where,
            f"{tool.program} could not digest {path} ({said}); nothing proves a copy of it",
            "check the save file exists and the profile has *R to it and *X on its library, then run the step again",
        )
    return digest


def file_sha256(session: IbmiSession, path: str, where: str) -> str:
    """The host's SHA-256 of a save file or a scratch stream file (streamcopy), by the program `discover` found."""
    return _host_sha256(session, _require_tool(session, where), path, where)


@dataclass(frozen=True)
class HostProof:
    """The host's digest of a save file, read while its object list stayed `receivers`."""

    host: str
    save_file_path: str  # LIB/NAME
    sha256: str
    receivers: frozenset[tuple[str, str]]
    tool: str  # the program that computed it


@dataclass(frozen=True)
class Listing:
    """A save file's object list as read before its digest (step 1), with the program that will digest it."""

    host: str
    library: str
    name: str
    receivers: frozenset[tuple[str, str]]
    tool: DigestTool

    @property
    def where(self) -> str:
        return f"{self.host} {self.library}/{self.name}"


def read_listing(session: IbmiSession, library: str, name: str, expected: Iterable[tuple[str, str]] = ()) -> Listing:
    """Step 1: save file `library`/`name`'s object list, which must hold every (library, receiver) of `expected`.
    NoHostDigest when the partition has no digest program (nothing is read then); NotOurBytes (SaveFileAbsent)
    otherwise when the list is not what a proof needs."""
    path = f"{library}/{name}"
    where = f"{session.host} {path}"
    tool = _require_tool(session, where)
    before = save_file_contents(session, [path])[path]
    if before.exists is False:
        raise SaveFileAbsent(
            where, "the save file is not on the host", "look for the save file's new name in the catalog"
        )
    if before.receivers is None:
        raise NotOurBytes(
            where,
            "its object list could not be read on the host, so nothing says what its bytes hold",
            "check the save file exists (the catalog names it) and the profile may read it, then run the step again",
        )
    missing = sorted(set(expected) - before.receivers)
    if missing:
        raise NotOurBytes(
            where,
            f"the save file on the host no longer lists {' '.join(f'{lib}/{rcv}' for lib, rcv in missing)}: another "
            "save went into it since its content was checked, so its bytes are not this save's; nothing of it "
            "counts as a backup",
            "find the job that saves into this save file (DSPSAVF, the history log), keep the receivers, and save "
            "them again into a save file of their own (the next save step does)",
        )
    return Listing(session.host, library, name, before.receivers, tool)


def digest_listed(session: IbmiSession, listing: Listing) -> HostProof:
    """Steps 2 and 3: the host's SHA-256 of the save file `listing` read, then its object list again, which must be
    unchanged. It may run while the save file is downloaded (transfer): a copy still counts only when its bytes hash
    to this digest, so a save file that changed during either read gives a copy that does not."""
    path = f"{listing.library}/{listing.name}"
    digest = _host_sha256(session, listing.tool, commands.save_file_path(listing.library, listing.name), listing.where)
    after = save_file_contents(session, [path])[path]
    if after.receivers != listing.receivers:
        raise NotOurBytes(
            listing.where,
            "its object list changed while the host computed its digest: another save went into it, so the digest is "
            "of bytes that are not this save's",
            "run the step again once nothing else saves into this save file",
        )
    return HostProof(session.host, path, digest, listing.receivers, listing.tool.program)


def read_proof(session: IbmiSession, library: str, name: str, expected: Iterable[tuple[str, str]] = ()) -> HostProof:
    """The host's SHA-256 of save file `library`/`name`: its object list read first (it must hold every (library,
    receiver) of `expected`), the digest, then the object list again (it must be unchanged). NoHostDigest when the
    partition has no digest program; NotOurBytes otherwise when any of it fails."""
    return digest_listed(session, read_listing(session, library, name, expected))


def check_sha256(proof: HostProof, sha256: str) -> None:
    """CopyNotVouched unless a copy whose bytes hash to `sha256` holds the bytes the host digested."""
    if sha256 != proof.sha256:
        raise CopyNotVouched(
            f"{proof.host} {proof.save_file_path}",
            f"the copy's SHA-256 {sha256} is not the host's {proof.sha256} ({proof.tool}): the bytes that "
            "arrived are not the save file's (changed on the host since its digest, or damaged on the way); the copy "
            "was removed from the store and nothing counts as backed up off the partition",
            "run the step again; if it repeats, look at what else writes the save file and at the link to the store",
        )
