"""Benchmark: mqjournal's download of save files against OpenSSH's sftp client, on the same link.

    .venv/bin/python bench/copy_bench.py [--size-mib 1024] [--parallel 4] [--parallel-size-mib 256] [--repeats 2]
    .venv/bin/python bench/copy_bench.py --linux [--extent-mib 64] [--extents 8] [--repeats 2]

It needs root (a network namespace, a chroot for sshd's sftp) and the real OpenSSH server, /usr/sbin/sshd from
Debian's openssh-server, and installs nothing: without sshd it says `apt-get install -y openssh-server` and stops.

1. Writes random save files once (default one of 1 GiB, four of 256 MiB) under a root-owned folder that sshd serves
   as its sftp root (ChrootDirectory, internal-sftp), as IBM i's sftp-server shows them:
   /QSYS.LIB/BENCH.LIB/<NAME>.FILE. Makes a host key and a login key of its own, a known_hosts from the host key,
   and an sshd_config of its own, and starts sshd (never the system's) on a free port. The chroot also holds a shell
   and OpenSSL at IBM's PASE path, so that the host's SHA-256 of the file, which download_save_file reads first, is
   computed by the server's side; only the save file's object list (Db2 for i's SAVE_FILE_OBJECTS) is a stand-in.
2. Times, in turn and `--repeats` times each, on the same link:
   - OpenSSH's sftp client: `sftp -b` get of the file(s), the host key checked against the known_hosts (strict),
     twice: with OpenSSH's default ciphers (the standard tool as an admin runs it), and with the ciphers mqjournal's
     own ssh client offers (AES-GCM first on a CPU with AES instructions, sftpcopy.AES_FIRST): the like-for-like
     baseline, so that the cipher's share and the rest of mqjournal's cost are told apart;
   - mqjournal: `download_save_file` (what the save step calls) into a BackupStore, the host key pinned; its
     SHA-256 computed on the way, the host's digest read beside it, and what BackupStore.put does after the write;
   - once, for reference: mqjournal over the session's paramiko channel (no OpenSSH client: password logins).
   Each of one file, then `--parallel` files of one host at once (sftp processes; mqjournal threads, one session
   each, in one Python process, as a task's threads run them).
3. First on loopback, then with `--rtt-ms` (20) of round trip added: 10 ms each way by netem on a veth pair into a
   network namespace where sshd then listens, both made and removed by the bench. Where the kernel has no netem
   (`tc` answers "Specified qdisc kind is unknown"), a relay process of the bench's holds each piece 10 ms in each
   direction instead, and the output says so.
4. Prints MB/s of each and the ratios mqjournal / sftp to both baselines (best of the repeats and median), and a
   JSON line.

With `--linux`, the archive of a Linux queue manager's log extents (#32) instead, on the same server and links:
the chroot holds `--extents` random extents of `--extent-mib` at MQ's path, /var/mqm/log/QM!BENCH/active/S0000001.LOG
and on, and coreutils' `sha256sum` (the host's digest archive_extent asks for first) with the shells and the
libraries they load. OpenSSH's side is one `sftp -b` session getting the extents one after another; mqjournal's is
`archive_extent` of each in turn over one session (as the archive step runs a queue manager's extents): the host's
sha256sum, the download, ExtentStore.put vouched by that digest, and the record in a SQLite catalog of the run's own.

It cleans up what it started (sshd, the namespace, the relay, the folders; `--keep-data` keeps the files for a
later run). A benchmark, not a test: nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import stat
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog, SaveFileCopy
from mqjournal.ibmi import hostdigest, sftpcopy
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.backups import SaveFileContent
from mqjournal.ibmi.commands import Command, save_file_path
from mqjournal.ibmi.transfer import download_save_file
from mqjournal.ibmi.transport import IbmiSession, ssh_connector
from mqjournal.linuxmq.archive import archive_extent
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.extentstore import ExtentStore

MIB = 1024 * 1024
LIBRARY = "BENCH"
QMGR = "QM.BENCH"
ACTIVE = "/var/mqm/log/QM!BENCH/active"
"""The queue manager's log directory as MQ names it on disk: a '.' of its name is a '!' in its folder's."""
DATA_FOLDER = Path("/var/lib/mqjournal-copy-bench")
"""Root-owned and not writable by others up to /: what sshd's ChrootDirectory requires (/tmp is not)."""
NETNS_PREFIX = "mqjcb"
WAIT_SECONDS = 20.0
TOOLS = {
    "/usr/sbin/sshd": "apt-get update && apt-get install -y openssh-server",
    "ssh": "apt-get install -y openssh-client",
    "sftp": "apt-get install -y openssh-client",
    "ssh-keygen": "apt-get install -y openssh-client",
    "ip": "apt-get install -y iproute2",
    "tc": "apt-get install -y iproute2",
}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=int, default=1024, help="the single save file")
    parser.add_argument("--parallel", type=int, default=4, help="save files of one host copied at once")
    parser.add_argument("--parallel-size-mib", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=2, help="timed copies per client and case")
    parser.add_argument("--rtt-ms", type=float, default=20.0, help="round trip added in the second pass (0: none)")
    parser.add_argument("--no-paramiko", action="store_true", help="skip the reference copy over paramiko")
    parser.add_argument("--keep-data", action="store_true", help="keep the bench's files for a later run")
    parser.add_argument("--linux", action="store_true", help="a Linux queue manager's log extents, not save files")
    parser.add_argument("--extent-mib", type=int, default=64, help="each log extent (LogFilePages x 4 KiB)")
    parser.add_argument("--extents", type=int, default=8, help="log extents archived one after another")
    parser.add_argument("--relay", nargs=4, metavar=("HOST", "PORT", "TARGET_PORT", "DELAY_MS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.extents < 1 or args.extent_mib < 1:
        parser.error("--extents and --extent-mib count whole extents and MiB: give 1 or more")
    return args


# --- the server ---------------------------------------------------------------------------------------------------


@dataclass
class Server:
    address: str
    port: int
    host_key_line: str  # "type base64"
    known_hosts: Path
    client_key: Path


def check_tools() -> None:
    missing = [(tool, how) for tool, how in TOOLS.items() if shutil.which(tool) is None and not Path(tool).exists()]
    if missing:
        for tool, how in missing:
            print(f"missing {tool}: {how}", file=sys.stderr)
        sys.exit(2)
    if os.geteuid() != 0:
        sys.exit("copy_bench needs root: sshd's chroot and the network namespace")


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def write_random_files(files: dict[str, tuple[Path, int]]) -> dict[str, str]:
    """Random bytes at each name's (path, size), written once (kept with --keep-data); returns each name's SHA-256."""
    digests = {}
    for name, (path, size) in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        if path.exists() and path.stat().st_size == size:
            with path.open("rb") as f:
                while chunk := f.read(8 * MIB):
                    digest.update(chunk)
        else:
            with path.open("wb") as f:
                for _ in range(size // MIB):
                    chunk = os.urandom(MIB)
                    digest.update(chunk)
                    f.write(chunk)
        digests[name] = digest.hexdigest()
    return digests


def write_save_files(folder: Path, sizes: dict[str, int]) -> dict[str, str]:
    library = folder / "QSYS.LIB" / f"{LIBRARY}.LIB"
    return write_random_files({name: (library / f"{name}.FILE", size) for name, size in sizes.items()})


def extent_names(count: int) -> list[str]:
    return [Extent(number).name for number in range(1, count + 1)]


def write_extents(folder: Path, names: list[str], size: int) -> dict[str, str]:
    active = folder / ACTIVE.lstrip("/")
    return write_random_files({name: (active / name, size) for name in names})


SHELLS = {"/bin/bash": "/bin/bash", "/bin/sh": "/bin/sh"}
"""Root's login shell, through which sshd runs each command it is sent, and the shell beside it."""

PARTITION_PROGRAMS = SHELLS | {"/usr/bin/openssl": "/QOpenSys/usr/bin/openssl"}
"""What the chroot needs for mqjournal's commands on the save file: the shells, and OpenSSL where IBM's Portable
Utilities (5733-SC1 option 1) put it, the first program hostdigest.TOOLS tries."""

LINUX_HOST_PROGRAMS = SHELLS | {"/usr/bin/sha256sum": "/usr/bin/sha256sum"}
"""What the chroot needs for archive_extent's command on the host: the shells, and coreutils' sha256sum where a
Linux host has it (linuxmq.commands.extent_digest runs it by name, found on the PATH sshd gives a command)."""


def install_programs(root: Path, programs: dict[str, str]) -> None:
    """Copies `programs` (this machine's path: the chroot's), the shared libraries they load (ldd) and /dev/null
    (hostdigest's probe) into `root`, so that the host's digest a copy is checked against is a real SHA-256 of the
    file, computed by the server's side."""
    wanted = dict(programs)
    for program in programs:
        for line in subprocess.run(["ldd", program], capture_output=True, text=True, check=True).stdout.splitlines():
            library = next((word for word in line.split() if word.startswith("/")), None)
            if library is not None:
                wanted[library] = library
    for source, target in wanted.items():
        into = root / target.lstrip("/")
        into.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, into)
    null = root / "dev" / "null"
    if not null.exists():
        null.parent.mkdir(exist_ok=True)
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))


