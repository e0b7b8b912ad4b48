"""The fleet view's FastAPI app: the Airflow API server mounts it under /mqjournal (see
plugins/mqjournal_fleetview_plugin.py).

Every page and JSON answer needs an Airflow login: the same JWT the Airflow UI holds (its `_token` cookie, or an
`Authorization: Bearer` header), checked by Airflow's own `get_user`, and read access to the maintenance DAG, whose
runs the view shows (the auth manager's `is_authorized_dag`). A request without a valid token is refused (401; an
invalid or expired one 401 or 403), a user who may not read the DAG gets 403. Only the navigation icon is public.
/metrics (`metrics`, for Prometheus) takes the setting `metrics_token` as a bearer token too.

The data is read anew on each request (a fleet is small next to its plan job); nothing here writes. The runs'
states and notes come from Airflow's metadata DB, through the API server's own ORM session (`airflow_runs`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from mqjournal.catalog import Catalog
from mqjournal.fleetview import airflow_runs, data, fleetrows, linuxdata, metrics, pages, reportpage
from mqjournal.reportlinks import MOUNT
from mqjournal.settings import Settings, settings

log = logging.getLogger(__name__)

__all__ = ["MOUNT", "create_app"]  # MOUNT: where the Airflow API server mounts the app (mqjournal.reportlinks)

ICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#51504f" stroke-width="2" '
    'stroke-linecap="round" stroke-linejoin="round"><rect x="4" y="3" width="16" height="5" rx="1"/>'
    '<rect x="4" y="10" width="16" height="5" rx="1"/><rect x="4" y="17" width="10" height="4" rx="1"/>'
    '<circle cx="18" cy="19" r="2" fill="#2da44e" stroke="none"/></svg>'
)


def airflow_viewer() -> Callable[..., Any]:
    """Airflow's `get_user` (token from the Authorization header or the UI's cookie) plus the DAG read check."""
    from airflow.api_fastapi.core_api.security import get_user

    # No annotation: FastAPI resolves annotations in the module's globals, where Airflow is not imported (this module
    # is imported without Airflow's API server by the tests of the pages); the default alone declares the dependency.
    def viewer(user=Depends(get_user)):  # noqa: B008 - FastAPI's way of declaring a dependency
        from airflow.api_fastapi.app import get_auth_manager
        from airflow.api_fastapi.auth.managers.models.resource_details import DagDetails

        allowed = get_auth_manager().is_authorized_dag(
            method="GET", details=DagDetails(id=data.MAINTENANCE_DAG), user=user
        )
        if not allowed:
            raise HTTPException(403, f"{user.get_name()} may not read the DAG {data.MAINTENANCE_DAG}")
        return user

    return viewer


class _Catalogs:
    """One open catalog per URL, kept once it exists (a catalog no run has written yet is looked for again)."""

    def __init__(self) -> None:
        self.open: dict[str, Catalog] = {}

    def __call__(self, url: str) -> Catalog | None:
        if url not in self.open:
            catalog = data.open_catalog(url)
            if catalog is None:
                return None
            self.open[url] = catalog
        return self.open[url]


def create_app(
    *,
    current_settings: Callable[[], Settings] = settings,
    viewer: Callable[..., Any] | None = None,
    dag_runs: data.RunLookup = airflow_runs.dag_runs,
    later_runs: data.LaterRuns = airflow_runs.later_runs,
) -> FastAPI:
    """The app. `viewer` is the authentication dependency (Airflow's login and the DAG read check by default);
    `current_settings` where the data is (the process's MQJOURNAL_* environment by default); `dag_runs` the runs'
    states and notes (Airflow's metadata DB by default)."""
    app = FastAPI(title="mqjournal fleet view", docs_url=None, redoc_url=None, openapi_url=None)
    guard = Depends(viewer or airflow_viewer())
    catalogs = _Catalogs()

    def links(request: Request) -> pages.Links:
        base = str(request.scope.get("root_path", "")).rstrip("/")
        airflow = base.removesuffix(MOUNT) + "/"
        return pages.Links(base=base, airflow=airflow)

    @app.exception_handler(HTTPException)
    async def refused(request: Request, exc: HTTPException) -> Response:
        if exc.status_code in (401, 403) and "text/html" in request.headers.get("accept", ""):
            login = links(request).airflow
            return HTMLResponse(pages.refused(exc.status_code, str(exc.detail), login), status_code=exc.status_code)
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    @app.get("/icon.svg", include_in_schema=False)
    def icon() -> Response:
        return Response(ICON, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})

    @app.get("/", response_class=HTMLResponse, dependencies=[guard])
    def fleet_overview(request: Request, sort: str | None = None, order: str | None = None) -> HTMLResponse:
        s = current_settings()
        forecasts = data.asp_forecasts(s)
        rows = fleetrows.fleet(s, catalogs(s.catalog_url), airflow=dag_runs, later=later_runs, forecasts=forecasts)
        page = pages.fleet_page(rows, links(request), sort=sort, order=order, forecasts=list(forecasts.values()))
        return HTMLResponse(page)

    @app.get("/api/forecasts", dependencies=[guard])
    def forecasts_json() -> list[dict[str, Any]]:
        """Each ASP's forecast (mqjournal.forecast), without the readings it was fitted to."""
        return [f.model_dump(mode="json", exclude={"history"}) for f in data.asp_forecasts(current_settings()).values()]

    @app.get("/qm/{host}/{library}", response_class=HTMLResponse, dependencies=[guard])
    def queue_manager(request: Request, host: str, library: str) -> HTMLResponse:
        s = current_settings()
        found = data.queue_manager(s, catalogs(s.catalog_url), host, library, airflow=dag_runs, later=later_runs)
        if found is None:
            return HTMLResponse(pages.not_found(host, library, links(request)), status_code=404)
        return HTMLResponse(pages.queue_manager_page(found, links(request)))

    # A Linux queue manager by host and name: an MQ name may hold '/', so it takes the rest of the path.
    @app.get("/linux/{host}/{qmgr:path}", response_class=HTMLResponse, dependencies=[guard])
    def linux_queue_manager(request: Request, host: str, qmgr: str) -> HTMLResponse:
        s = current_settings()
        found = linuxdata.linux_queue_manager(
            s, catalogs(s.catalog_url), host, qmgr, airflow=dag_runs, later=later_runs
        )
        if found is None:
            return HTMLResponse(pages.linux_not_found(host, qmgr, links(request)), status_code=404)
        return HTMLResponse(pages.linux_queue_manager_page(found, links(request)))

    @app.get("/runs/{dag_id}/{run_id}/report", response_class=HTMLResponse, dependencies=[guard])
    def run_report(request: Request, dag_id: str, run_id: str) -> HTMLResponse:
        """The run's report, as its report task wrote it: linked from the run's note, the gate and the rows."""
        found = reportpage.report_page(current_settings(), dag_id, run_id)
        return HTMLResponse(found.html, status_code=found.status, headers=reportpage.HEADERS)

    @app.get("/api/fleet", dependencies=[guard])
    def fleet_json() -> list[dict[str, Any]]:
        s = current_settings()
        return [
            row.model_dump(mode="json")
            for row in fleetrows.fleet(s, catalogs(s.catalog_url), airflow=dag_runs, later=later_runs)
        ]

    @app.get("/api/qm/{host}/{library}", dependencies=[guard])
    def queue_manager_json(host: str, library: str) -> dict[str, Any]:
        s = current_settings()
        found = data.queue_manager(s, catalogs(s.catalog_url), host, library, airflow=dag_runs, later=later_runs)
        if found is None:
            raise HTTPException(404, f"no plan has a queue manager in library {library} on {host}")
        return found.model_dump(mode="json")

    @app.get("/api/linux/{host}/{qmgr:path}", dependencies=[guard])
    def linux_queue_manager_json(host: str, qmgr: str) -> dict[str, Any]:
        s = current_settings()
        found = linuxdata.linux_queue_manager(
            s, catalogs(s.catalog_url), host, qmgr, airflow=dag_runs, later=later_runs
        )
        if found is None:
            raise HTTPException(404, f"no plan has a Linux queue manager {qmgr} on {host}")
        return found.model_dump(mode="json")

    # Prometheus's scrape: its own guard (the scrape token, else the same Airflow login as the pages).
    app.include_router(
        metrics.router(current_settings=current_settings, catalog_of=catalogs, dag_runs=dag_runs, later_runs=later_runs)
    )
    return app
