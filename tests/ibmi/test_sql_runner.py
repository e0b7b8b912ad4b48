"""How SQL reaches a partition: through qsh (the default, what a stock IBM i has) or a bare db2 (an admin's link).

db2 is a Qshell utility, so the statements are quoted twice: for Qshell inside `qsh -c`, and that text again for
the PASE shell. The simulator parses both layers with POSIX sh rules, as bsh and Qshell do.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mqjournal.fleet import HostConfig, PartitionSystemConfig, QueueManagerConfig
from mqjournal.ibmi import commands, discovery
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.db2out import SqlRunnerMissing, parse_single, runner_missing
from mqjournal.ibmi.transport import CommandOutput, IbmiSession, ssh_connector
from mqjournal.sim.shell import split
from tests.conftest import SimFleet, fleet_config, serve

# Any text a Command can carry: a line break or NUL is refused before it reaches a shell (commands.Command).
STATEMENT = st.text(st.characters(blacklist_characters="\r\n\0", blacklist_categories=("Cs",)), max_size=80)
TRICKY = st.sampled_from(
    [
        "'",
        "''",
        '"',
        "$",
        "$HOME",
        "${X}",
        "\\",
        "\\'",
        ";",
        "&&",
        "||",
        "|",
        "&",
        "`",
        "$(x)",
        " ",
        "\t",
        "'; db2 'DROP",
        "*",
        "#",
        "~",
        "é",
        "ß",
    ]
)
STATEMENT_WITH_SHELL_CHARACTERS = st.lists(st.one_of(TRICKY, STATEMENT), max_size=8).map("".join)


def as_the_partition_parses_it(command: commands.Command) -> list[list[str]]:
    """The argv of every program the PASE shell, and then Qshell inside `qsh -c`, would run."""
    runs = split(command.text)
    assert runs is not None, command.text
    argvs = []
    for _, argv in runs:
        if argv[0] == commands.QSH:
            assert argv[1] == "-c" and len(argv) == 3
            inner = split(argv[2])
            assert inner is not None, argv[2]
            argvs += [a for _, a in inner]
        else:
            argvs.append(argv)
    return argvs


@settings(max_examples=300, deadline=None)
@example([";"], "qsh")  # a quoted `;` is text, not a separator, in the shells and when the audit reads it back
@example(["X'; db2 'DROP TABLE Y", "$HOME \\ `id`"], "db2")
@given(st.lists(STATEMENT_WITH_SHELL_CHARACTERS, min_size=1, max_size=3), st.sampled_from(commands.SQL_RUNNERS))
def test_any_statement_text_reaches_db2_unchanged_through_both_quoting_layers(statements, runner):
    command = commands.sql(*statements, runner=runner)

    assert as_the_partition_parses_it(command) == [["db2", s] for s in statements]
    assert commands.sql_statements(command.text) == statements
    (commands.sql_statements(command.text) or []).append("DROP TABLE X")  # kept, but each caller's list is its own
    assert commands.sql_statements(command.text) == statements


def test_the_qsh_runner_is_one_qsh_run_of_every_statement():
    command = commands.sql("SELECT 'A' FROM X", "SELECT 2 FROM Y", runner="qsh")

    assert command.text.startswith("/QOpenSys/usr/bin/qsh -c ")
    assert len(split(command.text)) == 1
    assert as_the_partition_parses_it(command) == [["db2", "SELECT 'A' FROM X"], ["db2", "SELECT 2 FROM Y"]]


def test_association_is_sent_with_the_hosts_runner():
    qsh = commands.associate_receivers("QMTEST", "AMQAJRN", "A", runner="qsh")
    bare = commands.associate_receivers("QMTEST", "AMQAJRN", "A", runner="db2")

    assert qsh.text.startswith(commands.QSH) and bare.text.startswith("db2 ")
    assert commands.sql_statements(qsh.text) == commands.sql_statements(bare.text)


def test_an_unknown_runner_is_refused():
    with pytest.raises(ValueError, match="unknown SQL runner"):
        commands.sql("VALUES 1", runner="odbc")  # type: ignore[arg-type]  # the wrong value is the test
    with pytest.raises(ValueError, match="sql_runner"):
        IbmiSession("ibmi1", "QMQMADM", lambda: None, audit=AuditLog(None), sql_runner="odbc")  # type: ignore[arg-type]  # the wrong value is the test


# --- on a simulated partition, over SSH ------------------------------------------------------------------------


def host(name: str, *, runner: str = "qsh", db2_link: bool = False) -> HostConfig:
    return HostConfig(
        name=name,
        port=0,
        sql_runner=runner,
        system=PartitionSystemConfig(db2_link=db2_link),
        queue_managers=[QueueManagerConfig(name="TEST", threshold_kb=500)],
    )


@pytest.fixture
def two_hosts(tmp_path: Path):
    """`stock` as IBM i ships (no db2 in PASE), `linked` where an admin linked /QOpenSys/usr/bin/db2 to qsh."""
    with serve(fleet_config(tmp_path, [host("stock"), host("linked", runner="db2", db2_link=True)])) as fleet:
        yield fleet


def test_a_bare_db2_is_not_found_on_a_stock_partition(two_hosts):
    status, out, err = two_hosts.connect("stock").run(commands.sql("VALUES 1", runner="db2").text)

    assert (status, out, err) == (127, "", "bsh: db2: not found.\n")


def test_qsh_runs_db2_on_a_stock_partition(two_hosts):
    status, out, _ = two_hosts.connect("stock").run(
        commands.sql("SELECT 1 AS X FROM SYSIBM.SYSDUMMY1", runner="qsh").text
    )

    assert status == 0 and parse_single(out) == [{"X": "1"}]


def test_a_bare_db2_runs_where_an_admin_linked_it_and_qsh_still_works(two_hosts):
    shell = two_hosts.connect("linked")
    for runner in commands.SQL_RUNNERS:
        status, out, _ = shell.run(commands.sql("SELECT 1 AS X FROM SYSIBM.SYSDUMMY1", runner=runner).text)
        assert status == 0 and parse_single(out) == [{"X": "1"}]


def test_qshell_names_a_command_it_cannot_find_as_real_qshell_does(two_hosts):
    status, _, err = two_hosts.connect("stock").run(f"{commands.QSH} -c 'nosuch 1'")

    # Real capture (codefori/vscode-ibmi issue #3008): the same words for a command Qshell's PATH lacks.
    assert (status, err) == (
        127,
        "qsh: 001-0019 Error found searching for command nosuch. No such path or directory.\n",
    )


def test_qshell_runs_its_own_system_utility(two_hosts):
    status, out, _ = two_hosts.connect("stock").run(f"{commands.QSH} -c 'system \"CRTSAVF FILE(QGPL/VIAQSH)\"'")

    assert status == 0 and "VIAQSH" in out


def session(fleet: SimFleet, name: str, runner: str) -> IbmiSession:
    connect = ssh_connector(
        address="127.0.0.1",
        port=fleet.ports[name],
        user=fleet.config.user,
        key=fleet.service.client_key,
        known_hosts=fleet.config.known_hosts,
    )
    return IbmiSession(name, fleet.config.user, connect, audit=AuditLog(None), sql_runner=runner)


def test_discovery_on_a_stock_partition_set_to_db2_names_the_host_the_runner_and_the_fix(two_hosts):
    with session(two_hosts, "stock", "db2") as s, pytest.raises(SqlRunnerMissing) as caught:
        discovery.survey(s, "stock", [])

    message = str(caught.value)
    assert message.startswith("SqlRunnerMissing(stock): the SQL runner `db2`")
    assert "bsh: db2: not found." in message
    assert "sql_runner: qsh" in message and "ln -s /QOpenSys/usr/bin/qsh /QOpenSys/usr/bin/db2" in message


@pytest.mark.parametrize("name, runner", [("stock", "qsh"), ("linked", "db2"), ("linked", "qsh")])
def test_discovery_finds_the_queue_manager_with_a_runner_the_host_has(two_hosts, name, runner):
    with session(two_hosts, name, runner) as s:
        survey = discovery.survey(s, name, [])

    assert [t.qmgr for t in survey.targets] == ["TEST"]


@pytest.mark.parametrize(
    "output",
    [
        CommandOutput(127, "", "bsh: db2: not found.\n", 1.0),
        CommandOutput(
            127, "", "qsh: 001-0019 Error found searching for command db2. No such path or directory.\n", 1.0
        ),
        CommandOutput(127, "", "bash: db2: command not found\n", 1.0),
        CommandOutput(1, "", "db2: not found\n", 1.0),  # a System V Bourne shell exits 1
        CommandOutput(126, "", "bsh: /usr/bin/db2: cannot execute\n", 1.0),
    ],
)
def test_a_runner_the_shell_cannot_start_is_told_from_its_answer(output):
    assert runner_missing(output)


@pytest.mark.parametrize(
    "output",
    [
        CommandOutput(
            4,
            "\n **** CLI ERROR *****\n         SQLSTATE: 42704\nNATIVE ERROR CODE: -204\nX in Y type *FILE not found. \n",
            "",
            1.0,
        ),
        CommandOutput(0, "\nX \n--\n\n  0 RECORD(S) SELECTED.\n\n", "", 1.0),
    ],
)
def test_an_answer_of_db2_itself_is_never_taken_for_a_missing_runner(output):
    assert not runner_missing(output)


def test_a_fleet_collection_reports_a_missing_runner_once_for_the_host_and_collects_the_others(two_hosts, tmp_path):
    from mqjournal.collection import collect_fleet

    # `stock` is told to use a bare db2 it does not have; `linked` has the link and uses it.
    hosts = [
        h.model_copy(update={"port": two_hosts.ports[h.name], "sql_runner": "db2"}) for h in two_hosts.config.hosts
    ]
    _, results = collect_fleet(two_hosts.config.model_copy(update={"hosts": hosts}), tmp_path / "out")

    by_host = {r.host: r for r in results}
    assert [s.qmgr for s in by_host["linked"].snapshots] == ["TEST"] and not by_host["linked"].failures
    [failure] = by_host["stock"].failures
    assert failure.qmgr is None and failure.error.startswith("SqlRunnerMissing(stock): the SQL runner `db2`")
