"""`mqjournal doctor --capture DIR`: bring a real partition's answers home, as a folder of tests/conformance/.

It sends every read-only statement and command mqjournal uses (the doctor's, the capability reader's, the
collector's, the save file listing) one at a time, and keeps each exact answer: stdout, stderr, exit status, the
command line. Each statement gets a command of its own so that each answer is one result, one fixture file.

What it writes, per host, is the conformance corpus's format (tests/conformance/corpus.py): manifest.json with a
header (the source, the IBM i release, the PTF group levels, the job's language, CCSID and date format) and one entry
per answer, and fixtures/ with the files. Host names (and their DNS domain), the system's relational database name
(CURRENT SERVER), IPv4 and IPv6 addresses, user profiles (also inside qualified job names and /home paths), the
serial number and any SSH key or key fingerprint are replaced by placeholders before anything is written; nothing
secret is read (no key, no password, no connection string).

Nothing it sends writes: `assert_read_only` refuses any command that is not a SELECT (and not a table function that
changes something), CHKOBJ, `true`, `cat` of mqs.ini or a digest of /dev/null, before it is sent.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mqjournal import __version__
from mqjournal.doctorreport import checking_session
from mqjournal.fleet import FleetConfig, HostConfig
from mqjournal.ibmi import capabilities, commands, hostdigest
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.db2out import Db2Failure, Db2OutputError, parse_results
from mqjournal.ibmi.discovery import parse_mqs_ini
from mqjournal.ibmi.transport import CommandOutput, ConnectFactory, IbmiSession
from mqjournal.names import journal_name, object_name

SOURCE = "mqjournal doctor --capture"
MESSAGE_LINE = re.compile(r"^([A-Z]{3}[0-9A-F]{4}): (.*)$", re.MULTILINE)
TRAILER = re.compile(r"^\s*(\d+) RECORD\(S\) SELECTED\.\s*$", re.MULTILINE)

# The commands a capture may send. CL: CHKOBJ only (it changes nothing, doctor.py). SQL: SELECTs, but no table
# function that acts (ASSOCIATE_JOURNAL_RECEIVER associates receivers).
READ_ONLY_CL = frozenset({"CHKOBJ"})
ACTING_FUNCTIONS = ("ASSOCIATE_JOURNAL_RECEIVER",)
# CL commands mqjournal sends that change a partition: a capture holding one of them is not a capture.
WRITE_CL = frozenset(
    {
        "RCDMQMIMG",
        "CHGJRN",
        "CRTSAVF",
        "SAVOBJ",
        "SAVLIB",
        "DLTJRNRCV",
        "RSTOBJ",
        "RSTLIB",
        "CRTJRNRCV",
        "CRTJRN",
        "CHGOBJOWN",
        "STRMQM",
        "ENDMQM",
        "RCRMQMOBJ",
        "RFRMQMCL",
        "CHGMQM",
        "DLTF",
        "CPYTOSTMF",
        "CPYFRMSTMF",
    }
)

# System values for the header: the job's language and date format default to them (CHGJOB/USRPRF may differ, and
# the messages captured show what the job had), the serial number only to be replaced everywhere it shows.
HEADER_SYSTEM_VALUES = ("QCCSID", "QDATFMT", "QDATSEP", "QLANGID", "QSRLNBR")
# Every IBM i release's Db2 PTF group (WRKPTFGRP): the level says which SQL services a partition has.
DB2_PTF_GROUPS = ("SF99703", "SF99704", "SF99950", "SF99960")


class NotReadOnly(ValueError):
    """A command that could change the partition reached the capture (a bug: refused before it is sent)."""


def assert_read_only(command: commands.Command) -> None:
    text = command.text
    statements = commands.sql_statements(text)
    if statements is not None:
        for statement in statements:
            called = (re.search(rf"\b{f}\s*\(", statement, re.IGNORECASE) for f in ACTING_FUNCTIONS)
            if not statement.upper().startswith("SELECT ") or any(called):
                raise NotReadOnly(f"not a read-only statement: {statement}")
        return
    argv = shlex.split(text)
    if argv[:1] == ["system"] and len(argv) == 2:
        verb = argv[1].split()[0].upper()
        if verb in READ_ONLY_CL:
            return
        raise NotReadOnly(f"not a read-only CL command: {argv[1]}")
    if text == "true" or argv == ["cat", commands.MQS_INI]:
        return
    if argv[-1:] == [commands.DIGEST_PROBE] and any(
        text == commands.file_sha256(tool, commands.DIGEST_PROBE).text for tool in commands.DIGEST_TOOLS
    ):
        return
    raise NotReadOnly(f"not a command a capture sends: {text}")


# --- the probes ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One command's exact answer, before anything is replaced."""

    name: str  # the fixture's path under fixtures/ without the extension, e.g. "db2/03-clock"
    command: str
    statement: str | None  # the SQL statement (also inside `command`), None for CL and PASE commands
    reads: str  # what the client reads from it: sql, cl, login, mqs-ini, digest
    exit_status: int
    stdout: str
    stderr: str


