"""Which way each host's save files are downloaded, as `mqjournal doctor` found it: a small JSON file in the data
folder (``hosts/download_routes.json``), keyed by the host's name in the fleet file.

A host not in the file is downloaded directly (SFTP of /QSYS.LIB/...), as before the file existed; the doctor writes
"stream_file" for a host whose sftp-server does not read QSYS.LIB but where a stream file copy by PASE `cp` downloads
(streamcopy), "cpytostmf" where only a copy by CPYTOSTMF does, and "direct" again once the direct read works. The
file holds a fact about the host, not a secret, and a missing or unreadable one means the default: the copy step's
own checks still prove every copy.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime

from mqjournal.datafolder import DataPath, write_text_atomically
from mqjournal.ibmi.transfer import Route

__all__ = ["DownloadRoutes", "route_for"]

log = logging.getLogger(__name__)

ROUTES: tuple[Route, ...] = ("direct", "stream_file", "cpytostmf")


class DownloadRoutes:
    def __init__(self, data_folder: DataPath) -> None:
        self.path = data_folder / "hosts" / "download_routes.json"

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            if not self.path.exists():
                return {}
            found = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("%s could not be read (%s): every host is downloaded directly", self.path, exc)
            return {}
        return found if isinstance(found, dict) else {}

    def route(self, host: str) -> Route:
        entry = self._read().get(host)
        value = entry.get("route") if isinstance(entry, dict) else None
        return next((r for r in ROUTES if r == value), "direct")

    def record(self, host: str, route: Route, at: datetime, detail: str) -> None:
        if route not in ROUTES:
            raise ValueError(f"unknown download route {route!r}: one of {', '.join(ROUTES)}")
        routes = self._read()
        routes[host] = {"route": route, "found_at": at.isoformat(), "detail": detail}
        write_text_atomically(self.path, json.dumps(routes, indent=2, sort_keys=True) + "\n")


def route_for(routes: DownloadRoutes | None, host: str) -> Route:
    """How `host`'s save files download: its recorded route, or directly where no record is kept (`routes` None)."""
    return routes.route(host) if routes is not None else "direct"
