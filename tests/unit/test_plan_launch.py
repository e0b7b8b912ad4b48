"""How the plan job is launched: spark-submit's environment, and a Spark Connect server's command and address."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mqjournal import planjob
from mqjournal.sparkconnect import server_command
from mqjournal.sparkplan.job import ClientFiles


def test_a_spark_submit_after_a_connect_session_in_the_same_process_is_a_classic_job(monkeypatch):
    # pyspark leaves these in os.environ once a process opened a Connect session: the job's own session would
    # then be a Connect client with no server (seen when the tests ran both launches in one process).
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    monkeypatch.setenv("SPARK_REMOTE", "sc://127.0.0.1:15002")
    env = planjob.submit_environment("local[*]")
    assert "SPARK_CONNECT_MODE_ENABLED" not in env and "SPARK_REMOTE" not in env
    assert env["SPARK_HOME"]


def test_a_connect_url_is_shown_without_its_token():
    assert planjob.connect_address("sc://spark.example:15002/;token=s3cr3t;use_ssl=true") == "sc://spark.example:15002"
    assert planjob.connect_address("sc://127.0.0.1:15002") == "sc://127.0.0.1:15002"


def test_the_connect_server_listens_on_loopback_unless_told_otherwise():
    command = server_command(port=15999)
    assert "spark.connect.grpc.binding.address=127.0.0.1" in command
    assert "spark.connect.grpc.binding.port=15999" in command
    assert command[-1] == "spark-internal" and "org.apache.spark.sql.connect.service.SparkConnectServer" in command


@pytest.mark.parametrize("url", ["s3a://bucket/plans/run_id=x", "s3://bucket/plans/run_id=x"])
def test_a_connect_client_reaches_hadoop_s_s3a_urls_through_fsspec_s_s3(url):
    fs, path = ClientFiles._fs(url)
    assert "s3" in fs.protocol and path == "bucket/plans/run_id=x"


def test_a_connect_client_writes_and_removes_summary_json_next_to_the_plan(tmp_path):
    files = ClientFiles()
    files.write_text(str(tmp_path / "plan"), "summary.json", '{"a": 1}\n')
    assert (tmp_path / "plan" / "summary.json").read_text() == '{"a": 1}\n'
    assert files.is_folder(str(tmp_path / "plan")) and not files.is_folder(str(tmp_path / "plan" / "summary.json"))
    files.remove(str(tmp_path / "plan"), "summary.json")
    files.remove(str(tmp_path / "plan"), "summary.json")  # already gone: nothing to do
    assert not (tmp_path / "plan" / "summary.json").exists()


def test_the_demo_plans_on_a_connect_server_through_a_connection_of_its_own(tmp_path, monkeypatch):
    from mqjournal.demo import DemoHome, airflow_environment

    monkeypatch.setenv("MQJOURNAL_SPARK_CONNECT_CONN_ID", "from_the_shell")  # never the caller's setup
    home = DemoHome(tmp_path / "airflow")
    plain = airflow_environment(home, tmp_path / "fleet.yaml", 8080)
    assert "MQJOURNAL_SPARK_CONNECT_CONN_ID" not in plain
    env = airflow_environment(home, tmp_path / "fleet.yaml", 8080, "sc://127.0.0.1:15002")
    conn_id = env["MQJOURNAL_SPARK_CONNECT_CONN_ID"]
    connection = json.loads(env[f"AIRFLOW_CONN_{conn_id.upper()}"])
    assert connection == {"conn_type": "spark_connect", "host": "127.0.0.1", "port": 15002}


def test_a_connect_url_becomes_the_providers_connection_without_its_parameters():
    assert planjob.connect_connection("sc://spark.example:15002/;token=s3cr3t") == {
        "conn_type": "spark_connect",
        "host": "spark.example",
        "port": 15002,
    }


def test_asking_whether_a_classic_session_is_a_connect_one_loads_no_connect_client():
    # A spark-submit job asks before every file operation; importing Spark Connect's client (gRPC) to answer cost its
    # driver a second. A fresh interpreter: another test of this process may have loaded the client already.
    code = (
        "import sys\n"
        "from mqjournal.sparkplan.job import is_connect\n"
        "assert is_connect(object()) is False\n"
        "assert 'pyspark.sql.connect.session' not in sys.modules, 'the Connect client was loaded'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)})


def test_a_connect_session_is_known_as_one():
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    from mqjournal.sparkplan.job import is_connect

    # The class is what is asked about; building a session would need a server.
    assert is_connect(object.__new__(ConnectSession))
