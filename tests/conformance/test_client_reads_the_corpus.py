"""The client reads every real capture of the corpus: db2 result tables and CLI error blocks with
`db2out.parse_results`, CL messages with `readings.cl_messages` and the transport's message IDs.

A failure here means mqjournal would misread what a real partition prints. The captures and their sources are in
manifest.json; the rules each test states are the ones the captures show.
"""

from __future__ import annotations

import pytest

from mqjournal.capture import assert_read_only
from mqjournal.ibmi import hostdigest
from mqjournal.ibmi.commands import Command
from mqjournal.ibmi.db2out import Db2Failure, parse_results
from mqjournal.ibmi.discovery import parse_mqs_ini
from mqjournal.ibmi.readings import cl_messages
from mqjournal.ibmi.transport import CommandOutput
from tests.conformance.corpus import FIXTURES, capture_manifests, captures

TABLES = captures("db2-table")
ERRORS = captures("db2-error")
CL = captures("cl")


def test_every_fixture_file_is_in_the_manifest_with_a_source():
    listed = {c.file for c in captures(public_only=True)}
    on_disk = {str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*") if p.is_file()}
    assert on_disk == listed
    for capture in captures(public_only=True):
        source = capture.entry["source"]
        assert source.get("url") or source.get("store_id"), f"{capture}: no source"
        assert capture.entry["command"] and capture.entry["reconstructed"], f"{capture}: command or origin missing"


# --- db2 result tables --------------------------------------------------------------------------------------


@pytest.mark.parametrize("capture", TABLES, ids=str)
def test_a_result_table_gives_as_many_rows_as_its_trailer_counts(capture):
    (rows,) = parse_results(capture.text)
    assert not isinstance(rows, Db2Failure)
    assert len(rows) == capture.entry["rows"]


@pytest.mark.parametrize("capture", [c for c in TABLES if "first_row" in c.entry], ids=str)
def test_a_result_table_gives_the_values_it_shows(capture):
    """Cells are sliced at the dashes runs. Where the text holds DBCS characters (Japanese), each takes two display
    columns in the db2 layout (vscode-ibmi's db2Parse shifts its slices by one per such character), so slicing by
    character index misreads every later column."""
    (rows,) = parse_results(capture.text)
    assert rows[0] == capture.entry["first_row"]


def test_a_cell_of_blanks_is_an_empty_string_and_not_null():
    (rows,) = parse_results((FIXTURES / "db2/vscode-ibmi-en-10rows.out").read_text(encoding="utf-8"))
    assert [r["TEXT"] for r in rows][:8] == ["", "", "", "", "", "", "", "cool mate"]


def test_the_ten_rows_trailer_has_one_leading_blank():
    text = (FIXTURES / "db2/vscode-ibmi-en-10rows.out").read_text(encoding="utf-8")
    assert "\n 10 RECORD(S) SELECTED.\n" in text


# --- db2 CLI errors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("capture", ERRORS, ids=str)
def test_a_cli_error_block_gives_sqlstate_native_code_and_text(capture):
    (failure,) = parse_results(capture.stdout)
    assert failure == Db2Failure(capture.entry["sqlstate"], capture.entry["sqlcode"], capture.entry["text"])
    assert failure.msg_id == f"SQL{abs(capture.entry['sqlcode']):04d}"


@pytest.mark.parametrize("capture", ERRORS, ids=str)
def test_a_cli_error_is_on_stdout_with_exit_status_4(capture):
    assert capture.entry["stream"] == "stdout" and capture.entry["exit_status"] == 4
    assert not capture.entry.get("stderr")


# --- CL messages ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("capture", CL, ids=str)
def test_cl_messages_are_read_in_any_language(capture):
    messages = cl_messages(capture.stdout, capture.stderr)
    assert [(m.id, m.text) for m in messages] == [tuple(m) for m in capture.entry["messages"]]


@pytest.mark.parametrize("capture", CL, ids=str)
def test_the_transport_finds_the_message_ids(capture):
    out = CommandOutput(capture.entry["exit_status"] or 0, capture.stdout, capture.stderr, 0.0)
    assert out.msg_ids == [m[0] for m in capture.entry["messages"]]


def test_a_syntax_error_is_a_cpd_diagnostic_then_cpf0006():
    (capture,) = [c for c in CL if c.file.endswith("cpd0074-cpf0006.err")]
    assert [m.id for m in cl_messages(capture.stdout, capture.stderr)] == ["CPD0074", "CPF0006"]
    assert capture.entry["exit_status"] == 255 and capture.stdout == ""


def test_a_line_that_is_not_an_ibm_i_message_is_not_read_as_one():
    (capture,) = [c for c in CL if "sshd-line" in c.file]
    assert [m.id for m in cl_messages("", capture.stderr)] == ["CPF2111"]


def test_qsh_not_finding_a_command_is_no_ibm_i_message():
    (capture,) = captures("shell")
    assert capture.entry["exit_status"] == 127
    assert cl_messages("", capture.stderr) == []


# --- captures brought home with `mqjournal doctor --capture` (captures/) ----------------------------------------------


def test_every_capture_folder_lists_its_files_and_says_what_partition_answered():
    for manifest in capture_manifests():
        entries = [c for c in captures() if c.manifest == manifest]
        fixtures = manifest.parent / "fixtures"
        on_disk = {str(p.relative_to(fixtures)) for p in fixtures.rglob("*") if p.is_file()}
        assert on_disk == {c.file for c in entries}, manifest
        header = entries[0].header()
        assert header["source"]["tool"] == "mqjournal doctor --capture" and header["source"]["date"], manifest
        assert {"release", "ptf_groups", "job", "user", "queue_managers"} <= set(header), manifest
        for capture in entries:
            assert capture.entry["command"] and capture.entry["source"]["tool"], capture


def test_the_client_reads_every_answer_of_a_capture():
    """An answer the client could not read at all is recorded as db2-unreadable by the capture: a finding."""
    unreadable = [f"{c}: {c.entry.get('problem')}" for c in captures() if c.kind == "db2-unreadable"]
    assert not unreadable


def test_a_capture_holds_only_read_only_commands():
    for capture in (c for c in captures() if c.captured):
        assert_read_only(Command(text=capture.entry["command"], idempotent=True))


def test_the_client_reads_mqs_ini_and_digests_as_captured():
    for capture in captures("pase"):
        if capture.entry["reads"] == "mqs-ini" and capture.entry["exit_status"] == 0:
            assert parse_mqs_ini(capture.stdout) == capture.entry["queue_managers"], capture
        if capture.entry["reads"] == "digest" and capture.entry["exit_status"] == 0:
            assert hostdigest.parse_digest(capture.stdout) == capture.entry["sha256"], capture
