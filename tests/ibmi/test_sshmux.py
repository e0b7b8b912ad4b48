"""The connection masters' folders (mqjournal.ibmi.sshmux): one killed worker's folder is removed by the next master,
a live session's never, whichever process holds it."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqjournal.ibmi import sshmux
from mqjournal.ibmi.transport import OpenSshLogin

LOGIN = OpenSshLogin(
    address="127.0.0.1", port=22, user="mqjournal", known_hosts_line=None, known_hosts=None, key_file=None
)

# A worker that makes a session's master folder, says where, and then waits to be killed or ended.
WORKER = textwrap.dedent(
    """
    import sys, tempfile
    from mqjournal.ibmi import sshmux
    from mqjournal.ibmi.transport import OpenSshLogin
    tempfile.tempdir = sys.argv[1]
    master = sshmux.ConnectionMaster("ssh", OpenSshLogin("127.0.0.1", 22, "mqjournal", None, None, None))
    print(master.folder, flush=True)
    sys.stdin.read()
    """
)


@pytest.fixture
def tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The temporary folder masters are made in: a short path, as a control socket's must be (sshmux)."""
    folder = Path(tempfile.mkdtemp(prefix="mqjt-"))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def workers() -> Iterator[list[subprocess.Popen]]:
    started: list[subprocess.Popen] = []
    yield started
    for worker in started:
        worker.kill()
        worker.wait()


def start_worker(tmp: Path, workers: list[subprocess.Popen]) -> tuple[subprocess.Popen, Path]:
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(tmp)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    workers.append(worker)
    assert worker.stdout is not None
    return worker, Path(worker.stdout.readline().strip())


def held(folder: Path) -> bool:
    """Whether a process holds the folder's session lock (another open file description of it cannot take it)."""
    fd = os.open(folder / "lock", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_the_folder_of_a_worker_killed_outright_is_removed_by_the_next_master(tmp: Path, workers):
    killed, its_folder = start_worker(tmp, workers)
    living, live_folder = start_worker(tmp, workers)
    os.kill(killed.pid, signal.SIGKILL)  # no close, no finalizer: the folder stays behind
    killed.wait()
    assert its_folder.is_dir() and live_folder.is_dir() and held(live_folder) and not held(its_folder)

    master = sshmux.ConnectionMaster("ssh", LOGIN)

    assert not its_folder.exists()
    assert live_folder.is_dir()  # another process's live session
    assert master.folder.is_dir() and living.poll() is None
    master.end()


def test_a_live_sessions_folder_is_never_removed_even_one_made_again(tmp: Path):
    first = sshmux.ConnectionMaster("ssh", LOGIN)
    assert first.options() is not None
    # A clean-up of /tmp took the folder: made again by the next download, under the session's lock again.
    for path in first.folder.iterdir():
        path.unlink()
    first.folder.rmdir()
    assert first.options() is not None and first.folder.is_dir()
    assert held(first.folder)

    assert sshmux.remove_abandoned(tmp) == []
    second = sshmux.ConnectionMaster("ssh", LOGIN)
    assert first.folder.is_dir() and second.folder.is_dir()

    first.end()
    second.end()
    assert list(tmp.iterdir()) == []


def test_only_folders_with_the_sessions_lock_file_are_judged(tmp: Path):
    """A folder being made (no lock file yet) or left by an earlier version, a file of the same name, and a symlink
    to a folder are left as they are."""
    making = tmp / "mqj-ssh-making"
    making.mkdir()
    a_file = tmp / "mqj-ssh-file"
    a_file.write_text("")
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "lock").write_text("")
    (tmp / "mqj-ssh-link").symlink_to(elsewhere)

    assert sshmux.remove_abandoned(tmp) == []
    assert making.is_dir() and a_file.is_file() and (elsewhere / "lock").is_file()