def object_list_round_trip(session: IbmiSession, save_files: list[str]) -> dict[str, SaveFileContent]:
    """Stands in for backups.save_file_contents, which asks Db2 for i's SAVE_FILE_OBJECTS (no such service on Linux):
    one command round trip, as the real SQL call costs, and the answer that the save file holds what the copy's
    description says (the bench's files are random bytes, saved from nothing)."""
    session.run(Command(text=":", idempotent=True))
    return {path: SaveFileContent(exists=True, receivers=frozenset()) for path in save_files}


def make_keys(work: Path) -> tuple[Path, Path, str]:
    host_key, client_key = work / "ssh_host_ed25519_key", work / "client_key"
    for key in (host_key, client_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    (work / "authorized_keys").write_text(Path(f"{client_key}.pub").read_text())
    kind, b64 = Path(f"{host_key}.pub").read_text().split()[:2]
    return host_key, client_key, f"{kind} {b64}"


def start_sshd(work: Path, data: Path, address: str, port: int, netns: str | None) -> subprocess.Popen[bytes]:
    host_key = work / "ssh_host_ed25519_key"
    config = work / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                f"ListenAddress {address}",
                f"HostKey {host_key}",
                f"PidFile {work}/sshd.pid",
                f"AuthorizedKeysFile {work}/authorized_keys",
                "PermitRootLogin prohibit-password",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "MaxSessions 32",
                "MaxStartups 32:30:64",
                "Subsystem sftp internal-sftp",
                f"ChrootDirectory {data}",
                "",
            ]
        )
    )
    argv = ["/usr/sbin/sshd", "-D", "-e", "-f", str(config)]
    if netns:
        argv = ["ip", "netns", "exec", netns, *argv]
    log = (work / f"sshd-{port}.log").open("wb")
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    wait_for_port(address, port, process, netns)
    return process


