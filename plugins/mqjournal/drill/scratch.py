"""The scratch save files a restore drill writes into: names no save of mqjournal or of a site can take by accident.

A scratch save file is named DRL and seven digits (DRL0000001 ...): mqjournal's own save files are named for a
queue manager library and a day (names.save_file_names: QM library prefix, day of the year, a letter), never
starting DRL with digits only after it. A site's object of the same name in the scratch library is not touched:
CRTSAVF of a taken name fails (CPF5813) and the drill takes the next number, and DLTF is sent only for a name this
drill created (`is_scratch` and the drill's own record of its CRTSAVF), never for a name found on the host.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mqjournal.errors import InvalidName
from mqjournal.names import object_name

PREFIX = "DRL"
DIGITS = 7
_SCRATCH = re.compile(rf"{PREFIX}\d{{{DIGITS}}}")

# Libraries a scratch save file may not go into: IBM's own (any Q library but the user ones IBM ships for that),
# and QTEMP, which each SSH command's job has a fresh one of (the upload would not find the CRTSAVF's file).
_USER_Q_LIBRARIES = frozenset({"QGPL", "QGPL38", "QUSRSYS", "QS36F", "QUSER38"})


def scratch_library(name: str) -> str:
    """The scratch library, validated: an IBM i name, not QTEMP, not an IBM library."""
    library = object_name(name, what="library")
    if library == "QTEMP" or (library.startswith("Q") and library not in _USER_Q_LIBRARIES):
        raise InvalidName(
            library,
            "a restore drill's scratch save files may not go into QTEMP (a new one for each command) or an IBM library",
            "set MQJOURNAL_DRILL_LIBRARY to a user library (QGPL, or one made for drills with CRTLIB)",
        )
    return library


def scratch_name(number: int) -> str:
    if not 0 < number < 10**DIGITS:
        raise ValueError(f"a scratch save file number is 1 to {10**DIGITS - 1}, not {number}")
    return f"{PREFIX}{number:0{DIGITS}d}"


def is_scratch(name: str) -> bool:
    """Whether `name` is a drill's scratch save file name: the only names a drill ever deletes."""
    return _SCRATCH.fullmatch(name) is not None


def names_from(start: int, tries: int) -> Iterator[str]:
    """`tries` scratch names from number `start`, wrapping after the last."""
    for i in range(tries):
        yield scratch_name((start - 1 + i) % (10**DIGITS - 1) + 1)
