"""Outside Airflow: reach one queue manager of a fleet file as `mqjournal collect` does (its client key, its
known_hosts, an audit log), with the catalog the recovery reads. SSH timeouts and retries come from the environment
(MQJOURNAL_SSH_*, mqjournal.settings), as in the DAGs.

Two mistakes must not turn into a plan: a mistyped queue manager name (its derived library is not on the host, which
reads exactly like a lost library, so the planners would offer a library recovery), and a mistyped catalog path
(SQLAlchemy would create an empty catalog there, and every save would read as missing). Both are refused, named.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from mqjournal.catalog import Catalog
from mqjournal.collection import fleet_connector
from mqjournal.datafolder import DataPath, modified
from mqjournal.errors import InvalidName, MqJournalError
from mqjournal.fleet import FleetConfig, HostConfig, QueueManagerConfig, load_fleet
from mqjournal.ibmi import commands
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.discovery import parse_mqs_ini
from mqjournal.ibmi.transport import IbmiSession, RetryPolicy
from mqjournal.names import qmgr_library_for
from mqjournal.settings import CATALOG_URL_ENV, Settings, SshSettings

CATALOG_ENV = CATALOG_URL_ENV


class UnknownQueueManager(MqJournalError, ValueError):
    """The queue manager named is known nowhere for the host: not in the fleet file, the host's mqs.ini, the catalog
    or the snapshots. Nothing is planned or sent for a name that may be a typo."""


class CatalogMissing(MqJournalError, ValueError):
    """The catalog named is a SQLite file that does not exist; it is not created."""


@dataclass(frozen=True)
class Setup:
    config: FleetConfig
    host: HostConfig
    qmgr: QueueManagerConfig
    catalog: Catalog
    audit: Path

    def session(self) -> IbmiSession:
        return fleet_session(self.config, self.host, self.audit)

    @property
    def configured(self) -> bool:
        """Whether the fleet file names the queue manager under its host."""
        return any(q.name == self.qmgr.name for q in self.host.queue_managers)


def fleet_session(config: FleetConfig, host: HostConfig, audit: Path) -> IbmiSession:
    """A session to a host of the fleet file, with its client key and pinned host key, commands audited in `audit`."""
    ssh = SshSettings.from_env()
    return IbmiSession(
        host.name,
        config.user_for(host),
        fleet_connector(config, host),
        audit=AuditLog(audit),
        command_timeout=ssh.command_timeout,
        retry=RetryPolicy.of(ssh),
        sql_runner=host.sql_runner,
        scratch_directory=host.scratch_directory,
    )


def setup(
    fleet: Path, host: str, qmgr: str, catalog_url: str | None, audit: Path, *, new_catalog_hint: bool = False
) -> Setup:
    """Raises ValueError with a message an admin can act on when the input does not name a queue manager, or the
    catalog named does not exist (`new_catalog_hint`: say how to start a new one on purpose)."""
    config, host_config, qm = named(fleet, host, qmgr)
    return with_catalog(config, host_config, qm, catalog_url, audit, new_catalog_hint=new_catalog_hint)


def named(
    fleet: Path, host: str, qmgr: str, *, listed_only: bool = False
) -> tuple[FleetConfig, HostConfig, QueueManagerConfig]:
    """The fleet file, its host and the queue manager the input names, read from the fleet file alone; ValueError
    naming what is wrong. `listed_only`: where the fleet file lists queue managers for the host, `qmgr` must be one
    of them, matched as `listed_queue_manager` does (and a typo is answered from the file at once)."""
    try:
        config = load_fleet(fleet)
    except OSError as exc:
        raise ValueError(f"cannot read the fleet file {fleet}: {exc.strerror}") from None
    try:
        host_config = config.host(host)
    except KeyError:
        raise ValueError(
            f"host {host!r} is not in the fleet file {fleet}; its hosts are "
            f"{', '.join([h.name for h in config.hosts] + [h.name for h in config.linux_hosts]) or 'none'}"
        ) from None
    if listed_only and host_config.queue_managers:
        return config, host_config, listed_queue_manager(host_config, qmgr, fleet)
    qm = next((q for q in host_config.queue_managers if q.name == qmgr), None)
    # `payroll` typed for the PAYROLL the fleet file lists means PAYROLL, as `listed_queue_manager` reads it; a name
    # that two listed ones share in different cases, or none, is looked for as given.
    alike = [q for q in host_config.queue_managers if q.name.casefold() == qmgr.casefold()]
    if qm is None and len(alike) == 1:
        qm = alike[0]
    if qm is None:
        # Not named in the fleet file: its library is derived (QM + name), as CRTMQM does for simple names, until
        # `confirm_queue_manager` finds where the host, the snapshots or the catalog say it is.
        qm = QueueManagerConfig(name=qmgr)
        try:
            _ = qm.qmgr_library  # InvalidName (a ValueError) when it cannot be derived
        except InvalidName as exc:
            if not listed_only:
                raise
            raise _underivable(exc, qmgr, host_config, fleet) from None
    return config, host_config, qm


def _underivable(exc: InvalidName, given: str, host: HostConfig, fleet: Path) -> InvalidName:
    """Why a name the fleet file cannot be asked about (it lists no queue managers for the host) is refused, with the
    upper-case name an admin who typed `payroll` most likely meant: CL and mqs.ini write them so."""
    upper = given.upper() if given.isascii() else given
    meant = ""
    if upper != given:
        with contextlib.suppress(InvalidName):
            qmgr_library_for(upper)
            meant = f"if you meant {upper}, give it so (MQ's names are case sensitive); "
    return InvalidName(
        f"{given} on {host.name}",
        f"{exc.problem}, and the fleet file {fleet} lists no queue managers for {host.name} (it leaves them to "
        "discovery)",
        f"{meant}for a queue manager of that exact name, add it under {host.name} in the fleet file with its library",
    )


def with_catalog(
    config: FleetConfig,
    host: HostConfig,
    qm: QueueManagerConfig,
    catalog_url: str | None,
    audit: Path,
    *,
    new_catalog_hint: bool = False,
) -> Setup:
    """The setup for a queue manager `named` gave, with its catalog: `catalog_url`, else the settings' (the data
    folder's catalog.db, or MQJOURNAL_CATALOG_URL), as the DAGs open it. CatalogMissing when it does not exist."""
    url = existing_catalog(catalog_url or Settings.from_env().catalog_url, new_catalog_hint=new_catalog_hint)
    return Setup(config, host, qm, Catalog(url), audit)


