"""Telling the approvers that a gate waits, with the link to it: e-mail (the SMTP provider) and a webhook.

Both are optional (`MQJOURNAL_APPROVAL_EMAIL`, the connection `mqjournal_approval_webhook`); their addresses and
tokens live in Airflow connections. A notification that fails is logged and the gate waits all the same: nobody
must lose a maintenance window because a mail server was down.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
import urllib.request
from html import escape
from typing import Any

from airflow.providers.standard.operators.hitl import HITLOperator
from airflow.sdk import BaseHook
from airflow.sdk.bases.notifier import BaseNotifier

from mqjournal.airflow.settings import settings

log = logging.getLogger(__name__)

FALLBACK_BASE_URL = "http://localhost:8080"


def gate_link(context: Any) -> str:
    """The gate's "Required actions" page: Airflow's own link (api.base_url), or localhost:8080 without one."""
    try:
        return HITLOperator.generate_link_to_ui_from_context(context=context)
    except ValueError:  # no api.base_url configured
        return HITLOperator.generate_link_to_ui_from_context(context=context, base_url=FALLBACK_BASE_URL)


def webhook_url(conn_id: str) -> str | None:
    """The webhook's URL from its Airflow connection, or None when there is no such connection."""
    try:
        conn = BaseHook.get_connection(conn_id)
    except Exception:  # Airflow raises its own not-found errors; no connection means no webhook
        return None
    url = conn.extra_dejson.get("url") or conn.host
    return str(url) if url else None


class GateWaiting(BaseNotifier):
    """Tells the approvers that `context`'s gate waits for an answer, and until when."""

    template_fields = ("subject",)

    def __init__(self, subject: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.subject = subject

    def message(self, context: Any) -> dict[str, str]:
        ti = context["ti"]
        task = context["task"]
        hours = float(context["params"].get("approval_hours") or 0) if "params" in context else 0
        link = gate_link(context)
        return {
            "text": f"{self.subject or ti.dag_id}: an approval gate waits"
            + (f" (for {hours:g} h; no answer deletes nothing)" if hours else "")
            + f". Answer it here: {link}",
            "link": link,
            "dag_id": ti.dag_id,
            "run_id": ti.run_id,
            "task_id": task.task_id,
        }

    def notify(self, context: Any) -> None:
        message = self.message(context)
        s = settings().approval
        if s.email:
            self._email(context, s.email, message)
        url = webhook_url(s.webhook_conn_id)
        if url:
            self._webhook(url, message)

    def _email(self, context: Any, to: str, message: dict[str, str]) -> None:
        from airflow.providers.smtp.notifications.smtp import SmtpNotifier

        link = escape(message["link"])
        body = f'<p>{escape(message["text"])}</p><p><a href="{link}">{link}</a></p>'
        try:
            SmtpNotifier(
                to=[a.strip() for a in to.split(",") if a.strip()],
                subject=self.subject or f"{message['dag_id']}: approval waiting",
                html_content=body,
            ).notify(context)
            log.info("told %s by e-mail that the gate waits", to)
        except Exception as exc:  # a mail server down must not fail the gate
            log.warning("could not e-mail %s that the gate waits (%s); the gate waits all the same", to, exc)

    def _webhook(self, url: str, message: dict[str, str]) -> None:
        request = urllib.request.Request(
            url, data=json.dumps(message).encode(), headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:  # the admin's own URL
                log.info("told the approval webhook that the gate waits (HTTP %s)", response.status)
        except Exception as exc:  # a webhook down must not fail the gate
            # The URL may hold a token: only its host is logged.
            host = urllib.parse.urlsplit(url).hostname
            log.warning("could not reach the approval webhook at %s (%s); the gate waits all the same", host, exc)
