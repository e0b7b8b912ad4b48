"""qm.ini's Log: stanza read as MQ writes it (docs/linux-interfaces.md, section 1)."""

from __future__ import annotations

import pytest

from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxmq.qmini import QmIniError, log_config

# The Log: stanza of a captured qm.ini (docs/linux-interfaces.md: "a Copy of qm.ini in AWS"), in a file around it.
CIRCULAR = """#*******************************************************************#
ExitPath:
   ExitsDefaultPath=/var/mqm/exits/
Log:
   LogPrimaryFiles=6
   LogSecondaryFiles=4
   LogFilePages=4096
   LogType=CIRCULAR
   LogBufferPages=32
   LogPath=/var/mqm/log/QMGRNAME/
   LogWriteIntegrity=TripleWrite
Service:
   Name=AuthorizationService
"""


def linear(management: str | None) -> str:
    line = f"   LogManagement={management}\n" if management else ""
    return f"Log:\n   LogPrimaryFiles=3\n   LogFilePages=8192\n   LogType=LINEAR\n{line}   LogPath=/var/mqm/log/QM1/\n"


def test_a_captured_log_stanza_is_read_with_its_path_and_sizes():
    log = log_config(CIRCULAR)
    assert (log.log_type, log.linear, log.primary_files, log.secondary_files) == ("CIRCULAR", False, 6, 4)
    assert log.extent_bytes == 16 * 1024 * 1024 and log.active_directory == "/var/mqm/log/QMGRNAME/active"


@pytest.mark.parametrize(
    ("written", "management"),
    [("Archive", LogManagement.ARCHIVE), ("Automatic", LogManagement.AUTOMATIC), (None, LogManagement.MANUAL)],
)
def test_log_management_is_read_and_its_absence_is_manual(written, management):
    log = log_config(linear(written))
    assert log.linear and log.management is management and log.secondary_files == 2


def test_a_log_the_planner_would_misread_is_refused():
    with pytest.raises(QmIniError, match="LogManagement"):
        log_config(linear("Sometimes"))
    with pytest.raises(QmIniError, match="0 Log: stanzas"):
        log_config("Service:\n   Name=x\n")
    with pytest.raises(QmIniError, match="no LogPath"):
        log_config("Log:\n   LogType=LINEAR\n")
