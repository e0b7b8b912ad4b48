"""Space on the partition's ASP: how large a save file of receivers is, and what a run nets.

The one place both the approval gate (before the save: an estimate) and the run report (after it: the save files'
real sizes) get net space from, so that the two say the same thing about the same run:

    net = bytes of the receivers the run deletes - bytes of the save files the run writes on the partition

A save file stays on the ASP until the cleanup step removes it (`keep_on_host_days` after its copy verifies), so a
run that saves more than it deletes nets a negative number.

Data compression (SAVOBJ's DTACPR parameter; IBM i CL reference, SAVOBJ, ssw_ibm_i_73 cl/savobj.htm). IBM documents
the values and their direction, never a ratio (quoted in docs/ibmi-interfaces.md):

- *NO: no data compression;
- *YES: to a save file, software compression: low (the SNA algorithm), the same as *LOW;
- *LOW: the SNA algorithm; "usually faster and the compressed data is usually larger" than *MEDIUM or *HIGH;
- *MEDIUM: the TERSE algorithm; slower than *LOW, faster than *HIGH, data usually smaller than *LOW's;
- *HIGH: the LZ1 algorithm; the slowest, usually the smallest.

Software compression costs the partition's CPU ("This situation can require a considerable amount of CPU", IBM i
6.1 Performance Capabilities Reference, chapter 15). `EXPECTED_RATIO` is what a save file of that value is expected
to hold per byte saved: ASSUMED from the one published measurement found (rpgpgm.com, 2014: a 12 MB physical file
saved to a save file came to 99.9 % with *NO, 47.5 % with *YES and *LOW, 22.1 % with *MEDIUM, 14.9 % with *HIGH,
taking 66, 121, 374 and 1801 seconds). Journal receivers of MQ persistent messages compress by their payloads; a
site that measures its own ratio sets it in the policy (`save_compression_ratio`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

DataCompression = Literal["*NO", "*YES", "*LOW", "*MEDIUM", "*HIGH"]
"""The DTACPR values mqjournal sends (*DEV, the command's default, is *NO to a save file: not offered)."""

DATA_COMPRESSION_VALUES: tuple[str, ...] = get_args(DataCompression)

EXPECTED_RATIO: Mapping[str, float] = {
    "*NO": 1.0,
    "*YES": 0.475,
    "*LOW": 0.475,
    "*MEDIUM": 0.221,
    "*HIGH": 0.149,
}
"""Bytes of save file per byte of receiver saved, by DTACPR value (assumed: see the module's docstring)."""


def data_compression(value: str) -> DataCompression:
    """A DTACPR value from the policy or a command, validated: a CL token is built only from one of these."""
    if value not in DATA_COMPRESSION_VALUES:
        raise ValueError(f"DTACPR({value}) is not one of {', '.join(DATA_COMPRESSION_VALUES)}")
    return value  # type: ignore[return-value]  # checked against the Literal's values just above


def estimated_save_file_bytes(receiver_bytes: int, compression: str, ratio: float | None = None) -> int:
    """What a save file of receivers of `receiver_bytes` is expected to take, saved with DTACPR(`compression`);
    `ratio` (the policy's `save_compression_ratio`) replaces the expected one when a site measured its own."""
    factor = EXPECTED_RATIO[data_compression(compression)] if ratio is None else ratio
    return round(max(receiver_bytes, 0) * factor)


def net_bytes(freed_bytes: int, save_file_bytes: int) -> int:
    """Net space on the ASP: the receivers a run deletes less the save files it writes there (negative: it grew)."""
    return freed_bytes - save_file_bytes
