"""The suite's layout over pytest-xdist's workers holds: `make test` relies on --dist loadgroup keeping each end-to-end
module in one worker (its module-scoped driver run happens once) and the two `airflow standalone` tests in one worker
(they take turns). pytest 9.2 moved node ids to a form xdist 3.8 no longer tags with the group, and every group
silently split: each driver ran twice and both standalone tests ran at once, which doubled the e2e tier's time and
failed the browser test on its timeout. This runs tests/conftest.py's hook in a small pytest session of its own."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

MODULE = """
import pytest
pytestmark = [pytest.mark.e2e{extra}]
{tests}
"""


def test_each_e2e_module_and_each_named_group_runs_in_one_worker(tmp_path: Path):
    # The repository's conftest as it is (its hook is the thing under test), with its imports of mqjournal working.
    (tmp_path / "conftest.py").write_text(CONFTEST.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    e2e\n    xdist_group(name)\n", encoding="utf-8")
    tests = "\n".join(f"def test_{i}():\n    pass\n" for i in range(8))
    (tmp_path / "test_driver_a.py").write_text(MODULE.format(extra="", tests=tests), encoding="utf-8")
    (tmp_path / "test_driver_b.py").write_text(MODULE.format(extra="", tests=tests), encoding="utf-8")
    group = ', pytest.mark.xdist_group("standalone")'
    (tmp_path / "test_standalone_1.py").write_text(MODULE.format(extra=group, tests=tests), encoding="utf-8")
    (tmp_path / "test_standalone_2.py").write_text(MODULE.format(extra=group, tests=tests), encoding="utf-8")

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "e2e", "-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    workers: dict[str, set[str]] = defaultdict(set)
    for worker, module in re.findall(r"^\[(gw\d+)\].*PASSED (test_\w+)\.py::", done.stdout, re.M):
        workers["standalone" if module.startswith("test_standalone") else module].add(worker)
    assert set(workers) == {"test_driver_a", "test_driver_b", "standalone"}, done.stdout[-3000:]
    split = {unit: sorted(names) for unit, names in workers.items() if len(names) > 1}
    assert not split, f"units of work split across xdist workers: {split}\n{done.stdout[-3000:]}"


def test_the_queue_starts_with_airflow_standalone_then_the_other_end_to_end_units_then_the_long_tests(tmp_path: Path):
    (tmp_path / "conftest.py").write_text(CONFTEST.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    e2e\n    long\n    xdist_group(name)\n", encoding="utf-8"
    )
    short = "import pytest\n\ndef test_short_1():\n    pass\n\ndef test_short_2():\n    pass\n"
    long = "import pytest\n\n@pytest.mark.long\ndef test_long():\n    pass\n"
    tests = "\n".join(f"def test_{i}():\n    pass\n" for i in range(2))
    # File names in the order pytest collects them, the reverse of the queue's.
    (tmp_path / "test_a_short.py").write_text(short, encoding="utf-8")
    (tmp_path / "test_b_long.py").write_text(long, encoding="utf-8")
    (tmp_path / "test_c_driver.py").write_text(MODULE.format(extra="", tests=tests), encoding="utf-8")
    group = ', pytest.mark.xdist_group("airflow_standalone")'
    (tmp_path / "test_d_standalone.py").write_text(MODULE.format(extra=group, tests=tests), encoding="utf-8")

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    modules = [line.split("::")[0] for line in done.stdout.splitlines() if "::" in line]
    order = list(dict.fromkeys(modules))
    assert order == ["test_d_standalone.py", "test_c_driver.py", "test_b_long.py", "test_a_short.py"], done.stdout