def listed_queue_manager(host: HostConfig, given: str, fleet: Path) -> QueueManagerConfig:
    """The queue manager of the fleet file's `host` that `given` names: the one of exactly that name, else the only
    one whose name differs from it in case alone. MQ names are case sensitive, but CL and the admins who type it use
    upper case, and a library is derived from the name (TEST -> QMTEST) only as the fleet file spells it: `payroll`
    typed for PAYROLL means PAYROLL. UnknownQueueManager, listing the host's queue managers, when none or several
    match; a `given` that is no queue manager name at all is refused as such first (a ValidationError)."""
    exact = [q for q in host.queue_managers if q.name == given]
    alike = exact or [q for q in host.queue_managers if q.name.casefold() == given.casefold()]
    if len(alike) == 1:
        return alike[0]
    if alike:
        raise UnknownQueueManager(
            f"{given} on {host.name}",
            f"the fleet file {fleet} lists {_names(alike)} for {host.name}: names that differ in case alone, which "
            "MQ keeps apart",
            "give --qmgr exactly as the fleet file writes the one meant",
        )
    QueueManagerConfig(name=given)  # a name MQ could never have is refused as that, before it is echoed as a typo
    raise UnknownQueueManager(
        f"{given} on {host.name}",
        f"the fleet file {fleet} lists no queue manager of that name for {host.name}, in any case",
        f"check the spelling of --qmgr; the fleet file's queue managers for {host.name} are "
        f"{_names(host.queue_managers)}. For another queue manager of {host.name}, add it under the host in the "
        "fleet file, with its library",
    )


def _names(queue_managers: list[QueueManagerConfig]) -> str:
    return ", ".join(sorted((q.name for q in queue_managers), key=str.casefold))


