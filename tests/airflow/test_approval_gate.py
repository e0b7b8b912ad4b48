"""The maintenance gate's options, answers and notification (mqjournal.airflow.approval, .notify)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import SimpleNamespace

import pytest
from airflow.sdk.exceptions import TaskAwaitingInput

from mqjournal.airflow.approval import (
    DELETE_NOTHING,
    GateUnanswered,
    QueueManagerApproval,
    approval_options,
    approved_keys,
    read_answer,
)
from mqjournal.airflow.notify import GateWaiting
from mqjournal.airflow.xcom import RunPlan
from mqjournal.planrows import PlannedQueueManager
from tests.plan.builders import planned_queue_manager

MB = 1024**2


def qm(host: str, qmgr: str, library: str, deletes: int = 0, megabytes: float = 0) -> PlannedQueueManager:
    return planned_queue_manager(
        host=host,
        qmgr=qmgr,
        qmgr_library=library,
        receivers_to_delete=deletes,
        bytes_to_delete=int(megabytes * MB),
        bytes_freed=int(megabytes * MB),
    )


SUMMARY = RunPlan(
    queue_managers=[
        qm("ibmi-prod1", "PAYROLL", "QMPAYROLL", 1, 4),
        qm("ibmi-prod2", "BILLING", "QMBILL01", 1, 0.5),
        qm("ibmi-prod2", "ORDERS", "QMORDERS"),  # nothing to delete: no option
        qm("ibmi-prod1", "ORDERS", "QMORDERS", 12, 48.2),
    ],
    to_save={},
    to_delete={
        "ibmi-prod1/PAYROLL/QMPAYROLL": ["AMQA000001"],
        "ibmi-prod2/BILLING/QMBILL01": ["AMQA000003"],
        "ibmi-prod2/ORDERS/QMORDERS": [],
        "ibmi-prod1/ORDERS/QMORDERS": [f"AMQA{n:06d}" for n in range(7, 19)],
    },
    anything_to_delete=True,
)
ORDERS, PAYROLL, BILLING, ALL = (
    "ibmi-prod1/ORDERS: 12 receivers, 48.2 MB",
    "ibmi-prod1/PAYROLL: 1 receiver, 4.0 MB",
    "ibmi-prod2/BILLING: 1 receiver, 512.0 KB",
    "All queue managers above: 14 receivers, 52.7 MB",
)


def test_each_option_says_what_choosing_it_deletes_and_one_chooses_them_all():
    assert approval_options(SUMMARY) == [ORDERS, PAYROLL, BILLING, ALL, DELETE_NOTHING]


def test_the_options_are_unique_and_the_same_when_the_gate_resumes():
    options = approval_options(SUMMARY)
    assert len(set(options)) == len(options)
    assert approval_options(RunPlan.from_xcom(SUMMARY.to_xcom())) == options


def test_one_queue_manager_to_delete_needs_no_option_for_all():
    one = RunPlan(queue_managers=SUMMARY.queue_managers[:1], to_delete={"ibmi-prod1/PAYROLL/QMPAYROLL": ["A"]})
    assert approval_options(one) == [PAYROLL, DELETE_NOTHING]


def test_the_chosen_option_texts_map_back_to_their_queue_managers():
    assert read_answer(SUMMARY, [PAYROLL]).keys == {"ibmi-prod1/PAYROLL/QMPAYROLL"}
    # ORDERS on the other partition is another queue manager: choosing ibmi-prod1's does not approve it.
    assert read_answer(SUMMARY, [ORDERS, BILLING]).keys == {"ibmi-prod1/ORDERS/QMORDERS", "ibmi-prod2/BILLING/QMBILL01"}


def test_all_means_exactly_the_queue_managers_listed_above_it():
    listed = {"ibmi-prod1/ORDERS/QMORDERS", "ibmi-prod1/PAYROLL/QMPAYROLL", "ibmi-prod2/BILLING/QMBILL01"}
    assert read_answer(SUMMARY, [ALL]).keys == listed
    assert read_answer(SUMMARY, [ALL, PAYROLL]).keys == listed
    assert approved_keys(SUMMARY, {"chosen_options": [ALL]}) == listed


def test_an_answer_given_to_the_options_named_host_and_queue_manager_alone_still_maps():
    # A run answered before the options carried their counts, whose delete is cleared and run again.
    assert read_answer(SUMMARY, ["ibmi-prod1/PAYROLL"]).keys == {"ibmi-prod1/PAYROLL/QMPAYROLL"}


def test_an_option_that_matches_nothing_deletes_nothing_and_says_so(caplog):
    stale = "ibmi-prod1/PAYROLL: 2 receivers, 9.0 MB"
    answer = read_answer(SUMMARY, [PAYROLL, stale])
    assert answer.keys == set()
    assert stale in answer.refusal and "nothing" in answer.refusal
    assert approved_keys(SUMMARY, {"chosen_options": [PAYROLL, stale]}) == set()
    assert stale in caplog.text


def test_the_answer_approves_only_the_chosen_queue_managers():
    assert read_answer(SUMMARY, ["ibmi-prod1/PAYROLL"]).keys == {"ibmi-prod1/PAYROLL/QMPAYROLL"}
    # ORDERS on the other partition is another queue manager: choosing ibmi-prod1's does not approve it.
    assert read_answer(SUMMARY, ["ibmi-prod1/ORDERS", "ibmi-prod2/BILLING"]).keys == {
        "ibmi-prod1/ORDERS/QMORDERS",
        "ibmi-prod2/BILLING/QMBILL01",
    }


def test_delete_nothing_wins_over_any_other_choice():
    assert read_answer(SUMMARY, [DELETE_NOTHING]).keys == set()
    assert read_answer(SUMMARY, [PAYROLL, DELETE_NOTHING]).keys == set()
    assert read_answer(SUMMARY, [ALL, DELETE_NOTHING]).keys == set()


def gate_context(summary: RunPlan = SUMMARY, hours: float = 12) -> dict:
    ti = SimpleNamespace(id="ti-1", xcom_pull=lambda task_ids: summary.to_xcom())
    return {"ti": ti, "task_instance": ti, "params": {"h": hours}}


def test_the_form_preselects_no_answer():
    # Airflow's form starts from `defaults`, which is also the answer on timeout: none, so nothing is preselected.
    gate = QueueManagerApproval(task_id="approve", subject="s", summary_task_id="summarize", timeout_param="h")
    assert gate.defaults is None and gate.multiple


def test_a_gate_nobody_answers_fails_and_deletes_nothing():
    gate = QueueManagerApproval(task_id="approve", subject="s", summary_task_id="summarize", timeout_param="h")
    # What Airflow 3.3's scheduler resumes a gate without defaults with once its response timeout has passed.
    timeout = {
        "error": "The Human-in-the-loop response timeout has passed without a response.",
        "error_type": "timeout",
    }
    with pytest.raises(GateUnanswered, match="within 12 h: nothing was deleted"):
        gate.execute_complete(gate_context(), timeout)
    assert approved_keys(SUMMARY, None) == set()


def test_the_gate_builds_its_body_when_it_opens(monkeypatch):
    made = []

    def body(context, summary):
        made.append(summary)
        return "the plan, as the store holds it now"

    gate = QueueManagerApproval(
        task_id="approve", subject="s", summary_task_id="summarize", timeout_param="h", make_body=body
    )
    asked = {}
    monkeypatch.setattr(
        "airflow.providers.standard.operators.hitl.upsert_hitl_detail", lambda **detail: asked.update(detail)
    )
    with pytest.raises(TaskAwaitingInput):
        gate.execute(gate_context())
    assert asked["body"] == "the plan, as the store holds it now" and made == [SUMMARY]
    assert asked["options"] == approval_options(SUMMARY) and asked["defaults"] is None


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