@dataclass
class _Prober:
    session: IbmiSession
    answers: list[Answer] = field(default_factory=list)

    def _send(self, name: str, command: commands.Command, statement: str | None, reads: str) -> CommandOutput:
        assert_read_only(command)
        out = self.session.run(command)
        number = len(self.answers) + 1
        folder = {"sql": "db2", "cl": "cl"}.get(reads, "pase")
        self.answers.append(
            Answer(
                f"{folder}/{number:02d}-{name}", command.text, statement, reads, out.exit_status, out.stdout, out.stderr
            )
        )
        return out

    def select(self, name: str, statement: str) -> list:
        out = self._send(name, commands.sql(statement, runner=self.session.sql_runner), statement, "sql")
        try:
            return parse_results(out.stdout)
        except Db2OutputError:
            return []

    def rows(self, name: str, statement: str) -> list[dict]:
        results = self.select(name, statement)
        return results[0] if len(results) == 1 and not isinstance(results[0], Db2Failure) else []

    def check(self, name: str, command: commands.Command) -> CommandOutput:
        return self._send(name, command, None, "cl")

    def pase(self, name: str, command: commands.Command, reads: str) -> CommandOutput:
        return self._send(name, command, None, reads)


def header_statements() -> tuple[str, str, str]:
    values = ", ".join(f"'{v}'" for v in HEADER_SYSTEM_VALUES)
    groups = ", ".join(f"'{g}'" for g in DB2_PTF_GROUPS)
    return (
        # CURRENT SERVER: the local relational database's name, by default the system name (DSPNETA SYSNAME), which
        # IBM i writes into message texts; read only to be replaced everywhere it shows (IBM i SQL reference,
        # DATABASE: "returns the same result as the CURRENT SERVER special register", a VARCHAR(18);
        # https://www.ibm.com/support/knowledgecenter/ssw_ibm_i_71/db2/rbafzscadatabase.htm).
        "SELECT OS_VERSION, OS_RELEASE, HOST_NAME, CURRENT SERVER AS RDB_NAME FROM SYSIBMADM.ENV_SYS_INFO",
        # VARCHAR(20): these values are at most 8 characters; the full 3840 would print a line that wide per row.
        "SELECT SYSTEM_VALUE_NAME, CURRENT_NUMERIC_VALUE, CAST(CURRENT_CHARACTER_VALUE AS VARCHAR(20)"
        f" CCSID {commands.TEXT_CCSID}) AS CURRENT_CHARACTER_VALUE FROM QSYS2.SYSTEM_VALUE_INFO"
        f" WHERE SYSTEM_VALUE_NAME IN ({values}) ORDER BY SYSTEM_VALUE_NAME",
        "SELECT PTF_GROUP_NAME, PTF_GROUP_LEVEL, PTF_GROUP_STATUS FROM QSYS2.GROUP_PTF_INFO"
        f" WHERE PTF_GROUP_NAME IN ({groups}) ORDER BY PTF_GROUP_NAME, PTF_GROUP_LEVEL DESC",
    )


