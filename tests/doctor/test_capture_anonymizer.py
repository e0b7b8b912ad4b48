"""The capture's anonymizer alone: what a real partition could put in its answers that names it, its people or its
keys is gone from every file of the folder (stdout, stderr, statement, command line), each kind by a stable
placeholder, and what mqjournal reads from the answers (receiver names, libraries, times, sizes) is still read.

The answers are db2's tables as the simulator prints them (sim/sql.py), from rows a real partition could hold."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime

from mqjournal.capture import Answer, HostAnswers, build, header_statements, identifying_names
from mqjournal.fleet import HostConfig
from mqjournal.ibmi import commands
from mqjournal.ibmi.db2out import parse_single
from mqjournal.sim.sql import run_db2

HOST = HostConfig(name="prodibm01", address="prodibm01.corp.acme-bank.com", port=22)
USER = "JSMITH"
RDB_NAME = "PRODSYS1"
SERIAL = "78A1B2C"
SHA256_FINGERPRINT = "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8"
MD5_FINGERPRINT = "16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48"
PUBLIC_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
    "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vbqajDhA"
)
HOST_KEY_LINE = f"prodibm01.corp.acme-bank.com,192.168.40.17 {PUBLIC_KEY}"


class Catalog:
    """A partition's rows for the simulator's db2: the renderer, without a partition behind it."""

    def __init__(self, views: Mapping[str, list[dict[str, object]]]) -> None:
        self.views = views

    def rows(self, view: str) -> Iterable[Mapping[str, object]]:
        return self.views.get(view, [])

    def now(self) -> datetime:
        return datetime(2026, 11, 22, 12, 0, 0)

    def current_server(self) -> str:
        return RDB_NAME


def _receiver(name: str, size: int, attached: datetime, status: str) -> dict[str, object]:
    return {
        "JOURNAL_RECEIVER_NAME": name,
        "JOURNAL_RECEIVER_LIBRARY": "QMPROD",
        "JOURNAL_NAME": "AMQAJRN",
        "JOURNAL_LIBRARY": "QMPROD",
        "STATUS": status,
        "SIZE": size,
        "THRESHOLD": 100000,
        "ATTACH_TIMESTAMP": attached,
        "FIRST_SEQUENCE_NUMBER": 1,
        "LAST_SEQUENCE_NUMBER": 4711,
    }


def _views(message_text: str) -> dict[str, list[dict[str, object]]]:
    return {
        "SYSIBMADM.ENV_SYS_INFO": [
            {"OS_NAME": "IBM i", "OS_VERSION": "7", "OS_RELEASE": "5", "HOST_NAME": "lpar7.corp.acme-bank.com"}
        ],
        "QSYS2.SYSTEM_VALUE_INFO": [
            {"SYSTEM_VALUE_NAME": "QCCSID", "CURRENT_NUMERIC_VALUE": 37},
            {"SYSTEM_VALUE_NAME": "QDATFMT", "CURRENT_CHARACTER_VALUE": "YMD"},
            {"SYSTEM_VALUE_NAME": "QLANGID", "CURRENT_CHARACTER_VALUE": "ENU"},
            {"SYSTEM_VALUE_NAME": "QSRLNBR", "CURRENT_CHARACTER_VALUE": SERIAL},
        ],
        "QSYS2.USER_INFO": [
            {
                "AUTHORIZATION_NAME": USER,
                "STATUS": "*ENABLED",
                "SPECIAL_AUTHORITIES": "*JOBCTL *SAVSYS",
                "GROUP_PROFILE_NAME": "MQOPS",
                "SUPPLEMENTAL_GROUP_LIST": "QMQMADM",
            }
        ],
        "QSYS2.MESSAGE_QUEUE_INFO": [
            {
                "MESSAGE_QUEUE_LIBRARY": "QSYS",
                "MESSAGE_QUEUE_NAME": "QSYSOPR",
                "MESSAGE_ID": "CPI70E3",
                "MESSAGE_TIMESTAMP": datetime(2026, 11, 22, 9, 30, 15),
                "MESSAGE_TEXT": message_text,
                "MESSAGE_TOKENS": "AMQAJRN   QMPROD    ".encode("cp037"),
            }
        ],
        "QSYS2.JOURNAL_RECEIVER_INFO": [
            _receiver("AMQA000041", 1048576, datetime(2026, 11, 20, 8, 0), "SAVED"),
            _receiver("AMQA000042", 524288, datetime(2026, 11, 21, 9, 30, 15, 123456), "ATTACHED"),
        ],
    }


ENV_SYS_INFO, SYSTEM_VALUES, _ = header_statements()
MESSAGES = commands.messages_since("QMPROD", "AMQAJRN", ("QSYS", "QSYSOPR"), None)
RECEIVERS = commands.receivers("QMPROD", "AMQAJRN", "A")


def _answers(text: str) -> HostAnswers:
    """The answers of partition prodibm01 with `text` in a message's text (stdout), in an error (stderr) and in the
    statement sent; identifying names learned from them as `probe_host` learns them."""
    catalog = Catalog(_views(f"Job 123456/QUSER/QZDASOINIT on {RDB_NAME}: {text}"))
    answers, rows = [], {}
    named = [
        ("env-sys-info", ENV_SYS_INFO),
        ("system-values", SYSTEM_VALUES),
        ("user-info", commands.user_profile(USER)),
        ("messages", MESSAGES),
        ("receivers", RECEIVERS),
    ]
    for number, (name, statement) in enumerate(named, start=1):
        out = run_db2([statement], catalog)
        assert out.exit_status == 0, out.stdout + out.stderr
        rows[name] = parse_single(out.stdout)
        sent = f"{statement} AND MESSAGE_TEXT LIKE '%{text}%'" if name == "messages" else statement
        command = commands.sql(sent, runner="qsh").text
        stderr = f"qsh: 001-0014 Command {text} not found.\n" if name == "messages" else ""
        answers.append(Answer(f"db2/{number:02d}-{name}", command, sent, "sql", 0, out.stdout, stderr))
    values = {r["SYSTEM_VALUE_NAME"]: r for r in rows["system-values"]}
    header = {"release": "7.5", "user": USER, "queue_managers": [{"name": "PROD", "library": "QMPROD"}]}
    sensitive = identifying_names(HOST, USER, rows["env-sys-info"], values, rows["user-info"])
    return HostAnswers(HOST, USER, "QGPL", answers, header, sensitive)


def _folder(text: str) -> dict[str, str]:
    return build([_answers(text)], taken_at=datetime(2026, 11, 22)).files


def _all_text(text: str) -> str:
    return "\n".join(_folder(text).values())


def _left(secrets: list[str], text: str) -> list[str]:
    return [s for s in secrets if s.lower() in text.lower()]


# --- each kind of identifying name ---------------------------------------------------------------------------------


def test_host_names_their_short_names_and_their_domain_are_replaced():
    """The fleet file's name and address, and the partition's own TCP/IP host name (ENV_SYS_INFO), short or long."""
    text = _all_text("lost the link to prodibm01, lpar7 and backup7.corp.acme-bank.com")

    assert _left(["prodibm01", "lpar7", "acme-bank", "corp.acme"], text) == []
    assert "backup7.DOMAIN" in text  # another host of the site: its domain is gone, which is what named the site


def test_the_relational_database_name_current_server_is_replaced():
    """The system name IBM i writes into message texts, read by CURRENT SERVER: in the header's answer, the message
    text, an error and a statement."""
    text = _all_text(f"RDB {RDB_NAME} not available")

    assert _left([RDB_NAME], text) == []
    assert "SYSTEM01" in text  # 8 characters, as PRODSYS1: the db2 columns keep their places


def test_ipv4_addresses_are_replaced():
    text = _all_text("connection from 192.168.40.17 refused")

    assert _left(["192.168.40.17"], text) == []
    assert "10.0.0.1" in text


def test_ipv6_addresses_are_replaced_in_every_spelling_by_one_placeholder():
    text = _all_text("from 2001:4860:4860::8888 and 2001:4860:4860:0:0:0:0:8888, link fe80::1ff:fe23:4567:890a%eth0")

    assert _left(["4860", "fe80", "890a"], text) == []
    assert len(set(re.findall(r"2001:db8::\d+", text))) == 2  # the two spellings of one address: one placeholder


def test_user_profiles_are_replaced_also_in_job_names_and_home_directories_and_ibm_profiles_stay():
    text = _all_text(f"job 654321/KDOE/QZSHSH of {USER} (group MQOPS) read /home/{USER}/.profile and /home/AWONG/x")

    assert _left([USER, "KDOE", "MQOPS", "AWONG"], text) == []
    assert "/QUSER/QZDASOINIT" in text and "QMQMADM" in text  # IBM's profiles name no one


def test_the_serial_number_is_replaced():
    text = _all_text(f"machine serial {SERIAL}")

    assert _left([SERIAL], text) == []
    assert "SERIAL1" in text


def test_ssh_key_fingerprints_are_replaced():
    text = _all_text(f"host key {SHA256_FINGERPRINT} (MD5:{MD5_FINGERPRINT}) changed")

    assert _left([SHA256_FINGERPRINT.removeprefix("SHA256:"), MD5_FINGERPRINT], text) == []
    assert "SHA256:KEY" in text and "MD5:KEY" in text


def test_a_host_key_line_and_a_private_key_are_replaced():
    private = "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\\n-----END OPENSSH PRIVATE KEY-----"
    text = _all_text(f"known_hosts: {HOST_KEY_LINE}; key: {private}")

    assert _left(["AAAAC3NzaC1lZDI1NTE5", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "192.168.40.17"], text) == []
    assert "ssh-ed25519 KEY" in text


# --- stable placeholders, readable answers --------------------------------------------------------------------------


def test_a_name_gets_the_same_placeholder_in_every_file_and_field():
    folder = _folder(f"job 123456/{USER}/QZSHSH on {RDB_NAME} from 192.168.40.17")
    (manifest,) = [text for path, text in folder.items() if path.endswith("manifest.json")]
    messages = next(text for path, text in folder.items() if "messages" in path)
    user_info = next(text for path, text in folder.items() if "user-info" in path)

    assert '"user": "USER01"' in manifest
    assert "123456/USER01/QZSHSH" in messages and "USER01" in user_info
    assert messages.count("SYSTEM01") == 2 and "10.0.0.1" in messages
    assert manifest.count("10.0.0.1") == 4  # statement, command line, stderr and the messages' first row
    assert "10.0.0.2" not in "".join(folder.values())  # one address, one placeholder
    assert all(path.startswith("host00001/") for path in folder)  # the folder is named by the placeholder too


def test_receiver_names_libraries_times_and_sizes_read_the_same_after_the_names_are_replaced():
    """A name's placeholder keeps its length and an address's is padded to it: a message's text is a db2 column with
    others after it (the replacement data mqjournal reads), which must stay where they were."""
    answers = _answers(f"{USER} on {RDB_NAME} at 192.168.140.217 and 2001:4860:4860::8888, 12:34:56")
    folder = build([answers]).files
    receivers = next(text for path, text in folder.items() if "receivers" in path)
    messages = next(text for path, text in folder.items() if "messages" in path)

    assert parse_single(receivers) == parse_single(answers.answers[4].stdout)
    (row,) = parse_single(messages)
    (before,) = parse_single(answers.answers[3].stdout)
    assert row == {**before, "MESSAGE_TEXT": row["MESSAGE_TEXT"]}
    assert row["MESSAGE_TEXT"].endswith("12:34:56")  # a time is no IPv6 address
