"""Benchmark of the plan job (spark_apps/plan_receivers.py) against a bare scan of the same input.

    .venv/bin/python bench/plan_bench.py [--queue-managers 20000] [--receivers N] [--runs 30] [--out DIR] [--keep-data]

1. Generates a fleet with Spark (spark.range and column expressions only, so generation scales like the job): one
   `mqjournal.snapshot/v1` record per queue manager per run, written as JSON Lines in the collector's layout
   (`run_id=<id>/*.jsonl`). The latest run of each queue manager is its current state, the others its history.
   `--receivers` counts receiver rows across every snapshot (20,000 qms x 30 runs x ~16.7 = 10 M by default).
   The data is cached in OUT/fleet-<sizes>-g<version>/ and reused by the next run of the same sizes.
2. In ONE SparkSession (local[*], the plan job's own local conf from `mqjournal.planjob.default_conf`), warms the
   JIT up with an untimed scan and plan of the newest run (unless --no-warmup), then times scan #1, the plan,
   scan #2:
   - bare scan: the job's own reader (same explicit schema and options), every receiver exploded into a row with
     all its fields, written to the `noop` sink;
   - plan: `plan_receivers.plan(spark, ...)` end to end (read, validate, plan, write both Parquet outputs and
     summary.json to a temp folder), exactly what the job's `main` does inside its session.
3. Prints both times, the ratio plan / mean(scan #1, scan #2), receiver rows/s, peak RSS of the driver JVM and of
   this Python process (sampled every 0.2 s), the slowest stages of the plan (from Spark's event log), and finally
   one JSON line for machines.

A benchmark, not a test: nothing here asserts on time. Small inputs (<= --check-limit snapshots) are also planned
by the pure-Python reference planner (`mqjournal.rules`) after the timings, and the two summaries compared.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar

import psutil  # type: ignore[import-untyped]  # no psutil stubs are pinned: the bench only reads process metrics

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DecimalType

    from mqjournal.planrows import PlanTotals

Result = TypeVar("Result")

ROOT = Path(__file__).resolve().parent.parent
JOB_PATH = ROOT / "spark_apps" / "plan_receivers.py"

# Bump when the generated data changes, so a cached fleet of an older generator is not reused.
GENERATOR_VERSION = 1
DEFAULT_QUEUE_MANAGERS = 20_000
DEFAULT_RUNS = 30
DEFAULT_RECEIVERS = 10_000_000
# Receiver rows per snapshot when --receivers is not given: the default fleet's 10 M / (20,000 x 30).
RECEIVERS_PER_SNAPSHOT = DEFAULT_RECEIVERS / (DEFAULT_QUEUE_MANAGERS * DEFAULT_RUNS)

UTC = UTC
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
AS_OF = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)  # fixed, so every run plans the same thing
HOUR_US = 3_600_000_000
MINUTE_US = 60_000_000
RUN_INTERVAL_US = 6 * HOUR_US  # one collection every 6 hours: 30 runs = 7.5 days of history
QMS_PER_HOST = 8
TARGET_FILE_BYTES = 128 * 1024 * 1024
EST_BYTES_PER_RECEIVER, EST_BYTES_PER_SNAPSHOT = 560, 900  # JSON sizes, measured on the generated lines

# Scenario buckets: xxhash64(qm) mod 100, stable across runs. The rest (82 %) is healthy.
SCENARIOS = {
    "amqjrninf_stars": (0, 2),  # alert OLDEST_NEEDED_NOT_ON_SYSTEM
    "amqjrninf_missing": (2, 3),  # blocked
    "amqjrninf_malformed": (3, 4),  # blocked
    "name_time_disagree": (4, 5),  # blocked
    "name_not_in_chain": (5, 6),  # blocked
    "sequence_gap": (6, 7),  # blocked: CHAIN_BROKEN
    "stale": (7, 8),  # blocked: SNAPSHOT_STALE (every time of the qm 2 days earlier)
    "checkpoint_failed": (8, 10),  # alert
    "next_name_taken": (10, 12),  # alert: an EMPTY receiver, not in the chain, holds the next name
    "over_threshold": (12, 14),  # alert
    "startup_stuck": (14, 16),  # alert
    "media_stuck": (16, 17),  # alert
    "no_recovery_points": (17, 18),  # startup_recovery and media_recovery null
}


def log(message: str) -> None:
    print(f"[{datetime.now().strftime('%H:%M:%S')}] {message}", flush=True)


# --- the plan job, imported as the module spark-submit runs ----------------------------------------------------


def load_job() -> ModuleType:
    spec = importlib.util.spec_from_file_location("plan_receivers", JOB_PATH)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load the plan job from {JOB_PATH}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- memory sampling ---------------------------------------------------------------------------------------------


class RssSampler(threading.Thread):
    """Peak RSS of this Python process and of its java child (the driver JVM, which in local mode is also the
    executor), overall and per phase."""

    def __init__(self, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.me = psutil.Process()
        self.phase = "startup"
        self.peaks: dict[str, dict[str, int]] = {}
        self.java_pid: int | None = None
        self._halt = threading.Event()

    def _java(self) -> psutil.Process | None:
        if self.java_pid is not None:
            try:
                return psutil.Process(self.java_pid)
            except psutil.NoSuchProcess:
                self.java_pid = None
        for child in self.me.children(recursive=True):
            try:
                if "java" in child.name():
                    self.java_pid = child.pid
                    return child
            except psutil.NoSuchProcess:
                continue
        return None

    def sample(self) -> None:
        python_rss = self.me.memory_info().rss
        java = self._java()
        try:
            java_rss = java.memory_info().rss if java else 0
        except psutil.NoSuchProcess:
            java_rss = 0
        for phase in ("all", self.phase):
            peak = self.peaks.setdefault(phase, {"java": 0, "python": 0, "total": 0})
            peak["java"] = max(peak["java"], java_rss)
            peak["python"] = max(peak["python"], python_rss)
            peak["total"] = max(peak["total"], java_rss + python_rss)

    def run(self) -> None:
        while not self._halt.is_set():
            with contextlib.suppress(Exception):  # a process that exits between two calls: sample next time
                self.sample()
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


def busy_cpu_seconds() -> float:
    """CPU seconds spent by the whole machine, all processes, since boot."""
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0) - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)


def own_cpu_seconds(sampler: RssSampler) -> float:
    """CPU seconds of this Python process and of the driver JVM."""
    total = 0.0
    for process in (sampler.me, sampler._java()):
        if process is not None:
            try:
                t = process.cpu_times()
                total += t.user + t.system
            except psutil.NoSuchProcess:
                pass
    return total


def mib(n: int) -> float:
    return round(n / 1024 / 1024, 1)


# --- generation -----------------------------------------------------------------------------------------------------


def fleet_key(qms: int, receivers: int, runs: int) -> str:
    return f"fleet-qm{qms}-rcv{receivers}-runs{runs}-g{GENERATOR_VERSION}"


def _coprime_step(n: int) -> int:
    for step in (1_000_003, 1_000_033, 1_000_037, 1_000_039, 1_000_081):
        if n % step:
            return step
    return 1


# The generator's column vocabulary: hashes of the queue manager (stable across runs), times as v1 writes them.
# pyspark is imported inside, so `--help` and the cached-fleet path do not pay for it before they need it.


def _h(*parts: Column | int) -> Column:
    from pyspark.sql import functions as F

    return F.xxhash64(*[p if not isinstance(p, int) else F.lit(p) for p in parts])


def _pmod(column: Column, n: Column | int) -> Column:
    from pyspark.sql import functions as F

    return F.pmod(column, n if not isinstance(n, int) else F.lit(n))


def _ts(us: Column, suffix: Column | None = None, offset: Column | None = None) -> Column:
    from pyspark.sql import functions as F

    suffix = F.lit("Z") if suffix is None else suffix
    local = F.timestamp_micros(us if offset is None else us + offset)
    return F.concat(F.date_format(local, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"), suffix)


def _ts_seconds(us: Column) -> Column:
    from pyspark.sql import functions as F

    return F.concat(F.date_format(F.timestamp_micros(us), "yyyy-MM-dd'T'HH:mm:ss"), F.lit("Z"))


def _decimal() -> DecimalType:
    from pyspark.sql import types as T

    return T.DecimalType(38, 0)


def _scenario(name: str) -> Column:
    """True for the queue managers of scenario `name` (a column fleet_frame adds first)."""
    from pyspark.sql import functions as F

    return F.col(f"s_{name}")


def _attach_us(g: Column) -> Column:
    """Attach time of receiver g of this qm: strictly increasing in g, the same in every run's snapshot."""
    from pyspark.sql.functions import col

    jitter = _pmod(_h(col("qm"), g, 5), 30 * MINUTE_US)
    half = (col("interval_us") / 2).cast("long")
    return col("t0_us") + col("shift_us") + (g - col("h0")) * col("interval_us") - half - 30 * MINUTE_US + jitter