def wait_for_port(address: str, port: int, process: subprocess.Popen[bytes], netns: str | None) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"the server on {address}:{port} ended at its start (exit status {process.returncode})")
        with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=1):
            return
        time.sleep(0.1)
    sys.exit(f"nothing listens on {address}:{port} after {WAIT_SECONDS:g} s")


def stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)  # its own session: sshd and the children it forked for logins
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


# --- the added round trip -----------------------------------------------------------------------------------------


def ip(*argv: str, netns: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    command = ["ip", "netns", "exec", netns, *argv] if netns else list(argv)
    return subprocess.run(command, capture_output=True, text=True, check=check)


@contextlib.contextmanager
def netem_link(delay_ms: float) -> Iterator[tuple[str, str] | None]:
    """A namespace reached through a veth pair with `delay_ms` each way; yields (namespace, its address), or None
    when the kernel has no netem (everything made so far removed again)."""
    ns = f"{NETNS_PREFIX}{os.getpid()}"
    outside, inside = f"{ns}h", f"{ns}n"
    subnet = 100 + os.getpid() % 100
    try:
        ip("ip", "netns", "add", ns)
        ip("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
        ip("ip", "link", "set", inside, "netns", ns)
        ip("ip", "addr", "add", f"10.231.{subnet}.1/30", "dev", outside)
        ip("ip", "link", "set", outside, "up")
        ip("ip", "addr", "add", f"10.231.{subnet}.2/30", "dev", inside, netns=ns)
        ip("ip", "link", "set", inside, "up", netns=ns)
        ip("ip", "link", "set", "lo", "up", netns=ns)
        delay = f"{delay_ms:g}ms"
        added = ip("tc", "qdisc", "add", "dev", outside, "root", "netem", "delay", delay, check=False)
        if added.returncode != 0:
            print(f"  netem: {added.stderr.strip()} (this kernel has no netem): a delaying relay instead")
            yield None
            return
        ip("tc", "qdisc", "add", "dev", inside, "root", "netem", "delay", delay, netns=ns)
        yield ns, f"10.231.{subnet}.2"
    finally:
        ip("ip", "link", "del", outside, check=False)
        ip("ip", "netns", "del", ns, check=False)


def relay_main(host: str, port: int, target_port: int, delay_ms: float) -> None:
    """A TCP relay from host:port to 127.0.0.1:target_port holding each piece `delay_ms` in each direction: the
    round trip of a WAN for a kernel without netem. Runs in a process of its own (beside the timed clients)."""
    delay = delay_ms / 1000

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            with contextlib.suppress(OSError):
                while data := (piece := await queue.get())[1]:
                    await asyncio.sleep(max(0.0, piece[0] - time.monotonic()))
                    writer.write(data)
                    await writer.drain()
            writer.close()

        sender = asyncio.create_task(deliver())
        try:
            with contextlib.suppress(OSError):
                while data := await reader.read(1024 * 1024):
                    queue.put_nowait((time.monotonic() + delay, data))
        finally:
            queue.put_nowait((0.0, b""))  # the end, delivered after what is still held
            await sender

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        target_reader, target_writer = await asyncio.open_connection("127.0.0.1", target_port)
        with contextlib.suppress(OSError):
            await asyncio.gather(pipe(reader, target_writer), pipe(target_reader, writer))

    async def main() -> None:
        server = await asyncio.start_server(accept, host, port)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def start_relay(port: int, target_port: int, delay_ms: float) -> subprocess.Popen[bytes]:
    argv = [sys.executable, __file__, "--relay", "127.0.0.1", str(port), str(target_port), str(delay_ms)]
    process = subprocess.Popen(argv, start_new_session=True)
    wait_for_port("127.0.0.1", port, process, None)
    return process


# --- the clients --------------------------------------------------------------------------------------------------


def sftp_batches(server: Server, batches: list[str], ciphers: str | None = None) -> float:
    """OpenSSH's sftp client, one process per batch of commands, all at once; seconds until the last is done. Its
    default ciphers, or `ciphers` (mqjournal's order, for the like-for-like ratio)."""
    processes = []
    started = time.monotonic()
    chosen = ["-o", f"Ciphers={ciphers}"] if ciphers else []
    for batch in batches:
        argv = [
            "sftp", "-F", "none", "-q", "-b", "-", "-P", str(server.port), "-i", str(server.client_key),
            "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={server.known_hosts}",
            "-o", "GlobalKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes", *chosen, f"root@{server.address}",
        ]  # fmt: skip
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert process.stdin is not None
        process.stdin.write(batch.encode())
        process.stdin.close()
        processes.append(process)
    for process in processes:
        if process.wait() != 0:
            assert process.stderr is not None
            sys.exit(f"sftp failed: {process.stderr.read().decode().strip()}")
    return time.monotonic() - started


def sftp_get(server: Server, names: list[str], into: Path, ciphers: str | None = None) -> float:
    """Each save file by an sftp process of its own, all at once."""
    return sftp_batches(server, [f'get {save_file_path(LIBRARY, name)} "{into / name}"\n' for name in names], ciphers)


def sftp_get_extents(server: Server, names: list[str], into: Path, ciphers: str | None = None) -> float:
    """The extents one after another in one sftp session."""
    return sftp_batches(server, ["".join(f'get "{ACTIVE}/{name}" "{into / name}"\n' for name in names)], ciphers)


def session_for(server: Server, work: Path, *, openssh: bool) -> IbmiSession:
    connect = ssh_connector(
        address=server.address,
        port=server.port,
        user="root",
        key_file=server.client_key,
        host_key=server.host_key_line,
    )
    # Without the connector's OpenSSH description the download goes over the session's paramiko channel.
    factory = connect if openssh else (lambda: connect())
    return IbmiSession("bench", "ROOT", factory, audit=AuditLog(work / "audit.jsonl"))


def mqjournal_get(server: Server, names: list[str], into: Path, work: Path, *, openssh: bool = True) -> float:
    """download_save_file of each file into a BackupStore at `into`, one thread and session per file, all at once;
    seconds until the last is stored (verified, sidecar written)."""
    store = BackupStore(into)
    sessions = [session_for(server, work, openssh=openssh) for _ in names]
    errors: list[BaseException] = []

    def copy(session: IbmiSession, name: str) -> None:
        meta = SaveFileCopy(
            host="bench", qmgr="BENCH", qmgr_library="QMBENCH", save_file_library=LIBRARY, save_file=name, run_id="b"
        )
        try:
            download_save_file(session, LIBRARY, name, store, meta, via="direct")  # the bench measures SFTP itself
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=copy, args=pair) for pair in zip(sessions, names, strict=True)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - started
    for session in sessions:
        session.close()
    if errors:
        raise errors[0]
    return seconds


def check_copies(into: Path, names: list[str], digests: dict[str, str]) -> None:
    """Each file arrived once, byte for byte (untimed); a store's sidecars (*.json) aside."""
    found = {
        path.name.removeprefix(f"{LIBRARY}.").removesuffix(".savf"): path
        for path in into.rglob("*")
        if path.is_file() and not path.name.endswith(".json")
    }
    if sorted(found) != sorted(names):
        sys.exit(f"copied {sorted(found)}, not {sorted(names)}")
    for name, path in found.items():
        digest = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(8 * MIB):
                digest.update(chunk)
        if digest.hexdigest() != digests[name]:
            sys.exit(f"{path}: the copy's SHA-256 differs from the original's ({name})")


def mqjournal_archive(server: Server, names: list[str], into: Path, work: Path) -> float:
    """archive_extent of each extent in turn over one session, into an ExtentStore at `into` and a SQLite catalog of
    this copy's own; seconds until the last is recorded. Then, untimed, that the catalog holds every extent."""
    store = ExtentStore(into)
    with tempfile.TemporaryDirectory(prefix="catalog-", dir=work) as folder:
        catalog = Catalog(f"sqlite:///{folder}/catalog.db")
        session = session_for(server, work, openssh=True)
        try:
            started = time.monotonic()
            for name in names:
                archive_extent(
                    session, qmgr=QMGR, active=ACTIVE, extent=Extent.parse(name), run_id="b", store=store,
                    catalog=catalog,
                )  # fmt: skip
            seconds = time.monotonic() - started
        finally:
            session.close()
        recorded = sorted(copy.extent for copy in catalog.extent_copies(session.host, QMGR))
        catalog.engine.dispose()
    if recorded != sorted(names):
        sys.exit(f"the catalog records {recorded}, not {sorted(names)}")
    return seconds


# --- the run ------------------------------------------------------------------------------------------------------


def busy_cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (/proc/stat: every state but idle and iowait): the
    server's side shares these cores in this bench, so a copy's figure holds sshd's and the host digest's CPU too."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:8]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def timed(label: str, run: Callable[[Path], float], nbytes: int, scratch: Path, names: list[str],
          digests: dict[str, str], cpu: list[float]) -> float:  # fmt: skip
    into = Path(tempfile.mkdtemp(prefix="into-", dir=scratch))
    try:
        before = busy_cpu_seconds()
        seconds = run(into)
        used = busy_cpu_seconds() - before
        check_copies(into, names, digests)
    finally:
        shutil.rmtree(into)
    rate = nbytes / seconds / 1e6
    cpu.append(used)
    print(
        f"    {label:<34} {seconds:7.2f} s  {rate:7.1f} MB/s  {used:5.2f} CPU-s of the machine "
        f"({used / seconds:.2f} cores)"
    )
    return rate


