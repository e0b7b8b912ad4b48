"""The conformance corpus: real IBM i output from public sources (fixtures/), described by manifest.json.

Each manifest entry names its fixture file, the stream it was (stdout or stderr), the exit status when the source
shows it, what a reader must get out of it (rows, CLI error fields, messages), where it was published and how the
file was made from the published text. Nothing in fixtures/ is invented; see manifest.json's `reconstructed`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
MANIFEST = HERE / "manifest.json"


@dataclass(frozen=True)
class Capture:
    entry: dict[str, Any]

    @property
    def file(self) -> str:
        return self.entry["file"]

    @property
    def kind(self) -> str:
        return self.entry["kind"]

    @property
    def text(self) -> str:
        return (FIXTURES / self.file).read_text(encoding="utf-8")

    @property
    def stdout(self) -> str:
        """What the command wrote to stdout ("" when the source shows an empty stream or does not show it)."""
        return self.text if self.entry["stream"] == "stdout" else (self.entry.get("stdout") or "")

    @property
    def stderr(self) -> str:
        return self.text if self.entry["stream"] == "stderr" else (self.entry.get("stderr") or "")

    def __str__(self) -> str:  # pytest ids
        return self.file


def captures(kind: str | None = None) -> list[Capture]:
    entries = json.loads(MANIFEST.read_text(encoding="utf-8"))["fixtures"]
    return [Capture(e) for e in entries if kind is None or e["kind"] == kind]
