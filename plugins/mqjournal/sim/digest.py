"""The PASE programs that digest a file, as a partition has them: `openssl dgst` and GNU `sha256sum`.

Which are there is the fleet file's `system.digest_programs` (a real partition tells by answering or not): by default
/QOpenSys/usr/bin/openssl, which IBM's 5733-SC1 (IBM Portable Utilities: OpenSSH, OpenSSL, zlib for PASE) installs
with the sshd the client signs on through; /QOpenSys/pkgs/bin/openssl and /QOpenSys/pkgs/bin/sha256sum come from the
open-source RPMs (openssl, coreutils-gnu). A program that is not there is the shell's "not found" (exit 127).

Their answers (OpenSSL's `openssl dgst` manual page, GNU coreutils' `sha256sum` manual):
- ``openssl dgst -sha256 -r FILE``: ``<64 hex> *FILE`` (the "coreutils" format, '*' for binary mode); without -r,
  ``SHA256(FILE)= <hex>`` from OpenSSL 1.x (5733-SC1) and ``SHA2-256(FILE)= <hex>`` from OpenSSL 3 (the RPM);
  a file it cannot open: ``Can't open FILE for reading, <strerror>`` and an error-stack line on stderr, exit 1
  (the error-stack line's codes are OpenSSL 1.1.1's; ASSUMED for the IBM i builds, the client reads none of it).
- ``sha256sum FILE``: ``<64 hex>  FILE`` (two blanks: binary and text mode are the same on POSIX systems); a file it
  cannot open: ``sha256sum: FILE: <strerror>`` on stderr, exit 1.
What a save file's stream holds is what an SFTP download of it gets (`qsyslib.read_save_file`, the same authority
rules); a stream file `cp` made of one holds the same bytes (`streamfiles`).
"""

from __future__ import annotations

import hashlib

from mqjournal.sim.model import Partition
from mqjournal.sim.protocol import ExecResult
from mqjournal.sim.streamfiles import file_image

OPENSSL = "/QOpenSys/usr/bin/openssl"
OPENSSL_RPM = "/QOpenSys/pkgs/bin/openssl"
SHA256SUM = "/QOpenSys/pkgs/bin/sha256sum"
PROGRAMS = (OPENSSL, OPENSSL_RPM, SHA256SUM)


def _sha256(partition: Partition, path: str) -> str:
    if path == "/dev/null":
        return hashlib.sha256().hexdigest()
    return file_image(partition, path).sha256()


def _strerror(exc: OSError) -> str:
    return exc.strerror or str(exc)


def openssl(partition: Partition, program: str, args: list[str]) -> ExecResult:
    """`openssl dgst -sha256 [-r] FILE...` (only the digest this client asks for; any other use is refused as
    OpenSSL refuses an unknown option)."""
    if not args or args[0] != "dgst":
        return ExecResult(1, "", f"Invalid command '{args[0] if args else ''}'; type \"help\" for a list.\n")
    options = [a for a in args[1:] if a.startswith("-")]
    files = [a for a in args[1:] if not a.startswith("-")]
    if "-sha256" not in options or set(options) - {"-sha256", "-r"} or not files:
        return ExecResult(1, "", f"dgst: Unrecognized flag {next(iter(set(options) - {'-sha256', '-r'}), '')}\n")
    out, err, status = [], [], 0
    for path in files:
        try:
            digest = _sha256(partition, path)
        except OSError as exc:
            err.append(f"Can't open {path} for reading, {_strerror(exc)}\n")
            err.append(
                f"0:error:02001002:system library:fopen:{_strerror(exc)}:crypto/bio/bss_file.c:69:"
                f"fopen('{path}','rb')\n"
            )
            status = 1
            continue
        if "-r" in options:
            out.append(f"{digest} *{path}\n")
        else:
            name = "SHA2-256" if program == OPENSSL_RPM else "SHA256"
            out.append(f"{name}({path})= {digest}\n")
    return ExecResult(status, "".join(out), "".join(err))


def sha256sum(partition: Partition, args: list[str]) -> ExecResult:
    out, err, status = [], [], 0
    for path in args:
        try:
            digest = _sha256(partition, path)
        except OSError as exc:
            err.append(f"sha256sum: {path}: {_strerror(exc)}\n")
            status = 1
            continue
        out.append(f"{digest}  {path}\n")
    return ExecResult(status, "".join(out), "".join(err))
