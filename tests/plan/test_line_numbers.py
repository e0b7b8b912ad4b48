"""The plan job names the line of a bad record: lines are numbered per split of a file, then offset by the lines of
the file's earlier splits. Files here are split every few hundred bytes, so that a line number crosses splits."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

JOB = Path(__file__).resolve().parents[2] / "spark_apps" / "plan_receivers.py"


@pytest.fixture(scope="module")
def job_and_spark():
    from pyspark.sql import SparkSession

    spec = importlib.util.spec_from_file_location("plan_receivers_under_test", JOB)
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("line-numbers-test")
        .config("spark.sql.files.maxPartitionBytes", "300")
        .config("spark.sql.files.openCostInBytes", "0")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    yield job, spark
    spark.stop()


def test_line_numbers_count_every_line_across_splits_and_files(tmp_path, job_and_spark):
    from mqjournal.sparkplan import checks

    job, spark = job_and_spark
    folder = tmp_path / "in"
    folder.mkdir()
    texts = {}
    for name in ("a.jsonl", "b.jsonl"):
        lines = [f'{{"n": {i}, "pad": "{"x" * (i * 7 % 90)}", "file": "{name}"}}' for i in range(1, 61)]
        lines[9] = ""  # blank lines count, as Python's enumerate counts them
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        texts[name] = lines
    lines = job.read_lines(spark, [str(folder)])
    assert lines.rdd.getNumPartitions() > 10  # really split
    wanted = []
    for path in sorted(lines.select("source_file").distinct().collect()):
        name = path.source_file.rsplit("/", 1)[-1]
        wanted += [(path.source_file, texts[name][i - 1]) for i in (1, 2, 31, 47, 60)]
    numbers = checks.line_numbers(lines, wanted)
    for (file, text), number in numbers.items():
        name = file.rsplit("/", 1)[-1]
        assert texts[name][number - 1] == text
    assert sorted(numbers.values()) == sorted([1, 2, 31, 47, 60] * 2)


def test_where_names_a_local_file_as_a_path():
    from mqjournal.sparkplan import checks

    assert checks.file_and_line("file:/tmp/run%20one/snapshots.jsonl", 3) == "/tmp/run one/snapshots.jsonl:3"
    assert checks.file_and_line("hdfs://nn/x.jsonl", None) == "hdfs://nn/x.jsonl"