@dataclass
class HostAnswers:
    host: HostConfig
    user: str
    save_library: str
    answers: list[Answer]
    header: dict[str, Any]
    sensitive: dict[str, str]  # original -> placeholder kind (HOST, SYSTEM, USER, SERIAL)


def probe_host(session: IbmiSession, host: HostConfig, user: str, save_library: str) -> HostAnswers:
    """Every read mqjournal makes of this host, one command each, in the order a run makes them."""
    p = _Prober(session)
    p.pase("login", commands.Command(text="true", idempotent=True), "login")
    env_sql, values_sql, ptf_sql = header_statements()
    env = p.rows("env-sys-info", env_sql)
    values = {r["SYSTEM_VALUE_NAME"]: r for r in p.rows("system-values", values_sql)}
    ptf = p.rows("group-ptf-info", ptf_sql)
    p.select("clock", commands.host_clock())
    release, tokens = None, True
    for name, statement in zip(("release", "syscolumns", "sysroutines"), capabilities.statements(), strict=True):
        p.select(f"capabilities-{name}", statement)
    try:
        caps = capabilities.parse(host.name, "".join(a.stdout for a in p.answers[-3:]))
        release = caps.release
        tokens = caps.has_column("QSYS2.MESSAGE_QUEUE_INFO", "MESSAGE_TOKENS")
    except capabilities.CapabilitiesUnreadable:
        caps = None
    for tool in hostdigest.TOOLS:
        p.pase(f"digest-{tool.name}", commands.file_sha256(tool.name, commands.DIGEST_PROBE), "digest")
    profile = p.rows("user-info", commands.user_profile(user))
    for command in ("SAVOBJ", "DLTJRNRCV", "RSTOBJ", "CRTSAVF"):
        p.check(f"chkobj-{command.lower()}", commands.check_object("QSYS", command, "*CMD", ("*USE",)))
    p.check("chkobj-save-library", commands.check_object("QSYS", save_library, "*LIB", ("*READ", "*ADD")))
    ini = p.pase("mqs-ini", commands.read_mqs_ini(), "mqs-ini")
    in_ini = parse_mqs_ini(ini.stdout) if ini.exit_status == 0 else {}
    wanted = [(q.name, q.qmgr_library, q.instance) for q in host.queue_managers] or [
        (name, lib, "A") for name, lib in sorted(in_ini.items())
    ]
    journals = p.rows("journal-info", commands.mq_journals(sorted({lib for _, lib, _ in wanted}) or None))
    for name, library, instance in wanted:
        _queue_manager(p, name, library, instance, journals, tokens, caps)
    save_files = p.rows("save-files", commands.save_files(save_library))
    if save_files and (caps is None or caps.has("QSYS2.SAVE_FILE_OBJECTS")):
        # One save file's object list: the proof of a backup. The newest name sorts last for mqjournal's names.
        p.select("save-file-objects", commands.save_file_objects(save_library, save_files[-1]["OBJNAME"]))

    header = _header(release, env, values, ptf, wanted, user, save_library, host)
    return HostAnswers(host, user, save_library, p.answers, header, identifying_names(host, user, env, values, profile))


