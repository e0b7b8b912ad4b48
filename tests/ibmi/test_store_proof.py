"""A stored copy counts as the backup to delete against only when it is proven now (issue #28): its bytes re-read
right before the delete, and, for a copy a rebuild recorded from its sidecar, its bytes matched with the host's
save file first."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

from sqlalchemy import text

from mqjournal.backupstore import rebuild_catalog
from mqjournal.catalog import Catalog
from mqjournal.policy import Policy
from tests.ibmi.executing import planned, receivers_on_host


def _store_file(executor, key: str) -> Path:
    return Path(executor.store.root) / key


def _deletable_after_a_save(executor):
    to_save, to_delete = planned(executor)
    saved = executor.save(to_save, save_library="QGPL")
    (save_file,), (key,) = saved.save_files, saved.copied
    return to_save, to_delete, save_file, key


def _rebuilt(executor, tmp_path):
    """The executor with its catalog lost and rebuilt from the backup store alone."""
    catalog = Catalog(f"sqlite:///{tmp_path / 'rebuilt.db'}")
    rebuild_catalog(executor.store, catalog)
    return replace(executor, catalog=catalog)


def _forge(executor, key: str, data: bytes) -> None:
    """The stored object replaced by `data`, its sidecar rewritten to match: the sidecar's SHA-256 is right, and it
    still lists the receivers the original save file held."""
    path = _store_file(executor, key)
    path.write_bytes(data)
    sidecar = json.loads(Path(f"{path}.json").read_text())
    sidecar |= {"size_bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    Path(f"{path}.json").write_text(json.dumps(sidecar))


def test_a_stored_copy_overwritten_with_zeros_of_its_size_proves_nothing(sim_fleet, executor):
    _, to_delete, _, key = _deletable_after_a_save(executor)
    path = _store_file(executor, key)
    path.write_bytes(bytes(path.stat().st_size))

    result = executor.delete(to_delete, policy=Policy())

    assert result.deleted == []
    assert set(to_delete) <= set(receivers_on_host(sim_fleet))


def test_a_stored_copy_with_one_flipped_byte_proves_nothing_with_the_host_copy_gone(sim_fleet, executor):
    _, to_delete, save_file, key = _deletable_after_a_save(executor)
    path = _store_file(executor, key)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    assert sim_fleet.connect().cl(f"DLTF FILE({save_file})")[0] == 0

    result = executor.delete(to_delete, policy=Policy())

    assert result.deleted == []
    assert set(to_delete) <= set(receivers_on_host(sim_fleet))


def test_after_a_rebuild_a_forged_sidecar_makes_no_receiver_deletable(sim_fleet, executor, tmp_path):
    _, to_delete, save_file, key = _deletable_after_a_save(executor)
    _forge(executor, key, b"\0" * 528 * 4)  # right SHA-256 in the sidecar, none of the receivers in the bytes
    assert sim_fleet.connect().cl(f"DLTF FILE({save_file})")[0] == 0
    rebuilt = _rebuilt(executor, tmp_path)

    result = rebuilt.delete(to_delete, policy=Policy())

    assert result.deleted == []
    assert set(to_delete) <= set(receivers_on_host(sim_fleet))
    (copy,) = rebuilt.catalog.stored_copies(executor.store.url)
    assert copy.proof == "claimed_by_sidecar" and not copy.proves


def test_after_a_rebuild_a_true_sidecar_proves_nothing_until_matched_with_the_host(sim_fleet, executor, tmp_path):
    to_save, to_delete, _, key = _deletable_after_a_save(executor)
    rebuilt = _rebuilt(executor, tmp_path)

    kept = rebuilt.delete(to_delete, policy=Policy())
    assert kept.deleted == [] and set(to_delete) <= set(receivers_on_host(sim_fleet))

    matched = rebuilt.save(to_save, save_library="QGPL")  # finds the host's save file, matches the claimed copy

    assert matched.copied == [key] and matched.not_copied == [] and matched.saved == []
    (copy,) = rebuilt.catalog.stored_copies(executor.store.url)
    assert copy.proof == "host_save_file" and copy.proves and copy.checked_at is not None
    assert rebuilt.delete(to_delete, policy=Policy()).deleted == to_delete


def test_a_claimed_copy_whose_bytes_are_not_the_host_save_file_stays_unproven(sim_fleet, executor, tmp_path):
    to_save, to_delete, save_file, key = _deletable_after_a_save(executor)
    _forge(executor, key, b"\0" * 528 * 4)
    rebuilt = _rebuilt(executor, tmp_path)

    again = rebuilt.save(to_save, save_library="QGPL")

    assert again.copied == []
    ((path, why),) = again.not_copied
    assert path == save_file and "are not the host's" in why and "proves no save" in why
    (copy,) = rebuilt.catalog.stored_copies(executor.store.url)
    assert copy.proof == "claimed_by_sidecar"
    assert rebuilt.delete(to_delete, policy=Policy()).deleted == []
    assert set(to_delete) <= set(receivers_on_host(sim_fleet))


def test_a_copy_made_before_copies_were_vouched_for_counts_once_the_host_s_digest_matches_it(sim_fleet, executor):
    # A catalog and store upgraded from before the host's digest (migration 0003_host_sha256): the copy's row and
    # sidecar have no host digest, so nothing is deleted on its account until the save step vouches for it.
    to_save, to_delete, _, key = _deletable_after_a_save(executor)
    with executor.catalog.engine.begin() as connection:
        connection.execute(text("UPDATE stored_objects SET host_sha256 = NULL"))
    sidecar = Path(f"{_store_file(executor, key)}.json")
    sidecar.write_text(json.dumps({k: v for k, v in json.loads(sidecar.read_text()).items() if k != "host_sha256"}))
    assert executor.delete(to_delete, policy=Policy()).deleted == []

    vouched = executor.save(to_save, save_library="QGPL")

    assert vouched.copied == [key] and vouched.not_copied == [] and vouched.saved == []
    (copy,) = executor.catalog.stored_copies(executor.store.url)
    assert copy.proof == "host_save_file" and copy.proves
    assert executor.delete(to_delete, policy=Policy()).deleted == to_delete
