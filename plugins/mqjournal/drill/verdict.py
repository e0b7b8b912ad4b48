"""What a restore drill's object list says about a copy: pure."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    passed: bool
    problem: str | None = None
    note: str | None = None


def judge(expected: Collection[tuple[str, str]], listed: Collection[tuple[str, str]] | None) -> Verdict:
    """`expected`: the (library, receiver) pairs the catalog says the copy holds; `listed`: the *JRNRCV objects
    QSYS2.SAVE_FILE_OBJECTS listed of the scratch save file (None: the list could not be read).

    Every expected receiver must be listed. A receiver listed that the catalog does not name is noted, not failed: a
    library save holds receivers the catalog records no save of (SAVLIB always takes the attached one). A copy the
    catalog names no receiver in passes once IBM i lists it: there is no receiver a pass could vouch for wrongly."""
    if listed is None:
        return Verdict(False, "the partition could not list the save file's objects (QSYS2.SAVE_FILE_OBJECTS)")
    want, got = set(expected), set(listed)
    if not want:
        # A library saved before any of its receivers was detached: the catalog records no receiver save in it, yet
        # it is the library's backup. Failing it would mark a good library save as proving nothing; what the drill
        # proved (IBM i took the bytes as a save file and read its object list) is said, and nothing more.
        held = ", ".join(f"{lib}/{name}" for lib, name in sorted(got)) or "no receiver"
        return Verdict(True, None, f"the catalog names no receiver in this copy: IBM i took it as a save file ({held})")
    missing = sorted(want - got)
    extra = sorted(got - want)
    if missing:
        shown = ", ".join(f"{lib}/{name}" for lib, name in missing)
        found = f"; it lists {len(got)} receiver(s)" if got else "; it lists no receiver"
        return Verdict(False, f"the restored save file does not list {shown}, which the catalog says it holds{found}")
    note = None
    if extra:
        note = "also lists " + ", ".join(f"{lib}/{name}" for lib, name in extra) + " (not in the catalog's list)"
    return Verdict(True, None, note)
