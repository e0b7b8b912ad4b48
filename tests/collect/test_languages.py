"""The collector reads the same snapshot from partitions whose jobs speak German or use other date formats.

IBM i shows message texts in the job's language and date format (QSYS2.MESSAGE_QUEUE_INFO MESSAGE_TEXT, `system`
output); the replacement data (MESSAGE_TOKENS) is the same everywhere, and it is all the collector reads.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from mqjournal import mqmessages
from mqjournal.fleet import HostConfig, PartitionSystemConfig, QueueManagerConfig
from mqjournal.ibmi.commands import as_text
from tests.collect.test_collection import collect
from tests.conftest import SimFleet, fleet_config, serve

QM = QueueManagerConfig(name="TEST", threshold_kb=500)
SETUPS = {
    "english": PartitionSystemConfig(),
    "german": PartitionSystemConfig(language="DEU", date_format="*DMY", date_separator="."),
    "american": PartitionSystemConfig(date_format="*MDY", date_separator="/"),
}


@pytest.fixture
def three_languages(tmp_path: Path):
    config = fleet_config(
        tmp_path,
        [
            HostConfig(name=name, port=0, utc_offset="+01:00", system=setup, queue_managers=[QM])
            for name, setup in SETUPS.items()
        ],
    )
    with serve(config, advance=timedelta(hours=3)) as fleet:
        yield fleet


def _what_the_planner_reads(snapshot) -> dict:
    return {
        "receivers": [r.model_dump(mode="json") for r in snapshot.receivers],
        "startup_recovery": snapshot.startup_recovery.model_dump(mode="json") if snapshot.startup_recovery else None,
        "media_recovery": snapshot.media_recovery.model_dump(mode="json") if snapshot.media_recovery else None,
        "amqjrninf": snapshot.amqjrninf,
        "messages": [(m.id, m.tokens, m.queue) for m in snapshot.messages],
    }


def test_german_dmy_and_mdy_partitions_give_the_snapshot_of_an_english_ymd_one(three_languages: SimFleet, tmp_path):
    snapshots, failures = collect(three_languages, tmp_path / "out", run_id="r1")
    assert failures == []
    by_host = {s.host: s for s in snapshots}
    english = _what_the_planner_reads(by_host["english"])
    assert english["startup_recovery"] is not None and english["media_recovery"] is not None
    assert english["messages"] and all(tokens for _, tokens, _ in english["messages"])
    assert _what_the_planner_reads(by_host["german"]) == english
    assert _what_the_planner_reads(by_host["american"]) == english


def test_the_texts_differ_but_the_recovery_point_is_read_from_the_tokens(three_languages: SimFleet, tmp_path):
    snapshots, _ = collect(three_languages, tmp_path / "out", run_id="r1")
    german = next(s for s in snapshots if s.host == "german")
    shell = three_languages.connect("german")
    (row,) = shell.sql(
        f"SELECT {as_text('MESSAGE_TEXT')}, HEX(MESSAGE_TOKENS) AS TOKENS FROM QSYS2.MESSAGE_QUEUE_INFO"
        " WHERE MESSAGE_QUEUE_LIBRARY = 'QMTEST' AND MESSAGE_ID = 'AMQ7460'"
        " ORDER BY MESSAGE_TIMESTAMP DESC FETCH FIRST 1 ROWS ONLY"
    )
    point = mqmessages.recovery_point("AMQ7460", row["TOKENS"])
    assert row["MESSAGE_TEXT"].startswith("Startpunkt")
    at = point.at.astimezone(german.collected_at.tzinfo)
    assert at.strftime("%d.%m.%y %H:%M:%S") in row["MESSAGE_TEXT"]  # the job's *DMY with '.'
    assert german.startup_recovery.at == at and german.startup_recovery.receiver == point.receiver


def test_cpi70e3_is_detected_on_a_german_partition_by_its_replacement_data(three_languages: SimFleet, tmp_path):
    german = three_languages.connect("german")
    # An admin created the name rule 1 gives next: the system cannot switch (seed rule 2) and sends CPI70E3.
    attached = german.sql(
        "SELECT ATTACHED_JOURNAL_RECEIVER_NAME AS A FROM QSYS2.JOURNAL_INFO WHERE JOURNAL_LIBRARY = 'QMTEST'"
    )[0]["A"]
    following = f"{attached[:4]}{int(attached[4:]) + 1:06d}"
    assert german.cl(f"CRTJRNRCV JRNRCV(QMTEST/{following}) THRESHOLD(500)")[0] == 0
    three_languages.host("german").advance(timedelta(hours=2))

    snapshots, _ = collect(three_languages, tmp_path / "out", run_id="r2")
    snapshot = next(s for s in snapshots if s.host == "german")
    stops = [m for m in snapshot.messages if m.id == "CPI70E3"]
    assert stops and all(mqmessages.journal_of(m.tokens) == ("AMQAJRN", "QMTEST") for m in stops)
    assert all("AMQAJRN" not in m.text for m in stops)  # IBM's text names no journal
    from mqjournal.recovery.naming import stop_messages

    current = next(r for r in snapshot.receivers if r.status == "ATTACHED")
    assert stop_messages(snapshot, current)


def test_the_snapshot_keeps_each_message_text_as_the_job_shows_it(three_languages: SimFleet, tmp_path):
    # The collector casts MESSAGE_TEXT (VARGRAPHIC CCSID 1200) to character: uncast, the simulator answers UTF-16 hex.
    snapshots, failures = collect(three_languages, tmp_path / "out", run_id="r1")
    assert failures == []
    german = next(s for s in snapshots if s.host == "german")
    startup = [m.text for m in german.messages if m.id == "AMQ7460"]
    assert startup and all(text.startswith("Startpunkt") for text in startup)
