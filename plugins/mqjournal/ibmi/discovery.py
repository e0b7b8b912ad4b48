"""Find the queue managers of a partition and the facts a collection needs once per host.

MQ's mqs.ini (in the IFS) maps each queue manager name to its library; QSYS2.JOURNAL_INFO lists the AMQxJRN
journals in those libraries. A fleet file may name the queue managers instead; they are then checked against it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from mqjournal.errors import InvalidName, MqJournalError
from mqjournal.fleet import QueueManagerConfig
from mqjournal.ibmi import commands
from mqjournal.ibmi.collector import Target
from mqjournal.ibmi.db2out import Row, check_sql_runner, parse_results, tables, value
from mqjournal.ibmi.readings import PartitionZone, clock_zone
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.names import journal_instance, journal_name, object_name, qmgr_name


class DiscoveryFailed(MqJournalError):
    pass


@dataclass(frozen=True)
class HostSurvey:
    tz: PartitionZone  # the offset in force at each local time the partition gives or is sent
    targets: list[Target]
    missing: list[tuple[str, str]] = field(default_factory=list)  # (queue manager, why) named but not found


def parse_mqs_ini(text: str) -> dict[str, str]:
    """{queue manager name: library} from the QueueManager stanzas; names that fail validation are skipped."""
    found: dict[str, str] = {}
    stanza: dict[str, str] | None = None

    def close() -> None:
        if stanza and "Name" in stanza and "Library" in stanza:
            # Never let a name we cannot validate reach a command.
            with contextlib.suppress(InvalidName):
                found[qmgr_name(stanza["Name"])] = object_name(stanza["Library"], what="library")

    for line in text.splitlines():
        if line and not line[0].isspace():
            close()
            stanza = {} if line.strip() == "QueueManager:" else None
        elif stanza is not None and "=" in line:
            key, _, value = line.strip().partition("=")
            stanza[key.strip()] = value.strip()
    close()
    return found


def survey(
    session: IbmiSession, host: str, configured: list[QueueManagerConfig], *, time_zone_rules: str | None = None
) -> HostSurvey:
    """The host's queue manager journals and its time zone (`time_zone_rules`: the fleet file's, for the host)."""
    out = session.run(commands.sql(commands.host_clock(), commands.mq_journals(), runner=session.sql_runner))
    check_sql_runner(session, out)
    results = tables(parse_results(out.stdout))
    if results is None or len(results) != 2:
        raise DiscoveryFailed(
            host,
            f"could not read the clock and the MQ journals: {out.stdout.strip()[-300:] or out.stderr.strip()}",
            "check the db2 utility and the user profile's authority to QSYS2.JOURNAL_INFO",
        )
    clock, journals = results
    tz = clock_zone(clock[0], host, rules=time_zone_rules)
    by_library: dict[str, list[Row]] = {}
    for row in journals:
        by_library.setdefault(value(row, "JOURNAL_LIBRARY"), []).append(row)

    if configured:
        wanted = [(q.name, q.qmgr_library, q.instance) for q in configured]
    else:
        ini = session.run(commands.read_mqs_ini())
        if ini.exit_status != 0:
            raise DiscoveryFailed(
                host,
                f"cannot read {commands.MQS_INI}: {ini.stderr.strip()}",
                "name the queue managers in the fleet file",
            )
        wanted = []
        for name, library in sorted(parse_mqs_ini(ini.stdout).items()):
            for row in by_library.get(library, []):
                wanted.append((name, library, journal_instance(value(row, "JOURNAL_NAME"))))

    targets: list[Target] = []
    missing: list[tuple[str, str]] = []
    for name, library, instance in wanted:
        journal = journal_name(instance)
        found = next((r for r in by_library.get(library, []) if r["JOURNAL_NAME"] == journal), None)
        if found is None:
            missing.append((name, f"journal {library}/{journal} not found on {host}"))
            continue
        queue = (found["MESSAGE_QUEUE_LIBRARY"] or "QSYS", found["MESSAGE_QUEUE"] or "QSYSOPR")
        targets.append(Target(qmgr=name, library=library, journal=journal, instance=instance, journal_queue=queue))
    return HostSurvey(tz=tz, targets=targets, missing=missing)
