"""Every recovery step action has its command builder, or is run by the executor itself (and shows as a line), and a
plan's stored action names the builder it runs."""

from __future__ import annotations

import pytest

from mqjournal.recovery.plan import BUILDERS, RUN_BY_THE_EXECUTOR, Action, step


def test_every_step_action_has_a_command_builder_or_is_run_by_the_executor():
    assert set(BUILDERS) | set(RUN_BY_THE_EXECUTOR) == set(Action)
    assert not set(BUILDERS) & set(RUN_BY_THE_EXECUTOR)


def test_an_action_is_named_after_its_builder():
    # Plans travel as JSON (XCom, plan files): the action's value is what an earlier plan recorded.
    assert all(build.__name__ == action.value for action, build in BUILDERS.items())


def test_an_upload_from_the_store_shows_its_transfer_and_is_no_command():
    upload = step(
        Action.UPLOAD_SAVE_FILE,
        "why",
        origin="MQSAVES/TEST327A",
        key="ibmi1/TEST/r/QGPL.TEST327A.savf",
        library="QGPL",
        name="TEST327A",
    )
    assert upload.text.startswith("SFTP PUT /QSYS.LIB/QGPL.LIB/TEST327A.FILE from the backup store object ibmi1/")
    with pytest.raises(TypeError, match="run by the recovery executor itself"):
        upload.command()


def test_the_check_of_an_upload_shows_the_object_list_it_reads():
    check = step(Action.CHECK_SAVE_FILE, "why", library="QGPL", name="TEST327A", objects="QMTEST/AMQA000001")
    assert "QSYS2.SAVE_FILE_OBJECTS(SAVE_FILE => 'TEST327A', SAVE_FILE_LIBRARY => 'QGPL'" in check.text
    assert check.text.endswith("must list QMTEST/AMQA000001")
