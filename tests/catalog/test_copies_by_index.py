"""The stored objects holding a receiver are found through the index of their receivers (stored_object_receivers,
migration 0005), and a catalog migrated from before it finds the copies it already had."""

from __future__ import annotations

import io
import json

from sqlalchemy import create_engine, event

from mqjournal import migrations
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog, _Stored
from tests.backupstore.saves import SAVE_FILE_BYTES, receiver_saves, save_file_copy
from tests.catalog.databases import schema_revision


def _key(save):
    return (save.library, save.receiver, save.attached_at)


def test_the_copies_of_many_receivers_are_read_through_the_receiver_index(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    store = BackupStore(tmp_path / "backups")
    saves = receiver_saves("MQJ0001", 1, 3)
    catalog.record_stored(store.put(io.BytesIO(SAVE_FILE_BYTES), save_file_copy(saves)))
    plans: list[str] = []

    def explain(connection, cursor, statement, parameters, context, executemany) -> None:
        if "stored_objects" in statement and statement.lstrip().upper().startswith("SELECT"):
            rows = connection.connection.dbapi_connection.execute(f"EXPLAIN QUERY PLAN {statement}", parameters)
            plans.append(" / ".join(row[-1] for row in rows))

    event.listen(catalog.engine, "before_cursor_execute", explain)
    found = catalog.off_partition_copies_of_each("prod1", [_key(s) for s in saves])

    assert [len(copies) for copies in found.values()] == [1, 1, 1]
    (plan,) = plans
    assert "USING INDEX ix_stored_object_receivers_host_receiver" in plan, plan
    assert "SCAN stored_objects" not in plan, plan


def test_a_catalog_migrated_from_before_the_receiver_index_finds_the_copies_it_had(empty_database, tmp_path):
    engine = create_engine(empty_database)
    migrations.upgrade(engine, to="0003_host_sha256")
    store = BackupStore(tmp_path / "backups")
    first, again = receiver_saves("MQJ0001", 1, 3), receiver_saves("MQJ0002", 3, 2)  # AMQA000003 in both
    with engine.begin() as connection:  # stored objects catalogued at revision 0003, as record_stored wrote them
        for saves in (first, again):
            stored = store.put(io.BytesIO(SAVE_FILE_BYTES), save_file_copy(saves))
            objects = [o.model_dump(mode="json") for o in stored.objects]
            row = stored.model_dump(exclude={"objects", "sidecar"}) | {"objects": json.dumps(objects)}
            connection.execute(_Stored.__table__.insert().values(**row))
    engine.dispose()

    catalog = Catalog(empty_database)

    assert schema_revision(empty_database) == {migrations.head()}
    found = catalog.off_partition_copies_of_each("prod1", [_key(s) for s in first + again])
    assert [[c.save_file for c in copies] for copies in found.values()] == [
        ["MQJ0001"],
        ["MQJ0001"],
        ["MQJ0002", "MQJ0001"],
        ["MQJ0002"],
    ]
    assert found == {key: catalog.off_partition_copies("prod1", *key) for key in found}
