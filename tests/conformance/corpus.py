"""The conformance corpus: real IBM i output from public sources (fixtures/), described by manifest.json, and the
captures admins bring home with `mqjournal doctor --capture` (captures/<name>/.../manifest.json, each with its own
fixtures/ beside it).

Each manifest entry names its fixture file, the stream it was (stdout or stderr), the exit status when the source
shows it, what a reader must get out of it (rows, CLI error fields, messages), where it was published and how the
file was made from the published text. Nothing in fixtures/ is invented; see manifest.json's `reconstructed`.

A capture folder is found wherever it is dropped under captures/ (or under the folder $MQJOURNAL_CAPTURES names, for
a capture not yet committed): its entries join the same lists, so every test over the corpus runs on them too.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
MANIFEST = HERE / "manifest.json"
CAPTURES = HERE / "captures"
CAPTURES_ENV = "MQJOURNAL_CAPTURES"


@dataclass(frozen=True)
class Capture:
    entry: dict[str, Any]
    fixtures: Path = FIXTURES
    manifest: Path = MANIFEST

    @property
    def file(self) -> str:
        return self.entry["file"]

    @property
    def kind(self) -> str:
        return self.entry["kind"]

    @property
    def text(self) -> str:
        return (self.fixtures / self.file).read_text(encoding="utf-8")

    @property
    def stdout(self) -> str:
        """What the command wrote to stdout ("" when the source shows an empty stream or does not show it)."""
        return self.text if self.entry["stream"] == "stdout" else (self.entry.get("stdout") or "")

    @property
    def stderr(self) -> str:
        return self.text if self.entry["stream"] == "stderr" else (self.entry.get("stderr") or "")

    @property
    def captured(self) -> bool:
        """Made by `mqjournal doctor --capture` (a folder under captures/), not taken from a public source."""
        return self.manifest != MANIFEST

    def header(self) -> dict[str, Any]:
        """The capture folder's manifest without its entries: the partition's release, PTF groups, job, user."""
        data = json.loads(self.manifest.read_text(encoding="utf-8"))
        return {k: v for k, v in data.items() if k != "fixtures"}

    def __str__(self) -> str:  # pytest ids
        if not self.captured:
            return self.file
        return f"{self.manifest.parent.name}/{self.file}"


def capture_manifests() -> list[Path]:
    roots = [CAPTURES, *([Path(os.environ[CAPTURES_ENV])] if os.environ.get(CAPTURES_ENV) else [])]
    return sorted(m for root in roots if root.is_dir() for m in root.rglob("manifest.json"))


def _load(manifest: Path, fixtures: Path) -> list[Capture]:
    entries = json.loads(manifest.read_text(encoding="utf-8"))["fixtures"]
    return [Capture(e, fixtures, manifest) for e in entries]


def captures(kind: str | None = None, *, public_only: bool = False) -> list[Capture]:
    every = _load(MANIFEST, FIXTURES)
    if not public_only:
        for manifest in capture_manifests():
            every += _load(manifest, manifest.parent / "fixtures")
    return [c for c in every if kind is None or c.kind == kind]
