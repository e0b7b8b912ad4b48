"""The maintenance gate's options, answers and notification (mqjournal.airflow.approval, .notify)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import SimpleNamespace

import pytest

from mqjournal.airflow.approval import DELETE_NOTHING, QueueManagerApproval, approval_options, chosen_keys
from mqjournal.airflow.notify import GateWaiting
from mqjournal.airflow.xcom import RunPlan
from mqjournal.planrows import PlannedQueueManager
from tests.plan.builders import planned_queue_manager


def qm(host: str, qmgr: str, library: str) -> PlannedQueueManager:
    return planned_queue_manager(host=host, qmgr=qmgr, qmgr_library=library)


SUMMARY = RunPlan(
    queue_managers=[
        qm("ibmi-prod1", "PAYROLL", "QMPAYROLL"),
        qm("ibmi-prod2", "BILLING", "QMBILL01"),
        qm("ibmi-prod2", "ORDERS", "QMORDERS"),  # nothing to delete: no option
        qm("ibmi-prod1", "ORDERS", "QMORDERS"),
    ],
    to_save={},
    to_delete={
        "ibmi-prod1/PAYROLL/QMPAYROLL": ["AMQA000001"],
        "ibmi-prod2/BILLING/QMBILL01": ["AMQA000003"],
        "ibmi-prod2/ORDERS/QMORDERS": [],
        "ibmi-prod1/ORDERS/QMORDERS": ["AMQA000007"],
    },
    anything_to_delete=True,
)


def test_each_queue_manager_with_receivers_to_delete_is_an_option_named_host_and_queue_manager():
    assert approval_options(SUMMARY) == [
        "ibmi-prod1/ORDERS",
        "ibmi-prod1/PAYROLL",
        "ibmi-prod2/BILLING",
        DELETE_NOTHING,
    ]


def test_the_answer_approves_only_the_chosen_queue_managers():
    assert chosen_keys(SUMMARY, ["ibmi-prod1/PAYROLL"]) == {"ibmi-prod1/PAYROLL/QMPAYROLL"}
    # ORDERS on the other partition is another queue manager: choosing ibmi-prod1's does not approve it.
    assert chosen_keys(SUMMARY, ["ibmi-prod1/ORDERS", "ibmi-prod2/BILLING"]) == {
        "ibmi-prod1/ORDERS/QMORDERS",
        "ibmi-prod2/BILLING/QMBILL01",
    }


def test_delete_nothing_wins_over_any_other_choice():
    assert chosen_keys(SUMMARY, [DELETE_NOTHING]) == set()
    assert chosen_keys(SUMMARY, ["ibmi-prod1/PAYROLL", DELETE_NOTHING]) == set()


def test_the_gate_declares_its_timeout_answer_in_code():
    gate = QueueManagerApproval(task_id="approve", subject="s", summary_task_id="summarize", timeout_param="h")
    assert gate.defaults == [DELETE_NOTHING] and gate.multiple


@pytest.fixture
def webhook():
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook/secret-token", received
    server.shutdown()


def context():
    ti = SimpleNamespace(dag_id="mq_journal_maintenance", run_id="manual__1", task_id="approve", map_index=-1)
    gate = QueueManagerApproval(task_id="approve", subject="s", summary_task_id="summarize", timeout_param="h")
    return {"ti": ti, "task_instance": ti, "task": gate, "params": {"approval_hours": 12}}


def test_the_webhook_is_told_that_the_gate_waits_with_the_link(webhook, monkeypatch):
    url, received = webhook
    monkeypatch.setenv("AIRFLOW_CONN_MQJOURNAL_APPROVAL_WEBHOOK", json.dumps({"conn_type": "http", "host": url}))
    GateWaiting(subject="mq_journal_maintenance manual__1").notify(context())
    (message,) = received
    assert message["link"].endswith(
        "/dags/mq_journal_maintenance/runs/manual__1/tasks/approve/required_actions?map_index=-1"
    )
    assert "12 h" in message["text"] and message["link"] in message["text"]


def test_a_webhook_that_does_not_answer_leaves_the_gate_waiting_and_logs_no_token(monkeypatch, caplog):
    dead = "http://127.0.0.1:9/hook/secret-token"
    monkeypatch.setenv("AIRFLOW_CONN_MQJOURNAL_APPROVAL_WEBHOOK", json.dumps({"conn_type": "http", "host": dead}))
    GateWaiting().notify(context())  # no exception
    assert "could not reach the approval webhook at 127.0.0.1" in caplog.text and "secret-token" not in caplog.text