def compare(sftp: Callable[[Path, str | None], float], mqjournal: Callable[[Path], float], nbytes: int,
            scratch: Path, names: list[str], digests: dict[str, str], repeats: int) -> dict[str, object]:  # fmt: skip
    """OpenSSH's sftp with its default ciphers, sftp with the ciphers mqjournal's client offers (sftpcopy.AES_FIRST on
    a CPU with AES instructions: the like-for-like baseline), and `mqjournal`, each copying `names` into the folder it
    is given, in turn, `repeats` times each."""
    same = sftpcopy.AES_FIRST if sftpcopy.aes_in_hardware() else None
    clients: dict[str, tuple[str, Callable[[Path], float]]] = {
        "sftp": ("OpenSSH sftp, its default ciphers", lambda into: sftp(into, None)),
        "sftp_same_ciphers": ("OpenSSH sftp, mqjournal's ciphers", lambda into: sftp(into, same)),
        "mqjournal": ("mqjournal", mqjournal),
    }
    rates: dict[str, list[float]] = {name: [] for name in clients}
    cpu: dict[str, list[float]] = {name: [] for name in clients}
    for _ in range(repeats):
        for name, (label, run) in clients.items():
            rates[name].append(timed(label, run, nbytes, scratch, names, digests, cpu[name]))
    print(f"    mqjournal's ciphers: {same or 'OpenSSH default'}")
    result: dict[str, object] = {"mqjournal_ciphers": same or "OpenSSH's default"}
    for name in clients:
        result[f"{name}_mb_s"] = rates[name]
        result[f"{name}_cpu_s"] = cpu[name]
    for baseline, suffix in (("sftp", ""), ("sftp_same_ciphers", "_same_ciphers")):
        result[f"ratio_best{suffix}"] = max(rates["mqjournal"]) / max(rates[baseline])
        result[f"ratio_median{suffix}"] = statistics.median(rates["mqjournal"]) / statistics.median(rates[baseline])
    return result