def _queue_manager(p: _Prober, name: str, library: str, instance: str, journals: list, tokens: bool, caps) -> None:
    journal = journal_name(instance)
    tag = object_name(library).lower()
    row: dict = next((r for r in journals if r["JOURNAL_LIBRARY"] == library and r["JOURNAL_NAME"] == journal), {})
    queue = (row.get("MESSAGE_QUEUE_LIBRARY") or "QSYS", row.get("MESSAGE_QUEUE") or "QSYSOPR")
    p.check(f"chkobj-msgq-{tag}", commands.check_object(queue[0], queue[1], "*MSGQ", ("*USE",)))
    p.check(f"chkobj-amqjrninf-{tag}", commands.check_object(library, "AMQJRNINF", "*USRSPC", ("*USE",)))
    attached = row.get("ATTACHED_JOURNAL_RECEIVER_NAME")
    if attached:
        p.check(f"chkobj-receiver-{tag}", commands.check_object(library, attached, "*JRNRCV", ("*OBJEXIST", "*USE")))
    p.check(f"chkobj-library-{tag}", commands.check_object("QSYS", library, "*LIB", ("*READ", "*ADD")))
    p.select(f"amqjrninf-{tag}", commands.amqjrninf_text(library))
    p.select(f"amqjrninf-hex-{tag}", commands.amqjrninf_binary(library))
    p.select(f"receivers-{tag}", commands.receivers(library, journal, instance))
    p.select(f"recovery-points-{tag}", commands.latest_recovery_points(library, with_tokens=tokens))
    p.select(f"messages-{tag}", commands.messages_since(library, journal, queue, None, with_tokens=tokens))
    if caps is None or caps.has("QSYS2.ASP_INFO"):
        p.select(f"asp-{tag}", commands.journal_asp_usage(library, journal))


def _text(row: dict | None, column: str) -> str | None:
    cell = (row or {}).get(column)
    return cell.strip() if isinstance(cell, str) and cell.strip() else None


def _header(release, env, values, ptf, wanted, user, save_library, host: HostConfig) -> dict[str, Any]:
    ccsid = _text(values.get("QCCSID"), "CURRENT_NUMERIC_VALUE")
    datfmt = _text(values.get("QDATFMT"), "CURRENT_CHARACTER_VALUE")
    levels: dict[str, int] = {}
    for row in ptf:
        level = _text(row, "PTF_GROUP_LEVEL")
        if level and level.isdigit() and (_text(row, "PTF_GROUP_STATUS") or "") == "INSTALLED":
            levels[row["PTF_GROUP_NAME"]] = max(levels.get(row["PTF_GROUP_NAME"], 0), int(level))
    return {
        "release": release,
        "ptf_groups": levels,
        "job": {
            "language": _text(values.get("QLANGID"), "CURRENT_CHARACTER_VALUE"),
            "ccsid": int(ccsid) if ccsid and ccsid.isdigit() else None,
            "date_format": f"*{datfmt}" if datfmt else None,
            "date_separator": (values.get("QDATSEP") or {}).get("CURRENT_CHARACTER_VALUE") or None,
            "from": "system values QLANGID, QCCSID, QDATFMT, QDATSEP (a job's own CHGJOB or user profile may differ)",
        },
        "user": user,
        "sql_runner": host.sql_runner,
        "save_library": save_library,
        "queue_managers": [{"name": n, "library": lib, "instance": i} for n, lib, i in wanted],
    }


def identifying_names(host: HostConfig, user: str, env: list, values: dict, profile: list) -> dict[str, str]:
    """The names that identify this partition or its people, by the kind of placeholder each gets: from the fleet
    file (host name and address, user), ENV_SYS_INFO (host name, CURRENT SERVER), QSRLNBR and USER_INFO."""
    found = {host.name: "HOST", user: "USER"}
    if not _is_ip(host.address) and host.address not in ("localhost",):
        found[host.address] = "HOST"
    for row in env:
        if name := _text(row, "HOST_NAME"):
            found[name] = "HOST"
        if rdb := _text(row, "RDB_NAME"):
            found.setdefault(rdb, "SYSTEM")
    for name, kind in list(found.items()):
        if kind == "HOST" and not _is_ip(name):
            found.setdefault(name.split(".")[0], "HOST")
    if serial := _text(values.get("QSRLNBR"), "CURRENT_CHARACTER_VALUE"):
        found[serial] = "SERIAL"
    for row in profile:
        # A site's own group profiles name people or teams; IBM's all start with Q (QMQMADM) and are kept.
        groups = [_text(row, "GROUP_PROFILE_NAME"), *((_text(row, "SUPPLEMENTAL_GROUP_LIST") or "").split())]
        for g in groups:
            if g and not _ibm_profile(g):
                found[g] = "USER"
    return {k: v for k, v in found.items() if k}


