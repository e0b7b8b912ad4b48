"""runmqsc's DISPLAY QMSTATUS answer read as IBM MQ writes it (docs/linux-interfaces.md, section 4)."""

from __future__ import annotations

import pytest

from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.qmstatus import QmStatusError, attributes, log_points

# Verbatim, MQ 9.4.2.0 on Linux (instana/serviceability agent/ibm-mq/README.md): a circular queue manager.
CIRCULAR = """5724-H72 (C) Copyright IBM Corp. 1994, 2025.
Starting MQSC for queue manager QM1.


     1 : DISPLAY QMSTATUS ALL
AMQ8705I: Display Queue Manager Status Details.
   QMNAME(QM1)                             TYPE(QMGR)
   STATUS(RUNNING)                         AUTOCLUS(NONE)
   CHINIT(RUNNING)                         CHKPTCNT(217)
   CHKPTOPS(474)                           CHKPTSZ(0)
   CMDSERV(RUNNING)                        CONNS(24)
   DATFSSZ(SHARED)                         DATFSUSE(SHARED)
   DATPATH(/var/mqm/qmgrs/QM1)             DISKLSN(<0:0:27:53638>)
   GRPLSN( )                               GRPNAME( )
   GRPROLE(NOTCONFIG)                      HOSTNAME(ibmmq1)
   INSTANCE( )                             INSTDESC( )
   INSTNAME(Installation1)                 INSTPATH(/opt/mqm)
   LDAPCONN(INACTIVE)                      LOGEXTSZ(16392)
   LOGFSSZ(SHARED)                         LOGFSUSE(SHARED)
   LOGINUSE(5)                             LOGPATH(/var/mqm/log/QM1/active/)
   LOGPRIM(3)                              LOGSEC(2)
   LOGSTRDA(2025-04-26)                    LOGSTRL(<0:0:27:13701>)
   LOGSTRTI(11:32:56)                      LOGTYPE(CIRCULAR)
   LOGUTIL(5)                              QMFSSZ(253824)
   QMFSUSE(11)                             QUORUM( )
   REUSESZ(0)                              STANDBY(NOPERMIT)
   STARTDA(2025-04-27)                     STARTTI(03.38.01)
   UNICLUS( )
One MQSC command read.
No commands have a syntax error.
All valid MQSC commands were processed.
"""

# The same layout with a linear log's points (assumed: no linear capture was found; the values are the lab report's).
LINEAR = """     1 : DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG ARCHLOG LOGPATH LOGTYPE
AMQ8705I: Display Queue Manager Status Details.
   QMNAME(NHARAPP)                         TYPE(QMGR)
   STATUS(RUNNING)                         ARCHLOG( )
   CURRLOG(S0000057.LOG)                   LOGPATH(/var/mqm/log/NHARAPP/active/)
   LOGTYPE(LINEAR)                         MEDIALOG(S0000000.LOG)
   RECLOG(S0000056.LOG)
One MQSC command read.
"""


def test_every_attribute_of_a_real_answer_is_read_with_empty_values_as_blank():
    found = attributes(CIRCULAR)
    assert found["QMNAME"] == "QM1" and found["LOGPATH"] == "/var/mqm/log/QM1/active/"
    assert found["DISKLSN"] == "<0:0:27:53638>" and found["GRPLSN"] == "" and found["UNICLUS"] == ""
    assert found["STARTTI"] == "03.38.01" and found["LOGSTRTI"] == "11:32:56"
    assert len(found) == 43


def test_a_circular_log_has_no_points_to_plan_on():
    with pytest.raises(QmStatusError, match=r"no CURRLOG, RECLOG, MEDIALOG.*LOGTYPE CIRCULAR"):
        log_points(attributes(CIRCULAR))


def test_a_linear_log_gives_its_current_restart_and_media_extents():
    p = log_points(attributes(LINEAR))
    assert (p.current, p.restart, p.media) == (Extent(57), Extent(56), Extent(0))
    assert p.oldest_needed == Extent(0)


def test_an_answer_without_status_details_is_refused_with_what_runmqsc_said():
    syntax = "     1 : DISPLAY QMSTATUS TYPE(LOG)\nAMQ8405I: Syntax error detected at or near end of command segment"
    with pytest.raises(QmStatusError, match="AMQ8405I"):
        attributes(syntax)


def test_a_value_with_parentheses_of_its_own_is_read_whole():
    answer = "AMQ8705I: Display Queue Manager Status Details.\n   REPLADDR(host.example.com(9414))\n"
    assert attributes(answer) == {"REPLADDR": "host.example.com(9414)"}


def test_the_next_commands_echo_ends_the_status_details() -> None:
    two = LINEAR.replace("One MQSC command read.\n", "") + (
        "     2 : DISPLAY QMGR LOGGEREV\nAMQ8408I: Display Queue Manager details.\n"
        "   QMNAME(NHARAPP)                         LOGGEREV(ENABLED)\n"
    )

    found = attributes(two)

    assert found["RECLOG"] == "S0000056.LOG" and "LOGGEREV" not in found
