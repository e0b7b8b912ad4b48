"""One SSH login per session for the downloads through OpenSSH's client: a connection master its ssh runs share.

Each download through OpenSSH's ssh (sftpcopy) was a process that made a connection of its own: a key exchange, a
login and, on IBM i, a sign-on job, for every save file. With OpenSSH's connection sharing (ssh_config(5):
ControlMaster, ControlPath, ControlPersist) the first download of a session logs in and leaves its connection behind
as a master; the next ones open a channel on it. Measured on loopback against the simulator (2026-12-03, 30 runs
each): an sftp session cost 91 ms of wall time, 21 ms of the client's CPU and 10.5 of the server's with a login each;
32, 10 and 4.2 ms through the master.

- The control socket lies in a folder only this user may enter (mkdtemp, mode 0700), one per IbmiSession: whoever
  can connect to it runs commands as the session's user without its key, so it is never shared beyond the session.
- ControlMaster=auto: the first ssh becomes the master, the rest join it; a master that is gone (its connection
  dropped, or it was killed) leaves at most a stale socket, which the next ssh removes before it logs in afresh, and
  two that start at once settle it between them (the second logs in on its own).
- ControlPersist: the master ends by itself after `IDLE_SECONDS` without a client, so a worker killed mid-run leaves
  no login behind for long; the session's close ends it at once (``ssh -O exit``) and removes the folder. A folder
  that went while the session lives (a clean-up of /tmp) is made again before the next download: in a missing folder
  ssh can bind no socket and ends without a transfer.
- A worker killed outright (SIGKILL, the OOM killer) leaves its folder behind, and its master ends by itself once
  idle. A live session holds an exclusive lock (flock(2)) on its folder's lock file, which the kernel releases when
  the process ends, however it ends; each new master first removes this user's folders whose lock nobody holds.
- The host key check and the login are the master's, made with every option of the download's own ssh command
  (strict host key checking against the pinned key); a client that joins it makes no key exchange of its own.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import stat
import subprocess
import tempfile
import threading
import weakref
from pathlib import Path

from mqjournal.ibmi.transport import IbmiSession, OpenSshLogin

__all__ = ["IDLE_SECONDS", "ConnectionMaster", "master_for"]

log = logging.getLogger(__name__)

IDLE_SECONDS = 30
"""How long a master stays without a client before it ends: longer than the pause between one queue manager's save
file and the next's on a host, far shorter than a maintenance window."""

_SOCKET_PATH_MAX = 80
"""A Unix socket's path is at most 108 bytes on Linux (104 on the BSDs), and the master binds it first under a name
17 characters longer (".<16 random characters>", then renamed): a longer path shares no connection."""

_masters: weakref.WeakKeyDictionary[IbmiSession, ConnectionMaster] = weakref.WeakKeyDictionary()
_masters_lock = threading.Lock()


_PREFIX = "mqj-ssh-"
_LOCK = "lock"


class ConnectionMaster:
    """The control socket of one session's master, and the means to end it."""

    def __init__(self, ssh: str, login: OpenSshLogin) -> None:
        self._ssh, self._login = ssh, login
        remove_abandoned(Path(tempfile.gettempdir()))
        self.folder = Path(tempfile.mkdtemp(prefix=_PREFIX))
        self.socket = self.folder / "master"
        self._ended = False
        self._guard = threading.Lock()  # the session's downloads may run at once
        self._lock_fd = _hold(self.folder)

    def options(self) -> dict[str, str] | None:
        """ssh_config options that make a download's ssh become the master or join it; None when it logs in on its
        own (the session ended, or the socket's path is too long)."""
        with self._guard:
            if self._ended or len(str(self.socket)) > _SOCKET_PATH_MAX:
                return None
            # ssh ends at once, logging in to nothing, when the socket's folder is missing (a clean-up of /tmp took
            # it); made again, it needs the session's lock again, or the next session's sweep would take it.
            try:
                self.folder.mkdir(mode=0o700)
            except FileExistsError:
                pass
            else:
                os.close(self._lock_fd)
                self._lock_fd = _hold(self.folder)
        return {"ControlMaster": "auto", "ControlPath": str(self.socket), "ControlPersist": str(IDLE_SECONDS)}

    def end(self) -> None:
        """Stop the master (if one runs) and remove its folder; the next download (if any) logs in on its own."""
        with self._guard:
            if self._ended:
                return
            self._ended = True
        if self.socket.exists():
            login = self._login
            argv = [self._ssh, "-F", "none", "-o", f"ControlPath={self.socket}", "-O", "exit"]
            argv += ["-p", str(login.port), "-l", login.user, "--", login.address]
            try:
                subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                # It still ends by itself once idle for IDLE_SECONDS.
                log.warning("%s: could not stop the SSH connection master at %s: %s", login.address, self.socket, exc)
        shutil.rmtree(self.folder, ignore_errors=True)
        os.close(self._lock_fd)


def _hold(folder: Path) -> int:
    """Lock the folder's lock file for as long as the session lives. Made and locked under another name first, then
    renamed: a sweep only ever finds the lock file locked while its session lives."""
    fd, made = tempfile.mkstemp(dir=folder, prefix=f"{_LOCK}.")
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # new and ours alone: cannot be held
    os.replace(made, folder / _LOCK)
    return fd


def remove_abandoned(parent: Path) -> list[Path]:
    """Remove this user's master folders in `parent` whose session is gone (its lock file held by no process), and
    name them. A folder without a lock file (being made, or left by an earlier version) is left as it is."""
    removed = []
    for folder in parent.glob(f"{_PREFIX}*"):
        try:
            meta = folder.lstat()
            if not stat.S_ISDIR(meta.st_mode) or meta.st_uid != os.getuid():
                continue
            fd = os.open(folder / _LOCK, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # a live session's
        else:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            os.close(fd)
    if removed:
        log.info("removed %d SSH connection master folder(s) of sessions that ended without closing", len(removed))
    return removed


def master_for(session: IbmiSession, ssh: str, login: OpenSshLogin) -> ConnectionMaster:
    """The session's connection master, made at its first download and ended when the session closes (or, for a
    session never closed, when it is collected)."""
    with _masters_lock:
        master = _masters.get(session)
        if master is None:
            master = _masters[session] = ConnectionMaster(ssh, login)
            session.on_close(master.end)
            weakref.finalize(session, master.end)
        return master