def _ibm_profile(name: str) -> bool:
    """IBM's own profiles (QSYS, QUSER, QMQM, QSECOFR...) start with Q, special values with *: they name no one."""
    return name.upper().startswith(("Q", "*"))


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


# --- anonymizing ------------------------------------------------------------------------------------------------

_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
# Anything with two colons and hex digits (compressed, with an IPv4 tail, with a zone): `ipaddress` then decides, so a
# time like 12:34:56 (which is no address) stays.
_IPV6 = re.compile(r"(?<![\w:.])[0-9A-Fa-f]*:[0-9A-Fa-f:]*:[0-9A-Fa-f]*(?:\.\d{1,3}){0,3}(?:%[\w.-]+)?(?![\w:])")
_NAME_EDGE = r"[\w$#@-]"
# SSH keys as OpenSSH prints them: a public key (known_hosts, authorized_keys: type, then the base64 wire format, which
# always starts AAAA), a PEM block, and the SHA256 and MD5 fingerprints (`ssh-keygen -l`, ssh's host key prompts).
_KEY_TYPES = (
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp(?:256|384|521)|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)"
    r"@openssh\.com)(?:-cert-v01@openssh\.com)?"
)
_PUBLIC_KEY = re.compile(rf"\b({_KEY_TYPES})(\s+)AAAA[A-Za-z0-9+/]+={{0,3}}")
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----.*?-----END \1-----", re.DOTALL)
_SHA256_FINGERPRINT = re.compile(r"\bSHA256:[A-Za-z0-9+/]{43}=?")
_MD5_FINGERPRINT = re.compile(r"(?<![\w:])(?:MD5:)?[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){15}(?![\w:])")
# Where IBM i shows a user profile of its own accord: a qualified job name (number/user/name, as in message texts and
# job logs: 123456/MQADMIN/QZSHSH) and a home directory (/home/MQADMIN, the HOMEDIR default of CRTUSRPRF).
_SYSTEM_NAME = r"[A-Za-z$#@][\w$#@.]{0,9}"
_QUALIFIED_JOB = re.compile(rf"(?<![\w$#@])\d{{6}}/({_SYSTEM_NAME})/{_SYSTEM_NAME}(?![\w$#@])")
_HOME_DIRECTORY = re.compile(rf"/home/({_SYSTEM_NAME})(?![\w$#@])", re.IGNORECASE)


