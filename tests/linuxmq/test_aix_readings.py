"""What an AIX host answers, read: POSIX's `ls -l` of the log directory (no seconds, a year for old files) and a digest
program's SHA-256 of an extent (docs/linux-interfaces.md, section 12)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mqjournal.linuxmq import commands, platforms
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.readings import ReadingError, extent_sha256, listed_extents, listed_extents_posix

NOW = datetime(2026, 12, 2, 5, 0, tzinfo=UTC)
ACTIVE = "/var/mqm/log/QM!ORDERS/active/"
EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

# As AIX lists (captured listings' layout: zero-padded day, the year then two blanks), with POSIX's own forms between.
AIX_LISTING = (
    "total 1536\n"
    "-rw-rw----    1 mqm      mqm          262144 Jun 10 2025  S0000007.LOG\n"
    "-rw-rw----    1 mqm      mqm          262144 Sep 05 14:59 S0000008.LOG\n"
    "-rw-rw---- 1 mqm mqm 262144 Nov  3 09:07 S0000009.LOG\n"
    "-rw-rw---- 1 mqm mqm 262144 Jan  2  2024 R0000003.LOG\n"
    "-rw-rw----+   1 mqm      mqm          262144 Dec 02 04:59 S0000010.LOG\n"
    "drwxrwx---    2 mqm      mqm             256 Dec 01 10:00 old\n"
    "-rw-rw----    1 mqm      mqm             512 Dec 01 10:00 amqhlctl.lfh\n"
)


def test_a_posix_listing_gives_every_extent_with_its_size_and_a_time_to_the_minute_or_a_year() -> None:
    listed = {f.extent.name: f for f in listed_extents_posix(AIX_LISTING, NOW)}
    assert list(listed) == ["R0000003.LOG", "S0000007.LOG", "S0000008.LOG", "S0000009.LOG", "S0000010.LOG"]
    assert {f.size_bytes for f in listed.values()} == {262144}
    assert listed["S0000007.LOG"].modified_at == datetime(2025, 6, 10, tzinfo=UTC)  # a year only: its midnight
    assert listed["R0000003.LOG"].modified_at == datetime(2024, 1, 2, tzinfo=UTC)
    assert listed["S0000008.LOG"].modified_at == datetime(2026, 9, 5, 14, 59, tzinfo=UTC)
    assert listed["S0000009.LOG"].modified_at == datetime(2026, 11, 3, 9, 7, tzinfo=UTC)
    assert listed["S0000010.LOG"].modified_at == datetime(2026, 12, 2, 4, 59, tzinfo=UTC)


def test_a_time_without_a_year_read_in_january_is_of_last_december() -> None:
    line = "-rw-rw----    1 mqm      mqm          262144 Dec 30 23:59 S0000001.LOG\n"
    (listed,) = listed_extents_posix(line, datetime(2027, 1, 2, tzinfo=UTC))
    assert listed.modified_at == datetime(2026, 12, 30, 23, 59, tzinfo=UTC)
    (today,) = listed_extents_posix(line.replace("Dec 30", "Jan 02"), datetime(2027, 1, 2, tzinfo=UTC))
    assert today.modified_at.year == 2027


@pytest.mark.parametrize(
    "line",
    [
        "-rw-rw---- 1 mqm mqm 262144 1764651600 S0000001.LOG",  # GNU's --time-style=+%s, not POSIX's
        "-rw-rw---- 1 mqm mqm 262144 déc. 02 04:59 S0000001.LOG",  # a locale's month, not the POSIX locale's
        "-rw-rw---- 1 mqm mqm 262144 Feb 30 10:00 S0000001.LOG",  # no such day
        "crw-rw-rw-    1 root     system        2,  2 Mar 13 15:46 S0000001.LOG",  # a device: no size
        "ls: 0653-341 The file /var/mqm/log/QM!ORDERS/active/ does not exist.",
    ],
    ids=["epoch seconds", "another locale", "no such day", "a device", "an error"],
)
def test_a_line_not_of_posix_ls_l_refuses_the_whole_listing_naming_the_line(line: str) -> None:
    listing = "total 512\n-rw-rw----    1 mqm      mqm          262144 Sep 05 14:59 S0000000.LOG\n" + line + "\n"
    with pytest.raises(ReadingError) as refused:
        listed_extents_posix(listing, NOW)
    assert repr(line) in str(refused.value)


def test_neither_listing_reads_as_the_other() -> None:
    with pytest.raises(ReadingError):
        listed_extents(AIX_LISTING)
    with pytest.raises(ReadingError):
        listed_extents_posix("total 256\n-rw-rw---- 1 mqm mqm 262144 1764651600 S0000001.LOG\n", NOW)


def test_a_digest_is_read_only_of_the_file_it_names() -> None:
    path = f"{ACTIVE}S0000007.LOG"
    assert extent_sha256(f"{EMPTY} *{path}\n", path) == EMPTY  # openssl dgst -sha256 -r
    assert extent_sha256(f"{EMPTY}  {path}\n", path) == EMPTY  # sha256sum
    assert extent_sha256(f"{EMPTY} *{ACTIVE}S0000008.LOG\n", path) is None  # another file's
    assert extent_sha256(f"SHA2-256({path})= {EMPTY}\n", path) is None  # not the -r form asked for
    assert extent_sha256(f"{EMPTY} *{path}\n{EMPTY} *{path}\n", path) is None
    assert extent_sha256("ksh: openssl:  not found.\n", path) is None


def test_aix_lists_in_the_posix_locale_and_digests_with_openssl_first() -> None:
    assert platforms.AIX.list_extents(ACTIVE).text == "LC_ALL=C ls -l '/var/mqm/log/QM!ORDERS/active/'"
    assert platforms.LINUX.list_extents(ACTIVE).text == "ls -l --time-style=+%s '/var/mqm/log/QM!ORDERS/active/'"
    first, then = platforms.AIX.digest_tools
    extent = Extent.parse("S0000007.LOG")
    assert commands.extent_digest(ACTIVE, extent, first).text == (
        "openssl dgst -sha256 -r '/var/mqm/log/QM!ORDERS/active/S0000007.LOG'"
    )
    assert commands.digest_probe(then).text == "/opt/freeware/bin/sha256sum /dev/null"
    assert commands.extent_digest(ACTIVE, extent).text == "sha256sum '/var/mqm/log/QM!ORDERS/active/S0000007.LOG'"
    assert (platforms.AIX.mq_bin, platforms.LINUX.mq_bin) == ("/usr/mqm/bin", "/opt/mqm/bin")
    assert platforms.platform_of("aix") is platforms.AIX
    assert platforms.platform_of("windows") is platforms.WINDOWS
    with pytest.raises(ValueError, match="hpux"):
        platforms.platform_of("hpux")
