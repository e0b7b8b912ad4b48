"""Journal sequence numbers as far as IBM i counts them (RCVSIZOPT(*MAXOPT3): 18 446 744 073 709 551 600, past
2**63), exact on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from mqjournal.catalog import MAX_SEQUENCE_NUMBER, Catalog, CatalogUnavailable, _Save
from tests.catalog.databases import save_with_sequences


def test_the_figure_is_the_one_ibm_documents():
    assert MAX_SEQUENCE_NUMBER == 18_446_744_073_709_551_600 > 2**63


def test_a_receiver_at_the_last_sequence_number_a_journal_reaches_reads_back_exactly(empty_database):
    catalog = Catalog(empty_database)
    catalog.record_save(save_with_sequences(MAX_SEQUENCE_NUMBER - 10, MAX_SEQUENCE_NUMBER))

    (save,) = catalog.saves_for("prod1", "QMPAYROLL")
    (receiver,) = catalog.receivers("prod1", "QMPAYROLL")
    assert (save.first_sequence, save.last_sequence) == (18446744073709551590, 18446744073709551600)
    assert (receiver.first_sequence, receiver.last_sequence) == (18446744073709551590, 18446744073709551600)
    assert type(save.last_sequence) is int
    catalog.engine.dispose()


def test_sequence_numbers_compare_in_sql_as_numbers(empty_database):
    # On SQLite they are text: zero-padded, '10' sorts after '9' as 10 after 9.
    catalog = Catalog(empty_database)
    for receiver, last in [("AMQA000001", 9), ("AMQA000002", 10), ("AMQA000003", MAX_SEQUENCE_NUMBER)]:
        catalog.record_save(save_with_sequences(1, last, receiver=receiver))
    with Session(catalog.engine) as session:
        ordered = session.scalars(select(_Save.last_sequence).order_by(_Save.last_sequence)).all()
        above_9 = session.scalars(select(_Save.last_sequence).where(_Save.last_sequence > 9)).all()
    assert ordered == [9, 10, MAX_SEQUENCE_NUMBER]
    assert sorted(above_9) == [10, MAX_SEQUENCE_NUMBER]
    catalog.engine.dispose()


@pytest.mark.parametrize("wrong", [-1, 10**20])
def test_a_number_no_journal_has_is_not_recorded(tmp_path, wrong):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    with pytest.raises(CatalogUnavailable, match="a journal sequence number is from 0 to 18446744073709551600"):
        catalog.record_save(save_with_sequences(1, wrong))
    assert catalog.saves_for("prod1", "QMPAYROLL") == []
