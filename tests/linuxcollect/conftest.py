"""The Linux tests' fleet: an IBM i partition beside a Linux host with an Archive and a Manual queue manager."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SimFleet, serve
from tests.linuxcollect.fleet import mixed_fleet


@pytest.fixture
def mixed(tmp_path: Path) -> Iterator[SimFleet]:
    with serve(mixed_fleet(tmp_path)) as fleet:
        yield fleet