def existing_catalog(given: str | None, *, new_catalog_hint: bool = False) -> str:
    """The catalog's SQLAlchemy URL from `--catalog` (a URL, or the path of a SQLite file), refusing a SQLite file
    that does not exist (CatalogMissing): opening it would create an empty catalog that knows no save."""
    from sqlalchemy.engine import make_url

    if not given:
        raise ValueError(
            f"give the catalog with --catalog URL (or {CATALOG_ENV}): a recovery restores from the saves it records"
        )
    url = given if "://" in given else f"sqlite:///{Path(given).expanduser().resolve()}"
    parsed = make_url(url)  # ArgumentError for a URL SQLAlchemy cannot read: the CLI names it
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
        return url
    path = Path(database)
    if path.is_file():
        return url
    default = Settings.from_env().local_folder / "catalog.db"
    action = (
        f"give the path (or sqlite:/// URL) of the catalog the DAGs write ({CATALOG_ENV}; by default the data "
        f"folder's, {default}); check the spelling (a URL with a path from / needs four slashes: sqlite:////...)"
    )
    if new_catalog_hint:
        action += "; to start a new catalog on purpose, create the empty file first (touch it)"
    raise CatalogMissing(
        f"catalog {path.resolve()}", "the file does not exist, and an empty catalog is not created", action
    )


def confirm_queue_manager(setup: Setup, session: IbmiSession, snapshots: DataPath) -> Setup:
    """The setup for a queue manager some source knows for the host, with the library that source gives when the
    fleet file does not name it; UnknownQueueManager listing the known ones otherwise.

    Asked in this order, stopping at the first that knows it: the fleet file, the snapshots under `snapshots` (the
    data folder's snapshots/), the host's mqs.ini (one command, read only), the catalog. A queue manager whose
    library is lost is still in mqs.ini and in the snapshots and catalog of its earlier runs, so it is found."""
    if setup.configured:
        return setup
    host, name = setup.host.name, setup.qmgr.name
    found = _in_snapshots(snapshots, host)
    on_host: dict[str, str] | None = {}
    if name not in found:
        on_host = _in_mqs_ini(session)
        found |= on_host or {}
        if name not in found and _cataloged(setup.catalog, host, setup.qmgr):
            return setup
    if name in found:
        library = found[name]
        if library == setup.qmgr.qmgr_library:
            return setup
        return dataclasses.replace(setup, qmgr=QueueManagerConfig(name=name, library=library))
    known = sorted({q.name for q in setup.host.queue_managers} | set(found) | _catalog_names(setup.catalog, host))
    mqs_ini = (
        "the host's mqs.ini" if on_host is not None else f"the host's mqs.ini ({commands.MQS_INI} could not be read)"
    )
    raise UnknownQueueManager(
        f"{name} on {host}",
        f"no queue manager of that name is known for {host}: not in the fleet file, {mqs_ini}, the catalog or the "
        "snapshots (so nothing is planned: its library would only look lost)",
        f"check the spelling of --qmgr (names are case-sensitive); the queue managers known for {host} are "
        f"{', '.join(known) or 'none'}. For a queue manager that is gone from mqs.ini too, name it under {host} in "
        "the fleet file, with its library",
    )


def _in_snapshots(root: DataPath, host: str) -> dict[str, str]:
    """{queue manager: library} of the host's snapshot files (one per library and run; the newest of each read)."""
    newest: dict[str, DataPath] = {}
    files = sorted(root.glob(f"run_id=*/{host}__*.jsonl"), key=modified)
    for path in files:
        newest[path.name] = path
    found: dict[str, str] = {}
    for path in newest.values():
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError), path.open(encoding="utf-8") as lines:
            first = json.loads(next(line for line in lines if line.strip()))
            if first["host"] == host:
                found[first["qmgr"]] = first["qmgr_library"]
    return found


def _in_mqs_ini(session: IbmiSession) -> dict[str, str] | None:
    """{queue manager: library} of the host's mqs.ini; None when it cannot be read."""
    out = session.run(commands.read_mqs_ini())
    return parse_mqs_ini(out.stdout) if out.exit_status == 0 else None


def _cataloged(catalog: Catalog, host: str, qm: QueueManagerConfig) -> bool:
    library = qm.qmgr_library
    return bool(
        catalog.library_saves(host, library, include_discarded=True)
        or catalog.stored_objects(host, qm.name, unproven=True)
        or catalog.saves_for(host, library)
    )


def _catalog_names(catalog: Catalog, host: str) -> set[str]:
    return {s.qmgr for s in catalog.stored_objects(host, unproven=True)} | {o.qmgr for o in catalog.operations(host)}