def _rname(g: Column) -> Column:
    from pyspark.sql import functions as F

    return F.concat(F.lit("AMQA0"), F.lpad(_pmod(F.col("n0") + g, 100_000).cast("string"), 5, "0"))


def fleet_frame(spark: SparkSession, *, qms: int, receivers: int, runs: int, partitions: int) -> DataFrame:
    """One row per (run, queue manager): a complete v1 snapshot, built from column expressions only.

    Row id = run * qms + qm, so with partitions = runs * m every spark.range partition holds one run only and the
    partitioned write below makes m files per run folder.
    """
    snapshots = qms * runs
    base, extra = divmod(receivers, snapshots)
    if base < 3:
        raise SystemExit(f"--receivers {receivers}: under 3 per snapshot ({snapshots} snapshots), too few for a chain")
    last_run_us = (AS_OF - EPOCH) // timedelta(microseconds=1) - HOUR_US
    t0_us = last_run_us - (runs - 1) * RUN_INTERVAL_US
    df = _runs_and_sizes(spark, qms=qms, snapshots=snapshots, base=base, extra=extra, partitions=partitions)
    df = _queue_manager_traits(df, runs=runs, t0_us=t0_us)
    df = _identity_and_collection(df, t0_us=t0_us)
    df = _with_needed_entry(df)
    return _snapshot_records(df)


def _runs_and_sizes(
    spark: SparkSession, *, qms: int, snapshots: int, base: int, extra: int, partitions: int
) -> DataFrame:
    """Row id -> (queue manager, run), its scenario flags, how many receivers its snapshot holds, and where its
    chain stands at this run."""
    from pyspark.sql import functions as F

    lit, col = F.lit, F.col
    step_perm = _coprime_step(snapshots)
    spread = max(0, min(3, base - 3))  # +-spread per snapshot, in pairs of queue managers, so the total is exact
    df = spark.range(0, snapshots, 1, numPartitions=partitions)
    qm, run = col("id") % qms, (col("id") / qms).cast("long")
    df = df.select(col("id"), qm.alias("qm"), run.alias("run"))
    bucket = _pmod(_h(col("qm"), 1), 100)
    scenario_cols = [(bucket >= lo) & (bucket < hi) for lo, hi in SCENARIOS.values()]
    df = df.select("*", *[c.alias(f"s_{name}") for name, c in zip(SCENARIOS, scenario_cols, strict=True)])

    # Receivers in this snapshot: base, +1 for `extra` snapshots (a bijection spreads them), +-d in qm pairs.
    partner_exists = (col("qm") % 2 == 1) | (col("qm") + 1 < qms)
    d = F.when(partner_exists, _pmod(_h((col("qm") / 2).cast("long"), col("run"), 2), spread + 1)).otherwise(0)
    sign = F.when(col("qm") % 2 == 0, 1).otherwise(-1)
    k = lit(base) + F.when(_pmod(col("id") * step_perm, snapshots) < extra, 1).otherwise(0) + sign * d
    step = lit(1) + _pmod(_h(col("qm"), 4), 3)  # receivers attached per run: 1-3
    h0 = lit(40) + _pmod(_h(col("qm"), 9), 50)  # global index of the attached receiver at run 0
    return df.select(
        "*",
        k.alias("k"),
        step.alias("step"),
        (lit(RUN_INTERVAL_US) / step).cast("long").alias("interval_us"),  # 6 h, 3 h or 2 h per receiver
        h0.alias("h0"),
        (h0 + col("run") * step).alias("head"),  # global index of the ATTACHED receiver at this run
        F.when(_scenario("stale"), lit(-48 * HOUR_US)).otherwise(0).alias("shift_us"),
    )