class Anonymizer:
    """Replaces each identifying name by a placeholder of its kind (HOST, SYSTEM, USER, SERIAL, DOMAIN, KEY), and
    each address by one of its family (10.0.0.n, 2001:db8::n), the same one in every file of a capture.

    A placeholder keeps the name's length where it can (USER001 for a 7-character profile), and an address's is
    padded to the address's length: db2 prints its tables in columns, and a shorter cell would shift every later
    column of the row, so the table would no longer parse."""

    def __init__(self) -> None:
        self.placeholders: dict[str, str] = {}
        self._counts: dict[str, int] = {}
        self._addresses: dict[str, str] = {}
        self._keys: dict[str, str] = {}

    def learn(self, sensitive: dict[str, str]) -> None:
        for original, kind in sensitive.items():
            self._learn(original, kind)
            if kind == "HOST" and not _is_ip(original) and original.count(".") >= 2:
                # The DNS domain names the site, also in any other host name of it (ibmi2.corp.example.com).
                self._learn(original.split(".", 1)[1], "DOMAIN")

    def _learn(self, original: str, kind: str) -> None:
        key = original.upper()
        if key not in self.placeholders:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            self.placeholders[key] = _placeholder(kind, self._counts[kind], len(original))

    def discover(self, text: str) -> None:
        """Learn the user profiles IBM i shows in `text` of its own accord (job names, home directories). Called on
        every text of a capture before any is replaced, so a name is replaced in the files read before it too."""
        for pattern in (_QUALIFIED_JOB, _HOME_DIRECTORY):
            for match in pattern.finditer(text):
                if not _ibm_profile(match.group(1)):
                    self._learn(match.group(1), "USER")

    def _address(self, match: re.Match[str]) -> str:
        text = match.group()
        try:
            address = ipaddress.ip_address(text.split("%")[0])
        except ValueError:
            return text  # a version, a number or a time, not an address
        if address.is_loopback or address.is_unspecified:
            return text  # the same on every machine
        if address.compressed not in self._addresses:
            number = len(self._addresses) + 1
            self._addresses[address.compressed] = f"10.0.0.{number}" if address.version == 4 else f"2001:db8::{number}"
        return self._addresses[address.compressed].ljust(len(text))

    def _key(self, material: str) -> str:
        if material not in self._keys:
            self._keys[material] = f"KEY{len(self._keys) + 1}"
        return self._keys[material]

    def __call__(self, text: str) -> str:
        # Keys first: their base64 could hold a name or digits an address pattern would cut apart.
        text = _PEM_BLOCK.sub(lambda m: self._key(m.group()), text)
        text = _PUBLIC_KEY.sub(lambda m: m.group(1) + m.group(2) + self._key(m.group()), text)
        text = _SHA256_FINGERPRINT.sub(lambda m: "SHA256:" + self._key(m.group()), text)
        text = _MD5_FINGERPRINT.sub(lambda m: "MD5:" + self._key(m.group().removeprefix("MD5:").lower()), text)
        for original in sorted(self.placeholders, key=len, reverse=True):
            pattern = rf"(?<!{_NAME_EDGE}){re.escape(original)}(?!{_NAME_EDGE})"
            text = re.sub(pattern, self.placeholders[original], text, flags=re.IGNORECASE)
        text = _IPV6.sub(self._address, text)
        return _IPV4.sub(self._address, text)

    def value(self, data: Any) -> Any:
        if isinstance(data, str):
            return self(data)
        if isinstance(data, dict):
            return {self.value(k): self.value(v) for k, v in data.items()}
        if isinstance(data, list):
            return [self.value(v) for v in data]
        return data


def _placeholder(kind: str, number: int, length: int) -> str:
    plain = f"{kind}{number}"
    if length <= len(str(number)):
        return plain
    if length >= len(plain):
        return kind + str(number).rjust(length - len(kind), "0")
    return kind[: length - len(str(number))] + str(number)


# --- the folder ---------------------------------------------------------------------------------------------------


def _entry(answer: Answer, anonymize: Anonymizer, taken_at: str) -> tuple[dict[str, Any], str]:
    stdout, stderr, command = anonymize(answer.stdout), anonymize(answer.stderr), anonymize(answer.command)
    entry: dict[str, Any] = {"exit_status": answer.exit_status}
    if answer.reads == "sql":
        entry.update(_sql_reading(stdout))
        stream = "stdout"
    elif answer.reads == "cl":
        entry["kind"] = "cl"
        stream = "stdout" if answer.exit_status == 0 else "stderr"
        entry["messages"] = [list(m) for m in MESSAGE_LINE.findall(stdout if stream == "stdout" else stderr)]
    else:
        entry["kind"] = "pase"
        entry["reads"] = answer.reads
        stream = "stdout"
        if answer.reads == "mqs-ini" and answer.exit_status == 0:
            entry["queue_managers"] = parse_mqs_ini(stdout)
        if answer.reads == "digest":
            entry["sha256"] = hostdigest.parse_digest(stdout) if answer.exit_status == 0 else None
    extension = "out" if stream == "stdout" else "err"
    entry = {
        "file": f"{answer.name}.{extension}",
        "stream": stream,
        **entry,
        "stdout" if stream == "stderr" else "stderr": stderr if stream == "stdout" else stdout,
        "command": command,
        "statement": anonymize(answer.statement) if answer.statement else None,
        "source": {"tool": SOURCE, "version": __version__, "date": taken_at},
        "reconstructed": "the stream as received over SSH, decoded as UTF-8; names replaced by placeholders",
    }
    return entry, stdout if stream == "stdout" else stderr


