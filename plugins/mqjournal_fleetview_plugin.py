"""The Airflow plugin of the "MQ journals" fleet view (docs/fleet-view.md).

Airflow loads this file from its plugins folder (`[core] plugins_folder`, the repository's plugins/; the mqjournal
package beside it is listed in plugins/.airflowignore, so only this file is scanned for plugins). It registers:

- a FastAPI app, which the API server mounts under /mqjournal: the pages, behind Airflow's login;
- an external view, "MQ journals", a top-level entry of the UI's navigation, which shows /mqjournal/ in the UI's
  frame at /plugin/mq-journals.

Importing this file builds the app object only: no data is read, no connection is made.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from airflow.configuration import conf
from airflow.plugins_manager import AirflowPlugin

from mqjournal.fleetview.app import MOUNT, create_app

# The UI loads an external view's href into its frame as given: with [api] base_url under a path (/airflow/), the
# mount is under that path too.
_ROOT = urlsplit(conf.get("api", "base_url", fallback="") or "/").path.rstrip("/")


class MqJournalFleetViewPlugin(AirflowPlugin):
    name = "mqjournal_fleetview"
    # Lists as AirflowPlugin declares them (the plugins manager edits them in place).
    fastapi_apps = [{"app": create_app(), "url_prefix": MOUNT, "name": "MQ journals"}]  # noqa: RUF012
    external_views = [  # noqa: RUF012
        {
            "name": "MQ journals",
            "href": f"{_ROOT}{MOUNT}/",
            "icon": f"{_ROOT}{MOUNT}/icon.svg",
            "url_route": "mq-journals",
            "destination": "nav",
            "nav_top_level": True,
        }
    ]