def _queue_manager_traits(df: DataFrame, *, runs: int, t0_us: int) -> DataFrame:
    """What stays the same for a queue manager across runs: names, time zone, sequences, threshold, library."""
    from pyspark.sql import functions as F

    lit, col, dec = F.lit, F.col, _decimal()
    wrapped = _pmod(_h(col("qm"), 8), 100) < 5  # 5 %: names wrap 99999 -> 00000 inside the current chain
    last_head = col("h0") + lit(runs - 1) * col("step")
    n0 = F.when(wrapped, lit(100_005) - last_head - _pmod(_h(col("qm"), 21), 6)).otherwise(
        _pmod(_h(col("qm"), 10), 90_000)
    )
    tz_pick = _pmod(_h((col("qm") / QMS_PER_HOST).cast("long"), 11), 100)  # per host
    offset_min = F.when(tz_pick < 60, 0).when(tz_pick < 85, 60).otherwise(-300)
    huge_sequences = _pmod(_h(col("qm"), 12), 100) < 2  # beyond a long: decimal(38,0) in the job
    return df.select(
        "*",
        (col("k") - F.when(_scenario("next_name_taken"), 1).otherwise(0)).alias("chain_len"),
        n0.alias("n0"),
        (offset_min.cast("long") * MINUTE_US).alias("offset_us"),
        F.when(offset_min == 0, lit("Z")).when(offset_min == 60, lit("+01:00")).otherwise(lit("-05:00")).alias("tz"),
        (lit(1000) + _pmod(_h(col("qm"), 13), 100_000)).alias("entries"),  # journal entries per receiver
        F.when(huge_sequences, lit("18446744073709551616").cast(dec)).otherwise(lit(0).cast(dec)).alias("seq0"),
        (lit(1000) * (lit(1) + _pmod(_h(col("qm"), 14), 100))).alias("threshold_kb"),  # 1-100 MB
        (lit(1) + _pmod(_h(col("qm"), 15), 3)).alias("online_count"),  # detached, not yet saved
        F.greatest(lit(0), _pmod(_h(col("qm"), 16), 4) - 1).alias("freed_count"),  # oldest, storage freed
        (_pmod(_h(col("qm"), 17), 100) < 5).alias("saved_while_attached"),
        lit(t0_us).alias("t0_us"),
        F.concat(lit("QM"), lit("Q"), F.lpad(col("qm").cast("string"), 7, "0")).alias("lib"),
    )


def _identity_and_collection(df: DataFrame, *, t0_us: int) -> DataFrame:
    """The host and queue manager names, when this run collected it, and the run's id."""
    from pyspark.sql import functions as F

    lit, col = F.lit, F.col
    return df.select(
        "*",
        F.concat(lit("ibmi-p"), F.lpad((col("qm") / QMS_PER_HOST).cast("long").cast("string"), 5, "0")).alias("host"),
        F.concat(lit("Q"), F.lpad(col("qm").cast("string"), 7, "0")).alias("qmgr"),
        (
            lit(t0_us)
            + col("run") * RUN_INTERVAL_US
            + col("shift_us")
            + _pmod(_h(col("qm"), col("run"), 3), 10 * MINUTE_US)
        ).alias("collected_us"),
        F.concat(
            lit("collect_"),
            F.date_format(F.timestamp_micros(lit(t0_us) + col("run") * RUN_INTERVAL_US), "yyyyMMdd'T'HHmmss'Z'"),
        ).alias("run_id"),
    )


def _with_needed_entry(df: DataFrame) -> DataFrame:
    """AMQJRNINF: the needed receiver is a few back from the attached one; its time lies in that receiver's span.
    Adds g_needed and needed_us, and the AMQJRNINF record (or its broken forms, per scenario)."""
    from pyspark.sql import functions as F

    lit, col = F.lit, F.col
    back = _pmod(_h(col("qm"), col("run"), 6), F.least(col("chain_len") - 1, lit(8)) + 1)
    back = F.when(_scenario("name_time_disagree"), F.least(back, col("chain_len") - 2)).otherwise(back)
    df = df.select("*", (col("head") - back).alias("g_needed"))
    time_receiver = F.when(_scenario("name_time_disagree"), col("g_needed") - 1).otherwise(col("g_needed"))
    span_ms = (col("interval_us") / 2000).cast("long")
    attached_ms = (F.floor(_attach_us(time_receiver) / 1000) * 1000).cast("long")
    needed_us = attached_ms + _pmod(_h(col("qm"), col("run"), 7), span_ms) * 1000
    df = df.select("*", needed_us.alias("needed_us"))
    stamp = F.date_format(F.timestamp_micros(col("needed_us") + col("offset_us")), "yyyyMMddHHmmssSSS")
    named = F.when(_scenario("name_not_in_chain"), _rname(col("head") + 7)).otherwise(_rname(col("g_needed")))
    record = F.concat(F.rpad(named, 10, " "), F.rpad(col("lib"), 10, " "), stamp)
    amqjrninf = (
        F.when(_scenario("amqjrninf_missing"), lit(None).cast("string"))
        .when(_scenario("amqjrninf_stars"), F.concat(lit("*" * 20), stamp))
        .when(_scenario("amqjrninf_malformed"), F.substring(record, 1, 30))
        .otherwise(record)
    )
    return df.select("*", amqjrninf.alias("amqjrninf"))


