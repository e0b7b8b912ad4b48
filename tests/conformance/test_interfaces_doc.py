"""docs/ibmi-interfaces.md names every CL command and every SQL service mqjournal sends, so it cannot drift;
docs/linux-interfaces.md every command sent to a Linux or AIX queue manager host (linuxmq/), and
docs/windows-interfaces.md every command of the Windows forms (linuxmq/windowsforms.py).

The list is read from the code, not kept by hand: every `cl(...)` / `Command(text=...)` call's command verb, and
every QSYS2 / SYSIBM / SYSIBMADM / SYSTOOLS name in a string literal (docstrings left out) of the client
(plugins/mqjournal without the simulators). A new command or service without its row in the doc fails here.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "mqjournal"
DOC = ROOT / "docs" / "ibmi-interfaces.md"
LINUX_DOC = ROOT / "docs" / "linux-interfaces.md"
WINDOWS_DOC = ROOT / "docs" / "windows-interfaces.md"
LINUX_CLIENT = "linuxmq"  # the modules that build the commands sent to Linux, AIX and Windows hosts
WINDOWS_FORMS = "windowsforms.py"  # of those, the Windows forms: its own doc
SIMULATORS = {"sim", "linuxsim"}
SERVICE = re.compile(r"\b((?:QSYS2|SYSIBM|SYSIBMADM|SYSTOOLS)\.[A-Z][A-Z0-9_]*)\b")


def client_modules(*, linux: bool = False, windows: bool = False) -> list[Path]:
    """The IBM i client's modules, or (`linux`) the UNIX hosts' client's, or (`windows`) the Windows forms."""
    if windows:
        return [PACKAGE / LINUX_CLIENT / WINDOWS_FORMS]
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if not SIMULATORS & set(p.relative_to(PACKAGE).parts)
        and (LINUX_CLIENT in p.relative_to(PACKAGE).parts) == linux
        and p.name != WINDOWS_FORMS
    )


@functools.cache
def _client_trees(linux: bool = False, windows: bool = False) -> tuple[ast.Module, ...]:
    """Each client module parsed once per process: every xdist worker collects this file, and the parametrize lists
    below read both the commands and the services."""
    return tuple(ast.parse(p.read_text(encoding="utf-8")) for p in client_modules(linux=linux, windows=windows))


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _leading_text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return node.values[0].value
    return None


def sent_commands(*, linux: bool = False, windows: bool = False) -> set[str]:
    """The verb of every CL command (`cl(text)`) and shell command (`Command(text=...)`) the client builds, the
    program of every digest tool a host may be asked to run (`DigestTool(name, words, ...)`: its first word's
    file name), and on Windows every program named by its full path (`tools.mq(...)`, `tools.system(...)`,
    `tools.powershell`)."""
    verbs = set()
    for tree in _client_trees(linux, windows):
        for node in ast.walk(tree):
            if windows and isinstance(node, ast.Attribute) and node.attr == "powershell":
                verbs.add("powershell")  # WindowsTools.powershell: the program's full path
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            program = node.args[0] if windows and name in ("mq", "system") and node.args else None
            if isinstance(program, ast.Constant) and isinstance(program.value, str):
                verbs.add(program.value.removesuffix(".exe"))  # WindowsTools.mq / .system: a program by full path
                continue
            if name == "DigestTool" and len(node.args) > 1 and isinstance(node.args[1], ast.Tuple):
                first = node.args[1].elts[0] if node.args[1].elts else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    verbs.add(first.value.rsplit("/", 1)[-1])
                continue
            arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "text"), None)
            text = _leading_text(arg) if name in ("cl", "Command") and arg is not None else None
            if text and text.split():
                verbs.add(text.split()[0])
    return verbs


def sent_services() -> set[str]:
    names = set()
    for tree in _client_trees():
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                names.update(SERVICE.findall(node.value))
    return names


def test_the_code_sends_what_this_test_can_see():
    """Guards the extraction itself: if it finds nothing, the doc check below would pass vacuously."""
    assert {"RCDMQMIMG", "DLTJRNRCV", "SAVOBJ", "cat"} <= sent_commands()
    assert {"QSYS2.JOURNAL_RECEIVER_INFO", "QSYS2.MESSAGE_QUEUE_INFO", "SYSIBM.SYSDUMMY1"} <= sent_services()


@pytest.mark.parametrize("verb", sorted(sent_commands()))
def test_the_doc_has_every_command_mqjournal_sends(verb):
    assert re.search(rf"`{re.escape(verb)}\b", DOC.read_text(encoding="utf-8")), f"{verb} is not in {DOC.name}"


@pytest.mark.parametrize("verb", sorted(sent_commands(linux=True)))
def test_the_linux_doc_has_every_command_sent_to_a_linux_host(verb):
    assert re.search(rf"`{re.escape(verb)}\b", LINUX_DOC.read_text(encoding="utf-8")), (
        f"{verb} is not in {LINUX_DOC.name}"
    )


@pytest.mark.parametrize("verb", sorted(sent_commands(windows=True)))
def test_the_windows_doc_has_every_command_of_the_windows_forms(verb):
    assert re.search(rf"`{re.escape(verb)}\b", WINDOWS_DOC.read_text(encoding="utf-8")), (
        f"{verb} is not in {WINDOWS_DOC.name}"
    )


def test_the_linux_and_windows_commands_are_seen_too():
    assert {"cat", "ls", "rm", "sha256sum", "openssl"} <= sent_commands(linux=True)
    assert {"del", "type", "ver", "certutil", "whoami", "powershell", "runmqsc", "rcdmqimg"} <= sent_commands(
        windows=True
    )


@pytest.mark.parametrize("service", sorted(sent_services()))
def test_the_doc_has_every_sql_service_mqjournal_sends(service):
    assert service in DOC.read_text(encoding="utf-8"), f"{service} is not in {DOC.name}"


@pytest.mark.parametrize("runner", ["system", "/QOpenSys/usr/bin/qsh -c", "db2"])
def test_the_doc_says_how_each_runner_prints(runner):
    assert f"`{runner}" in DOC.read_text(encoding="utf-8")
