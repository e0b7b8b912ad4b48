"""The audit log's open intents, read from where the last reader stopped: always what a whole read would say."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqjournal.ibmi import openintents
from mqjournal.ibmi.audit import AuditLog, unexplained_intents
from mqjournal.ibmi.openintents import open_intents, side_file


def forget() -> None:
    """What a new process knows: nothing in memory, only the side file."""
    openintents._scans.clear()
    openintents._saved.clear()


@pytest.fixture(autouse=True)
def fresh_process():
    """Each test starts as a new process would: nothing read yet in memory."""
    forget()
    yield
    forget()


def whole_read(path: Path) -> list[dict]:
    """What reading every whole line of the log says is open (the rule before this module)."""
    events = [json.loads(line) for line in path.read_bytes().split(b"\n")[:-1] if line.strip()]
    closed = {e.get("id") for e in events if e.get("event") in ("outcome", "reconciled")}
    return [e for e in events if e.get("event") == "intent" and e["id"] not in closed]


def intent(n: int, host: str = "ibmi1") -> dict:
    return {"event": "intent", "id": f"i{n}", "host": host, "command": f"DLTJRNRCV JRNRCV(QMQM/AMQA{n:06d})"}


# Each step appends one record (an intent, its outcome or reconciliation, a record of an older mqjournal with no
# `event`, a blank line) or reads; the bytes go to the file in pieces that may end mid-line.
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("intent"), st.just(0), st.sampled_from(["ibmi1", "ibmi2"])),
        st.tuples(st.sampled_from(["outcome", "reconciled"]), st.integers(0, 60), st.just("")),
        st.tuples(st.just("legacy"), st.integers(0, 30), st.just("")),
        st.tuples(st.just("blank"), st.just(0), st.just("")),
        st.tuples(st.just("read"), st.integers(0, 200), st.just("")),
        st.tuples(st.just("restart"), st.just(0), st.just("")),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(steps=_steps)
def test_what_is_open_is_what_a_whole_read_says_whatever_the_reads_in_between(tmp_path_factory, steps):
    path = tmp_path_factory.mktemp("audit") / "audit.jsonl"
    path.touch()
    forget()
    unwritten = b""
    for step, (kind, n, host) in enumerate(steps):
        if kind == "read":  # the pieces written so far, cut anywhere, then a read
            cut = min(n, len(unwritten))
            with path.open("ab") as handle:
                handle.write(unwritten[:cut])
            unwritten = unwritten[cut:]
            assert open_intents(path) == whole_read(path)
        elif kind == "restart":  # a new process: only the side file is left
            forget()
        elif kind == "intent":  # ids are unique (uuid4 in the log); outcomes name any id, an intent's or none
            unwritten += json.dumps(intent(step, host)).encode() + b"\n"
        elif kind == "legacy":
            unwritten += json.dumps({"id": f"i{n}", "host": "ibmi1", "outcome": "ok"}).encode() + b"\n"
        elif kind == "blank":
            unwritten += b"\n"
        else:  # an outcome follows its intent (written before the command is sent), or names no intent at all
            closes = f"i{n}" if n < step else f"x{n}"
            unwritten += json.dumps({"event": kind, "id": closes, "host": "ibmi1"}).encode() + b"\n"
    with path.open("ab") as handle:
        handle.write(unwritten)
    assert open_intents(path) == whole_read(path)
    assert [e["id"] for e in unexplained_intents(path, "ibmi2")] == [
        e["id"] for e in whole_read(path) if e["host"] == "ibmi2"
    ]


def write(path: Path, *records: dict) -> None:
    with path.open("a", encoding="utf-8") as handle:
        for r in records:
            handle.write(json.dumps(r) + "\n")


def test_a_new_process_reads_only_what_was_appended_since_the_side_file(tmp_path):
    path = tmp_path / "audit.jsonl"
    many = [intent(n) for n in range(10, 200)]  # more than the tail the side file keeps
    write(path, intent(1), intent(2), {"event": "outcome", "id": "i1"}, *many)
    assert [e["id"] for e in open_intents(path)][:2] == ["i2", "i10"]
    saved = json.loads(side_file(path).read_text())
    assert saved["offset"] == path.stat().st_size and saved["lines"] == 193
    # Bytes before the offset (but not among the last ones) spoiled: a process that read them again would fail.
    data = bytearray(path.read_bytes())
    data[5:9] = b"XXXX"
    path.write_bytes(bytes(data))
    forget()
    write(path, {"event": "reconciled", "id": "i2"})
    assert [e["id"] for e in open_intents(path)][:1] == ["i10"]
    # What comes after the offset is read, and a record that is no JSON is named by its line.
    with path.open("a") as handle:
        handle.write("not json\n")
    with pytest.raises(ValueError, match=rf"{path}:195: not a JSON audit record"):
        open_intents(path)


@pytest.mark.parametrize("change", ["replaced", "truncated", "rewritten", "side file garbled"])
def test_a_side_file_that_does_not_describe_the_log_is_ignored(tmp_path, change, caplog):
    path = tmp_path / "audit.jsonl"
    write(path, intent(1), intent(2))
    open_intents(path)
    forget()
    if change == "replaced":  # another file at the path (a restored or rotated log), longer than the offset
        path.unlink()
        write(path, intent(7), intent(8), intent(9))
    elif change == "truncated":
        path.write_text(json.dumps(intent(5)) + "\n")
    elif change == "rewritten":  # same inode, same size, the last records others
        text = path.read_text().replace("AMQA000002", "AMQA000004")
        with path.open("r+") as handle:
            handle.write(text)
    else:
        side_file(path).write_text("{not json")
    with caplog.at_level(logging.WARNING):
        assert open_intents(path) == whole_read(path)
    if change == "side file garbled":
        assert f"{side_file(path)} is not usable" in caplog.text


def test_the_open_intents_of_sessions_writing_while_others_read(tmp_path):
    """Sessions of one task write through one AuditLog while others ask what is open (a batch of hosts)."""
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(path)
    errors: list[BaseException] = []

    def session(n: int) -> None:
        try:
            for k in range(25):
                record = audit.intent(host=f"ibmi{n}", user="MQADMIN", command=f"CMD {k}", attempt=1)
                if k % 5:
                    audit.record(
                        host=f"ibmi{n}", user="MQADMIN", command=f"CMD {k}", exit_status=0, msg_ids=[],
                        duration_ms=1.0, attempt=1, outcome="ok", intent_id=record,
                    )  # fmt: skip
                unexplained_intents(path, f"ibmi{n}")
        except BaseException as exc:  # reported by the test below
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert open_intents(path) == whole_read(path)
    assert len(open_intents(path)) == 8 * 5


def test_a_side_file_that_cannot_be_written_costs_only_a_whole_read(tmp_path, caplog):
    path = tmp_path / "audit.jsonl"
    write(path, intent(1))
    side_file(path).mkdir()  # in its place, a folder: replacing it fails as a full or read-only disk would
    with caplog.at_level(logging.WARNING):
        assert [e["id"] for e in open_intents(path)] == ["i1"]
    assert "could not write" in caplog.text and side_file(path).is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["audit.jsonl", side_file(path).name]  # no temporary left


def test_the_side_file_is_rewritten_only_after_a_quarter_mebibyte_more_was_read(tmp_path):
    path = tmp_path / "audit.jsonl"
    write(path, intent(1))
    open_intents(path)
    first = json.loads(side_file(path).read_text())["offset"]
    write(path, *[intent(n) for n in range(2, 50)])
    assert len(open_intents(path)) == 49 and json.loads(side_file(path).read_text())["offset"] == first
    while path.stat().st_size - first < openintents._SAVE_EVERY:
        write(path, *[{"event": "outcome", "id": f"x{n}", "host": "ibmi1", "pad": "." * 200} for n in range(100)])
    assert len(open_intents(path)) == 49
    assert json.loads(side_file(path).read_text())["offset"] == path.stat().st_size
    forget()  # a new process starts from there and reads the rest
    write(path, {"event": "outcome", "id": "i1"})
    assert [e["id"] for e in open_intents(path)] == [f"i{n}" for n in range(2, 50)]
