"""The audit log's open intents (commands written as sent that have neither an outcome nor a reconciliation yet),
without reading the whole log each time it is asked.

Every step on a queue manager asks which of its host's commands were interrupted (mqjournal.ibmi.reconcile). The
audit log only grows, with every command of every run, so reading it whole for each question made a step's cost
grow with the fleet (5,000 queue managers each reading the log they all append to) and with how long mqjournal has
been in use. The log is append-only: the intents open at a byte offset, updated with the records after it, are the
intents open now. So this module keeps, per log, how far it has read and what was open there: in memory for the
process, and in a side file (`<log>.open.json`) for the next process. The side file is only a shortcut: when the log
at that path is not the one it describes (shorter, another file, other bytes before the offset), it is ignored and
the log is read whole.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

_CLOSING = ("outcome", "reconciled")
# The bytes just before the offset, kept to tell the log read from another one at the same path (restored, or
# rewritten in place to the same size): the log is append-only, and an edit before its last records goes unseen.
_TAIL_BYTES = 4096
_CHUNK = 1 << 20


@dataclass
class _Scan:
    """What was open after the first `offset` bytes (`lines` lines) of the log file `device`/`inode`."""

    device: int = 0
    inode: int = 0
    offset: int = 0
    lines: int = 0
    tail: str = ""  # hex of the last _TAIL_BYTES before `offset`
    open: dict[str, dict] = field(default_factory=dict)  # intent id -> intent, in the log's order


_SAVE_EVERY = 256 * 1024
_scans: dict[Path, _Scan] = {}
_saved: dict[Path, int] = {}  # the offset of the side file this process last wrote
_locks: dict[Path, threading.Lock] = {}
_guard = threading.Lock()


def open_intents(path: Path) -> list[dict]:
    """The intents of the audit log `path` that have no outcome or reconciliation yet, oldest first."""
    path = Path(path).absolute()
    with _guard:
        lock = _locks.setdefault(path, threading.Lock())
    with lock:  # one thread reads what was appended; the others then find it read
        if not path.exists():
            _scans.pop(path, None)
            return []
        known = _usable(path, _scans.get(path))
        scan = _advance(path, known or _usable(path, _load(path)) or _Scan())
        # The side file is rewritten once the process has read _SAVE_EVERY bytes past it, not at every read: with
        # many sessions in a task, writing it was a cost of its own; the next process reads at most that much.
        if known is None or scan.offset - _saved.get(path, 0) >= _SAVE_EVERY or scan.offset < _saved.get(path, 0):
            _save(path, scan)
            _saved[path] = scan.offset
        _scans[path] = scan
        return list(scan.open.values())


def side_file(path: Path) -> Path:
    return path.with_name(path.name + ".open.json")


def _usable(path: Path, scan: _Scan | None) -> _Scan | None:
    """`scan` when it describes the first bytes of the file now at `path`."""
    if scan is None:
        return None
    stat = path.stat()
    if (stat.st_dev, stat.st_ino) != (scan.device, scan.inode) or stat.st_size < scan.offset:
        return None
    tail = bytes.fromhex(scan.tail)
    with path.open("rb") as handle:
        handle.seek(scan.offset - len(tail))
        return scan if handle.read(len(tail)) == tail else None


def _advance(path: Path, scan: _Scan) -> _Scan:
    """`scan` with the whole lines appended since its offset read. A last line without its newline is left for
    later: its writer (maybe another process) may be writing it now."""
    with path.open("rb") as handle:
        stat = os.fstat(handle.fileno())
        if (stat.st_dev, stat.st_ino) != (scan.device, scan.inode):  # another file than the one read: from its start
            scan = _Scan(device=stat.st_dev, inode=stat.st_ino)
        handle.seek(scan.offset)
        pending = b""
        while chunk := handle.read(_CHUNK):
            pending += chunk
            end = pending.rfind(b"\n") + 1
            if not end:
                continue
            _apply(path, scan, pending[:end])
            scan.tail = (bytes.fromhex(scan.tail) + pending[:end])[-_TAIL_BYTES:].hex()
            scan.offset += end
            pending = pending[end:]
    return scan


def _apply(path: Path, scan: _Scan, data: bytes) -> None:
    for line in data.split(b"\n")[:-1]:
        scan.lines += 1
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{scan.lines}: not a JSON audit record: {exc}") from exc
        kind = event.get("event")
        if kind == "intent":
            scan.open[event["id"]] = event
        elif kind in _CLOSING:
            scan.open.pop(event.get("id"), None)


def _load(path: Path) -> _Scan | None:
    try:
        return _Scan(**json.loads(side_file(path).read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as exc:
        log.warning("%s is not usable (%s): the audit log is read from its start", side_file(path), exc)
        return None


def _save(path: Path, scan: _Scan) -> None:
    """The side file, replaced whole (another process reads either the old one or the new one); it is only a
    shortcut, so a failure to write it costs the next process a whole read, nothing else."""
    target = side_file(path)
    written: str | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=target.parent, prefix=f".{target.name}.", delete=False
        ) as handle:
            written = handle.name
            json.dump(asdict(scan), handle, ensure_ascii=False)
        os.replace(written, target)
    except OSError as exc:
        log.warning("could not write %s (%s): the next process reads the audit log from its start", target, exc)
        if written is not None:
            Path(written).unlink(missing_ok=True)
