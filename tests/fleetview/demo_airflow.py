"""The demo's fleet in a real `airflow standalone`, for the browser tests: mqjournal.demo's own steps (simulator,
connections, Airflow with SimpleAuthManager and a known admin login), on free ports and in a folder of the test's."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from mqjournal import demo

REPO = Path(__file__).resolve().parents[2]
DEMO_FLEET = REPO / "docker" / "fleet.example.yaml"


@dataclass(frozen=True)
class RunningDemo:
    up: demo._Running
    home: demo.DemoHome
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def maintenance_run(
        self, say: demo.Say, *, conf: dict | None = None, answer: str | None = None, timeout: float = 900
    ) -> tuple[str, str]:
        """One run of the maintenance DAG with `conf`, followed to its end as `mqjournal demo` does, its approval gate
        answered as `--approve` or `--reject` do (`answer` "Approve" or "Reject"). Returns (run id, its state)."""
        demo.fail_leftover_runs(self.up.api, say)
        run_id = demo.trigger_run(self.up.api, conf=conf or {})
        say(f"triggered {demo.DAG_ID}: {run_id} {conf or ''}")
        state = demo.follow_run(
            self.up.api, self.up.airflow, run_id, port=self.port, answer=answer, timeout=timeout, say=say
        )
        return run_id, state

    def run_to_the_gate(self, say: demo.Say, *, conf: dict | None = None, timeout: float = 900) -> str:
        """Trigger a maintenance run and wait until its gate awaits a person's answer (and the worker that parked it
        has exited, see demo.wait_until_parked). Returns the run id."""
        demo.fail_leftover_runs(self.up.api, say)
        run_id = demo.trigger_run(self.up.api, conf=conf or {})
        say(f"triggered {demo.DAG_ID}: {run_id} {conf or ''}; its gate is to be answered in the browser")
        began = time.monotonic()
        while demo.gate_detail(self.up.api, run_id) is None or not self._gate_waits(run_id):
            state = self.up.api.call("GET", demo._run_path(run_id))["state"]
            if state in demo.FINISHED:
                raise AssertionError(f"the run {run_id} ended ({state}) before its gate asked")
            if time.monotonic() - began > timeout:
                raise AssertionError(f"the gate of {run_id} did not ask within {timeout:g} s")
            time.sleep(2)
        demo.wait_until_parked(self.up.airflow, run_id, say)
        return run_id

    def _gate_waits(self, run_id: str) -> bool:
        gate = [t for t in demo.task_states(self.up.api, run_id) if t["task_id"] == demo.GATE_TASK]
        return bool(gate) and gate[0].get("state") == "awaiting_input"

    def follow(self, run_id: str, say: demo.Say, *, timeout: float = 900) -> str:
        """Follow a run whose gate has been answered to its end; its state."""
        return demo.follow_run(
            self.up.api, self.up.airflow, run_id, port=self.port, answer=None, timeout=timeout, say=say
        )


def demo_fleet_file(folder: Path) -> Path:
    """docker/fleet.example.yaml with its simulator state in `folder` and free SSH ports (port 0: the simulator
    picks them, and the connections file names the ones it got)."""
    config = yaml.safe_load(DEMO_FLEET.read_text(encoding="utf-8"))
    config["state_dir"] = str(folder / "state")
    for host in config["hosts"]:
        host["port"] = 0
    path = folder / "fleet.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@contextlib.contextmanager
def running_demo(
    folder: Path, say: demo.Say, *, startup_timeout: float = 420, spark_connect: str | None = None
) -> Iterator[RunningDemo]:
    """The demo fleet's simulator and `airflow standalone` (plugins from the repository's plugins/), stopped after;
    with `spark_connect`, its plans are sessions on that Spark Connect server."""
    logging.getLogger("mqjournal.sim.server.transport").setLevel(logging.CRITICAL)
    port = demo.free_port()
    home = demo.DemoHome(folder / "airflow")
    began = time.monotonic()
    with contextlib.ExitStack() as cleanup:
        up = demo._start_fleet_and_airflow(
            cleanup, demo_fleet_file(folder), home, port, startup_timeout, say, spark_connect=spark_connect
        )
        say(f"Airflow up on port {port} after {time.monotonic() - began:.0f} s")
        yield RunningDemo(up, home, port)