def _sql_reading(stdout: str) -> dict[str, Any]:
    """What the client must read: a table's rows (counted from the trailer, not by the client's parser) and first
    row, or an error's SQLSTATE, native code and text. `db2-unreadable` when the client cannot read it at all: the
    conformance tests then fail on it, which is what a capture is for."""
    try:
        results = parse_results(stdout)
    except Db2OutputError as exc:
        return {"kind": "db2-unreadable", "problem": str(exc)}
    if len(results) != 1:
        return {"kind": "db2-unreadable", "problem": f"{len(results)} results in one statement's answer"}
    (result,) = results
    if isinstance(result, Db2Failure):
        return {"kind": "db2-error", "sqlstate": result.sqlstate, "sqlcode": result.sqlcode, "text": result.text}
    trailer = TRAILER.findall(stdout)
    reading: dict[str, Any] = {"kind": "db2-table", "rows": int(trailer[-1]) if trailer else None}
    if result:
        reading["first_row"] = dict(result[0])
    return reading


@dataclass(frozen=True)
class CaptureFolder:
    """What `write` puts in a folder, by relative path; built whole before anything is written."""

    files: dict[str, str]

    def paths(self) -> list[str]:
        return sorted(self.files)


def build(hosts: list[HostAnswers], *, taken_at: datetime | None = None) -> CaptureFolder:
    """One sub-folder per host (HOST1..., as its manifest says), anonymized with one set of placeholders."""
    anonymize = Anonymizer()
    for h in hosts:
        anonymize.learn(h.sensitive)
    for h in hosts:
        for answer in h.answers:
            for text in (answer.command, answer.statement or "", answer.stdout, answer.stderr):
                anonymize.discover(text)
    date = (taken_at or datetime.now(UTC)).strftime("%Y-%m-%d")
    files: dict[str, str] = {}
    for h in hosts:
        folder = anonymize.placeholders[h.host.name.upper()].lower()
        entries = []
        for answer in h.answers:
            entry, text = _entry(answer, anonymize, date)
            entries.append(entry)
            files[f"{folder}/fixtures/{entry['file']}"] = text
        manifest = {
            "about": "Answers of one IBM i partition to every read-only statement and command mqjournal sends, "
            f"captured by `{SOURCE}`. Each entry: the fixture file (under fixtures/), its stream (the other stream "
            "inline), the exit status, the command line and SQL statement, and what the client must read from it. "
            "Host names and their domain, the system's database name, addresses, user profiles, the serial number "
            "and any SSH key or fingerprint are placeholders.",
            "source": {"tool": SOURCE, "version": __version__, "date": date},
            **anonymize.value(h.header),
            "fixtures": entries,
        }
        files[f"{folder}/manifest.json"] = json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    return CaptureFolder(files)


def write(folder: CaptureFolder, directory: Path) -> list[Path]:
    written = []
    for relative, text in sorted(folder.files.items()):
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def capture_fleet(
    config: FleetConfig,
    connectors: dict[str, ConnectFactory],
    *,
    hosts: list[str] | None = None,
    audit: AuditLog,
    save_library: str = "QGPL",
) -> CaptureFolder:
    """The capture of every host (or `hosts`), in memory: nothing is written until `write`."""
    answers = []
    for host in (h for h in config.hosts if not hosts or h.name in hosts):
        user = config.user_for(host)
        session = checking_session(host, user, connectors[host.name], audit, command_timeout=60.0)
        with session:
            answers.append(probe_host(session, host, user, save_library))
    return build(answers)
