"""The floor of a plan job: spark-submit, a session, and one read of the plan's input the way the job reads it,
written nowhere (the `noop` sink). What bench/plan_launch_bench.py compares the plan job's launches with."""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession

from mqjournal.sparkplan.job import SESSION_CONF, read_inputs, read_lines


def main(locations: list[str]) -> int:
    builder = SparkSession.builder.appName("mqjournal-read-input")
    for key, value in SESSION_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try:
        read_inputs(spark, locations).write.format("noop").mode("overwrite").save()
        read_lines(spark, locations).write.format("noop").mode("overwrite").save()
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