def _receiver(i: Column) -> Column:
    """Receiver i of the snapshot, oldest first, as a v1 receiver struct; past chain_len, the EMPTY receiver that
    holds the attached one's next name (scenario next_name_taken)."""
    from pyspark.sql import functions as F

    lit, col, dec = F.lit, F.col, _decimal()
    slot = i < col("chain_len")  # else: the EMPTY receiver holding the attached one's next name
    g = col("head") - (col("chain_len") - 1) + i
    age = col("chain_len") - 1 - i
    attached_at, detached_at = _attach_us(g), _attach_us(g + 1)
    status = (
        F.when(~slot, lit("EMPTY"))
        .when(age == 0, lit("ATTACHED"))
        .when(age <= col("online_count"), lit("ONLINE"))
        .when(i < col("freed_count"), lit("FREED"))
        .otherwise(lit("SAVED"))
    )
    saved = slot & (age > col("online_count"))
    saved_while_attached = slot & (age == 1) & col("saved_while_attached")
    saved_at = (
        F.when(saved, _ts(detached_at + 5 * MINUTE_US))
        .when(saved_while_attached, _ts(attached_at + (col("interval_us") / 4).cast("long")))
        .otherwise(lit(None).cast("string"))
    )
    full = col("threshold_kb") * 1024
    size = (
        F.when(~slot, lit(8192))
        .when((age == 0) & _scenario("over_threshold"), full + 123_456)
        .when(age == 0, (full * (lit(5) + _pmod(_h(col("qm"), col("run"), 18), 90)) / 100).cast("long"))
        .otherwise(full + _pmod(_h(col("qm"), g, 19), 65_536))
    ).cast("long")
    first = (col("seq0") + (g * col("entries") + 1).cast(dec)).cast(dec)
    first = F.when(_scenario("sequence_gap") & (i == (col("chain_len") / 2).cast("int")), first + 7).otherwise(first)
    last = F.when(age == 0, first + _pmod(_h(col("qm"), col("run"), 20), col("entries")).cast(dec)).otherwise(
        (col("seq0") + ((g + 1) * col("entries")).cast(dec)).cast(dec)
    )
    none = lit(None).cast("string")
    return F.struct(
        F.when(slot, _rname(g)).otherwise(_rname(col("head") + 1)).alias("name"),
        col("lib").alias("library"),
        status.alias("status"),
        F.when(slot, _ts(attached_at)).otherwise(none).alias("attached_at"),
        F.when(slot & (age > 0), _ts(detached_at)).otherwise(none).alias("detached_at"),
        saved_at.alias("saved_at"),
        size.alias("size_bytes"),
        F.when(slot, col("threshold_kb")).otherwise(lit(None).cast("long")).alias("threshold_kb"),
        F.when(slot, _rname(g - 1)).otherwise(none).alias("previous"),
        F.when(slot, col("lib")).otherwise(none).alias("previous_library"),
        F.when(slot & (age > 0), _rname(g + 1)).otherwise(none).alias("next"),
        F.when(slot & (age > 0), col("lib")).otherwise(none).alias("next_library"),
        F.when(slot, first).otherwise(lit(None).cast(dec)).alias("first_sequence"),
        F.when(slot, last).otherwise(lit(None).cast(dec)).alias("last_sequence"),
        F.when(slot, lit("AMQAJRN")).otherwise(none).alias("journal"),
        F.when(slot, col("lib")).otherwise(none).alias("journal_library"),
    )


def _message(id_: str, text: Column) -> Column:
    from pyspark.sql import functions as F

    return F.struct(F.lit(id_).alias("id"), text.alias("text"))


def _checkpoint(collected_at: Column, needed_name: Column, media: Column) -> Column:
    """The forced RCDMQMIMG: its messages name the recovery points, or AMQ8101 when it failed (scenario)."""
    from pyspark.sql import functions as F

    lit, col = F.lit, F.col
    shown_at = F.date_format(F.timestamp_micros(col("needed_us") + col("offset_us")), "yyyy-MM-dd HH:mm:ss")
    in_lib = F.concat(lit(" in library "), col("lib"), lit("."))
    ok_messages = F.array(
        _message(
            "CPC7011", F.concat(lit("Receiver "), _rname(col("head")), in_lib, lit(" attached to journal AMQAJRN."))
        ),
        _message(
            "AMQ7460",
            F.concat(
                lit("Startup recovery point. Date and time "),
                shown_at,
                lit(", journal receiver "),
                F.coalesce(needed_name, lit("**********")),
                in_lib,
            ),
        ),
        _message(
            "AMQ7462",
            F.concat(lit("Oldest media recovery entry. Journal receiver "), media, in_lib),
        ),
    )
    failed_messages = F.array(_message("AMQ8101", lit("IBM MQ error (893) has occurred.")))
    failed = _scenario("checkpoint_failed")
    return F.struct(
        lit(True).alias("forced"),
        (~failed).alias("ok"),
        F.when(~failed, collected_at).otherwise(lit(None).cast("string")).alias("at"),
        F.when(failed, failed_messages).otherwise(ok_messages).alias("messages"),
    )


def _snapshot_records(df: DataFrame) -> DataFrame:
    """The v1 record of each row, with run_dir (the folder to write it to) and k (its receiver count) beside it."""
    from pyspark.sql import functions as F

    lit, col = F.lit, F.col
    collected_at = _ts(col("collected_us"), col("tz"), col("offset_us"))
    needed_name = F.when(_scenario("amqjrninf_stars"), lit(None).cast("string")).otherwise(_rname(col("g_needed")))
    startup = F.when(_scenario("startup_stuck"), _rname(col("h0") - 5)).otherwise(needed_name)
    media = F.when(_scenario("media_stuck"), _rname(col("h0") - 4)).otherwise(_rname(col("head")))
    startup_point = F.struct(startup.alias("receiver"), _ts_seconds(col("needed_us")).alias("at"))
    media_point = F.struct(media.alias("receiver"), _ts_seconds(col("collected_us") - 20 * MINUTE_US).alias("at"))
    no_points = _scenario("no_recovery_points")
    failed = _scenario("checkpoint_failed")
    queue_message = F.struct(
        lit("AMQ7472").alias("id"),
        collected_at.alias("at"),
        F.concat(lit("Object QMGR, type MQM damaged in "), col("qmgr"), lit(".")).alias("text"),
        F.concat(col("lib"), lit("/QMQMMSG")).alias("queue"),
    )
    return df.select(
        lit("mqjournal.snapshot/v1").alias("schema"),
        col("run_id"),
        collected_at.alias("collected_at"),
        col("host"),
        lit("ibmi").alias("platform"),
        col("qmgr"),
        col("lib").alias("qmgr_library"),
        F.struct(lit("AMQAJRN").alias("name"), col("lib").alias("library")).alias("journal"),
        _checkpoint(collected_at, needed_name, media).alias("checkpoint"),
        col("amqjrninf"),
        F.when(~no_points, startup_point).alias("startup_recovery"),
        F.when(~no_points, media_point).alias("media_recovery"),
        F.transform(F.sequence(lit(0), (col("k") - 1).cast("int")), _receiver).alias("receivers"),
        F.filter(F.array(queue_message), lambda m: failed).alias("messages"),
        col("run_id").alias("run_dir"),
        col("k"),
    )


