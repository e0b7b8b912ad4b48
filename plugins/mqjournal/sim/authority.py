"""CHKOBJ: the read-only CL command `mqjournal doctor` asks "may this profile do X to that object?" with.

IBM i's Check Object (CHKOBJ) command checks that an object exists and that the job's user has the authorities
named in AUT (special authorities, group profiles and *PUBLIC included); it changes nothing. Escapes: CPF9801
"Object &2 in library &3 not found.", CPF9810 "Library &1 not found.", CPF9802 "Not authorized to object &2 in
&3." (IDs and texts: the CHKOBJ command page lists CPF9801/CPF9802/CPF9810 among its escape messages - assumed, the
page was not retrieved; texts from the message catalogue of sim/messages.py). On success it sends nothing.

The simulator answers from `Partition.user_profile`: *ALLOBJ passes everything; otherwise what the fleet file
withholds (`system.withheld_authorities`) is refused and everything else is granted. Real IBM i computes it from the
object's owner, private authorities, group profiles and *PUBLIC; the simulator does not model those.
"""

from __future__ import annotations

from collections.abc import Collection

from mqjournal.sim import journal as jrn
from mqjournal.sim.clparse import ClCommand, unquote
from mqjournal.sim.joblog import JobLog, escape
from mqjournal.sim.model import Partition

LIBRARY_LIST = ("QSYS", "QSYS2", "QHLPSYS", "QUSRSYS", "QGPL", "QTEMP")

_OBJECT_AUTHORITIES = ("*OBJEXIST", "*OBJMGT", "*OBJOPR", "*OBJALTER", "*OBJREF")
_DATA_AUTHORITIES = ("*READ", "*ADD", "*UPD", "*DLT", "*EXECUTE")
# The system-defined authorities as sets of the specific ones (IBM i Security Reference).
_EXPANDS = {
    "*ALL": frozenset(_OBJECT_AUTHORITIES + _DATA_AUTHORITIES),
    "*CHANGE": frozenset({"*OBJOPR", "*READ", "*ADD", "*UPD", "*DLT", "*EXECUTE"}),
    "*USE": frozenset({"*OBJOPR", "*READ", "*EXECUTE"}),
}
VALID_AUTHORITIES = frozenset({*_EXPANDS, *_OBJECT_AUTHORITIES, *_DATA_AUTHORITIES, "*AUTLMGT", "*NONE"})
OBJECT_TYPES = frozenset({"*LIB", "*CMD", "*JRNRCV", "*JRN", "*FILE", "*USRSPC", "*MSGQ"})


def expand(authorities: list[str] | tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for a in authorities:
        out |= _EXPANDS.get(a, {a} if a not in ("*NONE", "*AUTLMGT") else set())
    return frozenset(out)


def _exists(partition: Partition, library: str, name: str, objtype: str, commands: Collection[str]) -> bool:
    if objtype == "*LIB":
        return name in partition.libraries
    if objtype == "*CMD":
        return library in ("QSYS", "QMQM") and name in commands
    if objtype == "*MSGQ" and (library, name) == ("QSYS", "QSYSOPR"):
        return True  # the system operator's queue is always there (the simulator creates queues on first message)
    return partition.object_exists(library, name, objtype)


def withheld(partition: Partition, library: str, name: str, objtype: str, wanted: frozenset[str]) -> frozenset[str]:
    """Which of `wanted` the signed-on profile lacks to LIBRARY/NAME (nothing with *ALLOBJ)."""
    profile = partition.user_profile
    if "*ALLOBJ" in profile.special_authorities:
        return frozenset()
    lacking: set[str] = set()
    for rule in profile.withheld:
        # For a library (*LIB) the rule's `library` is the library itself.
        target = (
            rule.library == name
            if objtype == "*LIB"
            else (rule.library == library and jrn.generic_match(rule.name, name))
        )
        if rule.objtype == objtype and target:
            lacking |= expand(rule.authorities) & wanted
    return frozenset(lacking)


def chkobj(partition: Partition, command: ClCommand, log: JobLog, job: str, *, commands: Collection[str]) -> None:
    """CHKOBJ; `commands` are the CL commands the simulator has, the objects an OBJTYPE(*CMD) check finds."""
    raw = unquote(command.single("OBJ") or "")
    library, _, name = raw.upper().rpartition("/")
    objtype = (command.single("OBJTYPE") or "").upper()
    if objtype not in OBJECT_TYPES:
        raise escape("CPF9801", "", name, library or "*LIBL")
    authorities = [a.upper() for a in (command.values("AUT") or ["*NONE"])]
    if objtype == "*LIB":
        library = "QSYS"
    elif library in ("", "*LIBL"):
        library = next((lib for lib in LIBRARY_LIST if _exists(partition, lib, name, objtype, commands)), "*LIBL")
    elif library == "*CURLIB":
        library = "QGPL"
    elif library not in partition.libraries and library != "QSYS":
        raise escape("CPF9810", library)
    if not _exists(partition, library, name, objtype, commands):
        raise escape("CPF9801", "", name, library)
    if withheld(partition, library, name, objtype, expand(authorities)):
        raise escape("CPF9802", "", name, library)
