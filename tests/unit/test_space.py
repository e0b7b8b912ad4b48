"""Space on the ASP (mqjournal.space): the save file a save of receivers is expected to make, by DTACPR value, and
net space, the one computation the approval gate and the run report share (issue #28)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mqjournal.ibmi import commands
from mqjournal.policy import Policy
from mqjournal.space import DATA_COMPRESSION_VALUES, EXPECTED_RATIO, estimated_save_file_bytes, net_bytes


def test_no_compression_expects_a_save_file_as_large_as_its_receivers():
    assert estimated_save_file_bytes(100 * 2**20, "*NO") == 100 * 2**20


def test_more_compression_expects_a_smaller_save_file():
    sizes = [estimated_save_file_bytes(10**9, v) for v in ("*NO", "*LOW", "*MEDIUM", "*HIGH")]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 4


def test_yes_to_a_save_file_is_low_compression():
    assert EXPECTED_RATIO["*YES"] == EXPECTED_RATIO["*LOW"]


def test_a_measured_ratio_replaces_the_expected_one():
    assert Policy(save_compression="*LOW", save_compression_ratio=0.3).estimated_save_file_bytes(1000) == 300
    assert Policy(save_compression="*HIGH").estimated_save_file_bytes(1000) == round(1000 * EXPECTED_RATIO["*HIGH"])


def test_a_value_ibm_i_does_not_offer_is_refused():
    with pytest.raises(ValueError, match="DTACPR"):
        estimated_save_file_bytes(1000, "*MAX")
    with pytest.raises(ValidationError, match="save_compression"):
        Policy.model_validate({"save_compression": "*ZIP"})
    with pytest.raises(ValidationError, match="save_compression_ratio"):
        Policy.model_validate({"save_compression_ratio": 0})


def test_net_is_what_the_deletes_free_less_the_save_files_written():
    assert net_bytes(300, 100) == 200
    assert net_bytes(0, 100) == -100  # a run that only saves grows the ASP until the cleanup


@pytest.mark.parametrize("value", DATA_COMPRESSION_VALUES)
def test_savobj_carries_the_policys_compression(value):
    text = commands.save_receivers("QMTEST", ["AMQA000001"], "QGPL", "PAYRO327A", compression=value).text
    assert f" UPDHST(*YES) DTACPR({value})" in text


def test_savobj_is_not_built_from_a_compression_that_is_not_a_dtacpr_value():
    with pytest.raises(ValueError, match="DTACPR"):
        commands.save_receivers("QMTEST", ["AMQA000001"], "QGPL", "PAYRO327A", compression="*LOW) DLTLIB(QMTEST")