def generate(spark, folder: Path, *, qms: int, receivers: int, runs: int) -> dict:
    """Write the fleet to `folder` (atomically: a temp folder renamed at the end), return its metadata."""
    from pyspark.sql import functions as F

    snapshots = qms * runs
    est_run_bytes = receivers / runs * EST_BYTES_PER_RECEIVER + qms * EST_BYTES_PER_SNAPSHOT
    files_per_run = max(1, math.ceil(est_run_bytes / TARGET_FILE_BYTES))
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    started = time.perf_counter()
    frame = fleet_frame(spark, qms=qms, receivers=receivers, runs=runs, partitions=runs * files_per_run)
    expected = frame.agg(F.sum("k")).collect()[0][0]  # a global aggregate: always one row
    log(f"generating {snapshots:,} snapshots / {expected:,} receiver rows into {folder} ({files_per_run} files a run)")
    # Each task holds one run: concurrent writers spare the sort by run_dir a partitioned write would add.
    spark.conf.set("spark.sql.maxConcurrentOutputFileWriters", "2")
    try:
        (
            frame.drop("k")
            .write.partitionBy("run_dir")
            .option("ignoreNullFields", "false")  # the v1 contract writes every key, null or not
            .mode("overwrite")
            .json(str(tmp))
        )
    finally:
        spark.conf.unset("spark.sql.maxConcurrentOutputFileWriters")
    _to_collector_layout(tmp)
    written = time.perf_counter() - started
    # Not timed as part of the benchmark: what is on disk is what was meant, and valid v1.
    _check_counts(spark, tmp, snapshots=snapshots, receivers=expected)
    validated = validate_sample(tmp, lines_per_file=50)
    files = sorted(tmp.rglob("*.jsonl"))
    meta = {
        "generator_version": GENERATOR_VERSION,
        "queue_managers": qms,
        "runs": runs,
        "snapshots": snapshots,
        "receivers": int(expected),
        "as_of": AS_OF.isoformat(),
        "files": len(files),
        "bytes": sum(f.stat().st_size for f in files),
        "generation_seconds": round(written, 1),
        "validated_lines": validated,
    }
    (tmp / "_BENCH_META.json").write_text(json.dumps(meta, indent=2) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return meta


def _to_collector_layout(folder: Path) -> None:
    """Spark's partitioned output renamed to the collector's layout: run_id=<id>/*.jsonl (the job reads *.jsonl
    from a folder), without Spark's checksum files."""
    for run_dir in sorted(folder.glob("run_dir=*")):
        target = folder / run_dir.name.replace("run_dir=", "run_id=", 1)
        run_dir.rename(target)
        for crc in target.glob(".*.crc"):
            crc.unlink()
        for part in target.glob("part-*.json"):
            part.rename(part.with_suffix(".jsonl"))
    for crc in folder.glob(".*.crc"):
        crc.unlink()


def _check_counts(spark: SparkSession, folder: Path, *, snapshots: int, receivers: int) -> None:
    """The written files hold as many snapshots and receiver rows as the frame did."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    counted = (
        spark.read.schema(T.StructType([T.StructField("receivers", T.ArrayType(T.StringType()))]))
        .option("recursiveFileLookup", "true")
        .option("pathGlobFilter", "*.jsonl")
        .json(str(folder))
        .agg(F.count(F.lit(1)).alias("snapshots"), F.sum(F.size("receivers")).alias("receivers"))
        .collect()[0]  # a global aggregate: always one row
    )
    if counted.snapshots != snapshots or counted.receivers != receivers:
        raise SystemExit(
            f"generated {counted.snapshots} snapshots / {counted.receivers} receivers, not {snapshots} / {receivers}"
        )


def validate_sample(folder: Path, *, lines_per_file: int) -> int:
    """Every sampled line must load as a `mqjournal.snapshot/v1` Snapshot (the pydantic model of the contract)."""
    from mqjournal.snapshot import Snapshot

    checked = 0
    for path in sorted(folder.rglob("*.jsonl")):
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines):
                if number >= lines_per_file:
                    break
                Snapshot.model_validate_json(line)
                checked += 1
    return checked


# --- event log: where the time goes ------------------------------------------------------------------------------


def stage_report(event_dir: Path, top: int = 12) -> dict:
    """Per job group (scan1, plan, scan2): jobs and stages from Spark's event log, slowest stages first."""
    logs = sorted(p for p in event_dir.iterdir() if p.is_file() and not p.name.endswith(".inprogress")) or sorted(
        event_dir.iterdir()
    )
    if not logs:
        return {}
    jobs, stages = _read_event_log(logs[-1])
    report: dict[str, dict] = {}
    for group in dict.fromkeys(j["group"] for j in jobs.values()):
        group_stages = [s for s in stages if s["group"] == group]
        group_jobs = [j for j in jobs.values() if j["group"] == group]
        report[group] = {
            "jobs": len(group_jobs),
            "job_seconds": round(_busy_ms(group_jobs) / 1000, 1),
            "stages": len(group_stages),
            "stage_seconds": round(sum(s["seconds"] for s in group_stages), 1),
            "task_seconds": round(sum(s["task_seconds"] for s in group_stages), 1),
            "gc_seconds": round(sum(s["gc_seconds"] for s in group_stages), 1),
            "input_mib": round(sum(s["input_mib"] for s in group_stages), 1),
            "shuffle_write_mib": round(sum(s["shuffle_write_mib"] for s in group_stages), 1),
            "spill_disk_mib": round(sum(s["spill_disk_mib"] for s in group_stages), 1),
            "slowest": sorted(group_stages, key=lambda s: -s["seconds"])[:top],
        }
    return report


def _read_event_log(path: Path) -> tuple[dict[int, dict], list[dict]]:
    """(jobs by id with their group, start and end; completed stages with their group and metrics)."""
    stage_group: dict[int, str] = {}
    jobs: dict[int, dict] = {}
    stages: list[dict] = []
    with path.open(encoding="utf-8") as events:
        for line in events:
            event = json.loads(line)
            kind = event.get("Event")
            if kind == "SparkListenerJobStart":
                group = (event.get("Properties") or {}).get("spark.jobGroup.id", "other")
                jobs[event["Job ID"]] = {"start": event["Submission Time"], "group": group}
                for stage in event["Stage IDs"]:
                    stage_group[stage] = group
            elif kind == "SparkListenerJobEnd" and event["Job ID"] in jobs:
                jobs[event["Job ID"]]["end"] = event["Completion Time"]
            elif kind == "SparkListenerStageCompleted":
                info = event["Stage Info"]
                stages.append(_stage_row(info, stage_group.get(info["Stage ID"], "other")))
    return jobs, stages


def _stage_row(info: dict, group: str) -> dict:
    """One completed stage: its time, tasks, I/O and the operators (RDD scopes) it ran."""
    metrics = {a.get("Name"): a.get("Value") for a in info.get("Accumulables", [])}
    scopes = []
    for rdd in info.get("RDD Info", []):
        try:
            name = json.loads(rdd.get("Scope") or "{}").get("name")
        except ValueError:
            name = None
        if name and name not in scopes:
            scopes.append(name)

    def metric(name: str) -> int:
        value = metrics.get(name)
        if value is None:
            return 0
        try:
            return int(value)
        except (TypeError, ValueError):
            return 0

    return {
        "stage": info["Stage ID"],
        "group": group,
        "name": info.get("Stage Name", ""),
        "tasks": info.get("Number of Tasks"),
        "seconds": round((info.get("Completion Time", 0) - info.get("Submission Time", 0)) / 1000, 1),
        "task_seconds": round(metric("internal.metrics.executorRunTime") / 1000, 1),
        "gc_seconds": round(metric("internal.metrics.jvmGCTime") / 1000, 1),
        "input_mib": mib(metric("internal.metrics.input.bytesRead")),
        "shuffle_read_mib": mib(
            metric("internal.metrics.shuffle.read.localBytesRead")
            + metric("internal.metrics.shuffle.read.remoteBytesRead")
        ),
        "shuffle_write_mib": mib(metric("internal.metrics.shuffle.write.bytesWritten")),
        "spill_disk_mib": mib(metric("internal.metrics.diskBytesSpilled")),
        "operators": scopes[:8],
    }


def _busy_ms(jobs: list[dict]) -> int:
    """The union of the jobs' intervals: time with at least one job running."""
    intervals = sorted((j["start"], j.get("end", j["start"])) for j in jobs)
    busy, until = 0, None
    for start, end in intervals:
        if until is None or start > until:
            busy += end - start
            until = end
        elif end > until:
            busy += end - until
            until = end
    return busy


# --- the benchmark ----------------------------------------------------------------------------------------------------


def build_session(args, event_dir: Path | None):
    from pyspark.sql import SparkSession

    from mqjournal.planjob import default_conf
    from mqjournal.sparkplan.job import SESSION_CONF

    # The plan's Python workers (its grouped UDF) run this interpreter, which has mqjournal and its dependencies, as
    # spark-submit's environment gives the job (planjob.submit_environment). pyspark reads it from the environment.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(args.master).appName("mqjournal-plan-bench")
    # What the job's main sets on its session, and what spark-submit gives it.
    conf = (
        default_conf(args.master)
        | SESSION_CONF
        | {
            # Only effective in a fresh process: this script starts no JVM before the builder.
            "spark.driver.memory": args.driver_memory,
            "spark.ui.showConsoleProgress": "false",
        }
    )
    if args.shuffle_partitions:
        conf["spark.sql.shuffle.partitions"] = str(args.shuffle_partitions)
    if event_dir is not None:
        conf |= {
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": event_dir.as_uri(),
            "spark.eventLog.compress": "false",
            "spark.eventLog.rolling.enabled": "false",
        }
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark, conf


def bare_scan(spark, job, location: str) -> None:
    """The job's reader, every receiver exploded into a row with all its fields, into the noop sink."""
    from pyspark.sql import functions as F

    raw = job.read_inputs(spark, [location])
    rows = raw.select(*job.KEY, "run_id", "collected_at", F.explode("receivers").alias("r")).select(
        *job.KEY, "run_id", "collected_at", "r.*"
    )
    rows.write.format("noop").mode("overwrite").save()


def warm_up(spark, sampler: RssSampler, job, folder: Path, work: Path, policy) -> None:
    """A bare scan and plan of the newest run only, outside the ratio, so that the timed runs all find the JIT warm.

    Without it the first timed scan also pays for compiling the JSON reader, which the plan after it does not:
    the plan would be compared with a scan slower than the one after it.
    """
    newest_run = max(p for p in folder.iterdir() if p.is_dir() and p.name.startswith("run_id="))
    out = work / "warmup"
    out.mkdir()

    def scan_and_plan() -> None:
        bare_scan(spark, job, str(newest_run))
        job.plan(spark, inputs=[str(newest_run)], out=str(out), policy=policy, as_of=AS_OF)

    described = f"warm-up (not in the ratio): a bare scan and a plan of {newest_run.name}"
    timed(spark, sampler, "warmup", described, scan_and_plan)
    shutil.rmtree(out, ignore_errors=True)


CONTENTION: dict[str, dict] = {}


def timed(
    spark: SparkSession, sampler: RssSampler, group: str, description: str, action: Callable[[], Result]
) -> tuple[float, Result]:
    """Run `action` as job group `group`; also note how much CPU other processes on the machine took meanwhile."""
    spark.sparkContext.setJobGroup(group, description)
    sampler.phase = group
    busy0, own0 = busy_cpu_seconds(), own_cpu_seconds(sampler)
    started = time.perf_counter()
    result = action()
    seconds = time.perf_counter() - started
    busy, own = busy_cpu_seconds() - busy0, own_cpu_seconds(sampler) - own0
    sampler.phase = "idle"
    cores = os.cpu_count() or 1
    CONTENTION[group] = {
        "own_cpu_seconds": round(own, 1),
        "other_cpu_seconds": round(max(0.0, busy - own), 1),
        "machine_cpu_seconds": round(seconds * cores, 1),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    c = CONTENTION[group]
    log(
        f"{description}: {seconds:.1f} s (CPU: this benchmark {c['own_cpu_seconds']} s, other processes "
        f"{c['other_cpu_seconds']} s, of {c['machine_cpu_seconds']} s available; load {c['load_average_1m']})"
    )
    return seconds, result


def reference_check(folder: Path, spark_summary: PlanTotals) -> str:
    """The pure-Python planner on the same snapshots: its summary must equal the job's (counts and bytes)."""
    from mqjournal.policy import Policy
    from mqjournal.rules import plan_fleet
    from mqjournal.snapshot import read_snapshots

    snapshots = [s for path in sorted(folder.rglob("*.jsonl")) for s in read_snapshots(path)]
    reference = plan_fleet(snapshots, as_of=AS_OF, policy=Policy()).summary()
    # Counts and bytes: the as_of and policy are the bench's own.
    left_out = {"as_of", "policy"}
    ours, theirs = reference.model_dump(exclude=left_out), spark_summary.model_dump(exclude=left_out)
    different = {k: (ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]}
    return "equal" if not different else f"DIFFERENT: {different}"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queue-managers", type=int, default=DEFAULT_QUEUE_MANAGERS)
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="collections per queue manager (history)")
    parser.add_argument(
        "--receivers",
        type=int,
        default=None,
        help="receiver rows across all snapshots; default queue managers x runs x 16.7 (10 M for the default fleet)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(tempfile.gettempdir()) / "mqjournal-bench",
        help="work folder: the generated fleet (cached per size), the plan output, the event log",
    )
    parser.add_argument("--keep-data", action="store_true", help="keep the generated fleet for the next run")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--shuffle-partitions", type=int, default=None, help="default: the job's local conf (4)")
    parser.add_argument("--no-event-log", action="store_true", help="skip the per-stage report")
    parser.add_argument(
        "--no-warmup", dest="warmup", action="store_false", help="time a cold JVM (no untimed scan and plan first)"
    )
    parser.add_argument(
        "--check-limit",
        type=int,
        default=20_000,
        help="compare with the reference planner when there are at most this many snapshots",
    )
    args = parser.parse_args(argv)
    if args.receivers is None:
        args.receivers = round(args.queue_managers * args.runs * RECEIVERS_PER_SNAPSHOT)
    if args.runs < 1 or args.queue_managers < 1:
        parser.error("--runs and --queue-managers must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    sampler = RssSampler()
    sampler.start()
    work = Path(tempfile.mkdtemp(prefix="run-", dir=args.out))
    event_dir = None if args.no_event_log else work / "events"
    if event_dir is not None:
        event_dir.mkdir()
    folder = args.out / fleet_key(args.queue_managers, args.receivers, args.runs)
    try:
        measured = measure(args, sampler, folder, work, event_dir)
        sampler.stop()
        check = "skipped (more than --check-limit snapshots)"
        if measured.meta["snapshots"] <= args.check_limit:
            log("comparing with the pure-Python reference planner (not timed)")
            check = reference_check(folder, measured.summary)
        stages = stage_report(event_dir) if event_dir is not None else {}
        result = bench_result(args, measured, sampler.peaks, check)
        print_report(result, stages)
        print(json.dumps(result, sort_keys=False), flush=True)
        return 0
    finally:
        sampler.stop()
        shutil.rmtree(work, ignore_errors=True)
        if not args.keep_data:
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(folder.with_name(folder.name + ".tmp"), ignore_errors=True)


@dataclass(frozen=True)
class Measured:
    """What one Spark session measured: the fleet, the three timings, the plan's summary and the session's setup."""

    meta: dict
    cached: bool
    scan1: float
    plan: float
    scan2: float
    summary: PlanTotals
    spark_version: str
    cores: int
    used_conf: dict[str, str | None]


def measure(
    args: argparse.Namespace, sampler: RssSampler, folder: Path, work: Path, event_dir: Path | None
) -> Measured:
    """In one SparkSession: the fleet (generated, or the cached one), the warm-up, then scan #1, plan, scan #2. The
    session is stopped before returning, so the peak RSS afterwards is not the JVM's."""
    spark = None
    try:
        log(f"starting Spark ({args.master}, driver memory {args.driver_memory})")
        spark, _ = build_session(args, event_dir)
        job = load_job()
        sampler.phase = "generate"
        meta_file = folder / "_BENCH_META.json"
        if meta_file.is_file():
            meta = json.loads(meta_file.read_text())
            log(f"reusing the generated fleet in {folder}")
            cached = True
        else:
            meta = generate(spark, folder, qms=args.queue_managers, receivers=args.receivers, runs=args.runs)
            cached = False
        sampler.phase = "idle"
        scan1, plan_seconds, scan2, summary = _timed_runs(spark, sampler, job, args, folder, work)
        measured = Measured(
            meta=meta,
            cached=cached,
            scan1=scan1,
            plan=plan_seconds,
            scan2=scan2,
            summary=summary,
            spark_version=spark.version,
            cores=spark.sparkContext.defaultParallelism,
            used_conf={k: spark.conf.get(k) for k in ("spark.sql.shuffle.partitions", "spark.driver.memory")},
        )
        spark.stop()
        spark = None
        time.sleep(1)
        return measured
    finally:
        if spark is not None:
            spark.stop()


def _timed_runs(
    spark: SparkSession, sampler: RssSampler, job: ModuleType, args: argparse.Namespace, folder: Path, work: Path
) -> tuple[float, float, float, PlanTotals]:
    """(scan #1, plan, scan #2 seconds, the plan's summary), after the untimed warm-up unless --no-warmup."""
    from mqjournal.policy import Policy

    location = str(folder)
    plan_out = work / "plan"
    plan_out.mkdir()
    policy = Policy()
    if args.warmup:
        warm_up(spark, sampler, job, folder, work, policy)
    scan1, _ = timed(spark, sampler, "scan1", "bare scan #1", lambda: bare_scan(spark, job, location))
    plan_seconds, summary = timed(
        spark, sampler, "plan", "plan job",
        lambda: job.plan(spark, inputs=[location], out=str(plan_out), policy=policy, as_of=AS_OF),
    )  # fmt: skip
    scan2, _ = timed(spark, sampler, "scan2", "bare scan #2", lambda: bare_scan(spark, job, location))
    spark.sparkContext.setJobGroup("other", "after the timings")
    return scan1, plan_seconds, scan2, summary


def bench_result(args: argparse.Namespace, m: Measured, peaks: dict[str, dict[str, int]], check: str) -> dict:
    """The benchmark's one JSON line (print_report shows it to a person)."""
    rows = m.meta["receivers"]
    scan = (m.scan1 + m.scan2) / 2
    summary = m.summary
    return {
        "bench": "mqjournal.plan",
        "queue_managers": m.meta["queue_managers"],
        "runs": m.meta["runs"],
        "snapshots": m.meta["snapshots"],
        "receiver_rows": rows,
        "current_receivers": summary.receivers,
        "input_files": m.meta["files"],
        "input_mib": mib(m.meta["bytes"]),
        "generation_seconds": None if m.cached else m.meta["generation_seconds"],
        "scan1_seconds": round(m.scan1, 1),
        "plan_seconds": round(m.plan, 1),
        "scan2_seconds": round(m.scan2, 1),
        "scan_seconds": round(scan, 1),
        "warmup": args.warmup,
        "ratio": round(m.plan / scan, 2),
        # Issue #30: the plan within 2x of a bare scan of the same input, at every size.
        "within_2x": m.plan <= 2 * scan,
        "scan_rows_per_second": round(rows / scan),
        "plan_rows_per_second": round(rows / m.plan),
        "peak_rss_mib": {
            "driver_jvm": mib(peaks.get("all", {}).get("java", 0)),
            "python": mib(peaks.get("all", {}).get("python", 0)),
            "total": mib(peaks.get("all", {}).get("total", 0)),
            **{f"driver_jvm_{p}": mib(peaks[p]["java"]) for p in ("scan1", "plan", "scan2") if p in peaks},
        },
        "spark": m.spark_version,
        "master": args.master,
        "cores": m.cores,
        "cpu_count": os.cpu_count(),
        "ram_gib": round(psutil.virtual_memory().total / 1024**3, 1),
        "driver_memory": m.used_conf["spark.driver.memory"],
        "shuffle_partitions": int(m.used_conf["spark.sql.shuffle.partitions"] or 0),
        "python": platform.python_version(),
        "blocked_queue_managers": summary.blocked_queue_managers,
        "actions": summary.model_dump(mode="json")["actions"],
        "alerts": summary.model_dump(mode="json")["alerts"],
        "reference_check": check,
        # CPU seconds that other processes on the machine used during each timed phase: > 0 means contention.
        "other_cpu_seconds": {g: CONTENTION[g]["other_cpu_seconds"] for g in ("scan1", "plan", "scan2")},
        # CPU seconds of the driver JVM and this process: less sensitive to other load than wall time.
        "own_cpu_seconds": {g: CONTENTION[g]["own_cpu_seconds"] for g in ("scan1", "plan", "scan2")},
        "cpu_ratio": round(
            CONTENTION["plan"]["own_cpu_seconds"]
            / max(0.1, (CONTENTION["scan1"]["own_cpu_seconds"] + CONTENTION["scan2"]["own_cpu_seconds"]) / 2),
            2,
        ),
    }


def print_report(r: dict, stages: dict) -> None:
    rss = r["peak_rss_mib"]
    lines = [
        "",
        "== mqjournal plan benchmark ==",
        f"fleet            {r['queue_managers']:,} queue managers x {r['runs']} runs = {r['snapshots']:,} snapshots, "
        f"{r['receiver_rows']:,} receiver rows ({r['current_receivers']:,} in the current state); "
        f"{r['input_files']} JSONL files, {r['input_mib']:,} MiB",
        f"spark            {r['spark']} {r['master']}, {r['cores']} cores, driver memory {r['driver_memory']}, "
        f"shuffle partitions {r['shuffle_partitions']}, {r['ram_gib']} GiB RAM, Python {r['python']}",
        f"generation       {'cached' if r['generation_seconds'] is None else str(r['generation_seconds']) + ' s'}",
        f"warm-up          {'an untimed scan and plan of the newest run' if r['warmup'] else 'none (--no-warmup)'}",
        f"bare scan #1     {r['scan1_seconds']:8.1f} s",
        f"plan             {r['plan_seconds']:8.1f} s   {r['plan_rows_per_second']:>12,} receiver rows/s",
        f"bare scan #2     {r['scan2_seconds']:8.1f} s",
        f"bare scan (mean) {r['scan_seconds']:8.1f} s   {r['scan_rows_per_second']:>12,} receiver rows/s",
        f"ratio plan/scan  {r['ratio']:8.2f}     target <= 2: {'met' if r['within_2x'] else 'NOT met'}"
        f"   (in CPU seconds of this benchmark: {r['cpu_ratio']:.2f})",
        f"peak RSS         driver JVM {rss['driver_jvm']:,} MiB (scan #1 {rss.get('driver_jvm_scan1', 0):,}, "
        f"plan {rss.get('driver_jvm_plan', 0):,}, scan #2 {rss.get('driver_jvm_scan2', 0):,}); "
        f"Python {rss['python']:,} MiB; together {rss['total']:,} MiB",
        f"plan result      {r['blocked_queue_managers']:,} blocked; actions {r['actions']}; alerts {r['alerts']}",
        f"reference check  {r['reference_check']}",
        "contention       CPU-s used by other processes: "
        + ", ".join(f"{g} {c['other_cpu_seconds']} of {c['machine_cpu_seconds']}" for g, c in CONTENTION.items()),
    ]
    print("\n".join(lines))
    walls = {"scan1": r["scan1_seconds"], "plan": r["plan_seconds"], "scan2": r["scan2_seconds"]}
    for group in ("scan1", "plan", "scan2"):
        g = stages.get(group)
        if not g:
            continue
        print(
            f"\n-- {group}: {walls[group]} s wall, of which {g['job_seconds']} s with a Spark job running and "
            f"{round(walls[group] - g['job_seconds'], 1)} s without (driver: analysis, optimisation, planning)"
        )
        print(
            f"   {g['jobs']} jobs, {g['stages']} stages, {g['stage_seconds']} s in stages, "
            f"{g['task_seconds']} task-s (GC {g['gc_seconds']} s), input {g['input_mib']:,} MiB, "
            f"shuffle write {g['shuffle_write_mib']:,} MiB, spill {g['spill_disk_mib']:,} MiB"
        )
        if group != "plan":
            continue
        header = ("stage", "sec", "task-s", "tasks", "in MiB", "shW MiB", "spill")
        print(
            "   "
            + " ".join(f"{h:>{w}}" for h, w in zip(header, (5, 7, 7, 5, 8, 8, 7), strict=True))
            + "  call site / operators"
        )
        for s in g["slowest"]:
            print(
                f"   {s['stage']:>5} {s['seconds']:>7} {s['task_seconds']:>7} {s['tasks']:>5} {s['input_mib']:>8} "
                f"{s['shuffle_write_mib']:>8} {s['spill_disk_mib']:>7}  {s['name']} | {', '.join(s['operators'])}"
            )
    print()


if __name__ == "__main__":
    sys.exit(main())