def print_ratio(result: dict[str, object]) -> None:
    print(
        f"    ratio mqjournal / sftp: {result['ratio_best']:.2f} (best of each), {result['ratio_median']:.2f} (median)"
    )
    print(
        f"    ratio mqjournal / sftp with mqjournal's ciphers (the like-for-like baseline): "
        f"{result['ratio_best_same_ciphers']:.2f} (best of each), {result['ratio_median_same_ciphers']:.2f} (median)"
    )


def measure(server: Server, work: Path, scratch: Path, names: list[str], sizes: dict[str, int],
            digests: dict[str, str], args: argparse.Namespace, paramiko: bool) -> dict[str, object]:  # fmt: skip
    nbytes = sum(sizes[n] for n in names)
    result: dict[str, object] = {"files": len(names), "mib_each": sizes[names[0]] // MIB}
    result |= compare(
        lambda into, ciphers: sftp_get(server, names, into, ciphers),
        lambda into: mqjournal_get(server, names, into, work),
        nbytes,
        scratch,
        names,
        digests,
        args.repeats,
    )
    if paramiko:
        result["paramiko_channel_mb_s"] = timed(
            "mqjournal, paramiko channel",
            lambda into: mqjournal_get(server, names, into, work, openssh=False),
            nbytes,
            scratch,
            names,
            digests,
            [],
        )
    print_ratio(result)
    return result


def measure_extents(server: Server, work: Path, scratch: Path, names: list[str], size: int,
                    digests: dict[str, str], args: argparse.Namespace) -> dict[str, object]:  # fmt: skip
    result: dict[str, object] = {"extents": len(names), "mib_each": size // MIB}
    result |= compare(
        lambda into, ciphers: sftp_get_extents(server, names, into, ciphers),
        lambda into: mqjournal_archive(server, names, into, work),
        size * len(names),
        scratch,
        names,
        digests,
        args.repeats,
    )
    print_ratio(result)
    return result


@contextlib.contextmanager
def serve(work: Path, link: str, rtt: float, host_key_line: str, client_key: Path) -> Iterator[tuple[Server, str]]:
    """The bench's sshd on loopback, or behind `rtt` ms of round trip (netem, else the relay); yields the server as
    the clients reach it and how the round trip is made. Stops what it started."""
    with contextlib.ExitStack() as stack:
        address, port, how = "127.0.0.1", free_port(), "loopback"
        netns = None
        if rtt:
            made = stack.enter_context(netem_link(rtt / 2))
            if made is not None:
                netns, address = made
                port, how = 22_222, f"netem {rtt / 2:g} ms each way"
        stack.callback(stop, start_sshd(work, DATA_FOLDER, address, port, netns))
        if rtt and netns is None:
            relay_port = free_port()
            stack.callback(stop, start_relay(relay_port, port, rtt / 2))
            port, how = relay_port, f"relay process, {rtt / 2:g} ms each way (no netem)"
        known_hosts = work / f"known_hosts-{link}"
        name = address if port == 22 else f"[{address}]:{port}"
        known_hosts.write_text(f"{name} {host_key_line}\n")
        yield Server(address, port, host_key_line, known_hosts, client_key), how


Cases = Callable[[Server], dict[str, object]]
"""What is measured on one link, by name: each case's result for the JSON line."""


def save_file_cases(args: argparse.Namespace, work: Path, scratch: Path) -> Cases:
    several = [f"PAR{i}" for i in range(1, args.parallel + 1)]
    sizes = {"BIG": args.size_mib * MIB} | dict.fromkeys(several, args.parallel_size_mib * MIB)
    print(f"writing the save files under {DATA_FOLDER} ...")
    digests = write_save_files(DATA_FOLDER, sizes)
    install_programs(DATA_FOLDER, PARTITION_PROGRAMS)
    hostdigest.save_file_contents = object_list_round_trip  # type: ignore[assignment]

    def cases(server: Server) -> dict[str, object]:
        print(f"  one save file of {args.size_mib} MiB")
        one = measure(server, work, scratch, ["BIG"], sizes, digests, args, paramiko=not args.no_paramiko)
        print(f"  {args.parallel} save files of {args.parallel_size_mib} MiB at once")
        many = measure(server, work, scratch, several, sizes, digests, args, paramiko=False)
        return {"one": one, "parallel": many}

    return cases


def extent_cases(args: argparse.Namespace, work: Path, scratch: Path) -> Cases:
    names, size = extent_names(args.extents), args.extent_mib * MIB
    print(f"writing the log extents under {DATA_FOLDER / ACTIVE.lstrip('/')} ...")
    digests = write_extents(DATA_FOLDER, names, size)
    install_programs(DATA_FOLDER, LINUX_HOST_PROGRAMS)

    def cases(server: Server) -> dict[str, object]:
        print(f"  {args.extents} log extents of {args.extent_mib} MiB, one after another")
        return {"archive": measure_extents(server, work, scratch, names, size, digests, args)}

    return cases


def main() -> None:
    args = arguments()
    if args.relay:
        host, port, target, delay = args.relay
        relay_main(host, int(port), int(target), float(delay))
        return
    check_tools()
    work = Path(tempfile.mkdtemp(prefix="mqjournal-copy-bench-"))
    scratch = Path(tempfile.mkdtemp(prefix="mqjournal-copy-bench-into-"))
    DATA_FOLDER.mkdir(mode=0o755, exist_ok=True)
    made_privsep = not Path("/run/sshd").exists()
    if made_privsep:
        Path("/run/sshd").mkdir(mode=0o755)  # sshd's privilege separation folder, which Debian's unit makes
    results: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d"),
        "cores": os.cpu_count(),
        "ssh": ssh_version(),
        "mode": "linux log extents" if args.linux else "save files",
    }
    try:
        cases = (extent_cases if args.linux else save_file_cases)(args, work, scratch)
        _host_key, client_key, host_key_line = make_keys(work)
        links: list[tuple[str, float]] = [("loopback", 0.0)] + ([("rtt", args.rtt_ms)] if args.rtt_ms else [])
        for link, rtt in links:
            with serve(work, link, rtt, host_key_line, client_key) as (server, how):
                print(f"\n{link} ({how}), sshd {server.address}:{server.port}")
                results[link] = {"how": how} | cases(server)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
        if not args.keep_data:
            shutil.rmtree(DATA_FOLDER, ignore_errors=True)
        if made_privsep:
            with contextlib.suppress(OSError):
                Path("/run/sshd").rmdir()
    print(json.dumps(results))


def ssh_version() -> str:
    return subprocess.run(["ssh", "-V"], capture_output=True, text=True).stderr.strip()


if __name__ == "__main__":
    main()
