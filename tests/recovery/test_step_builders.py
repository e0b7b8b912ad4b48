"""Every recovery step action has its command builder, and a plan's stored action names the builder it runs."""

from __future__ import annotations

from mqjournal.recovery.plan import BUILDERS, Action


def test_every_step_action_has_a_command_builder():
    assert set(BUILDERS) == set(Action)


def test_an_action_is_named_after_its_builder():
    # Plans travel as JSON (XCom, plan files): the action's value is what an earlier plan recorded.
    assert all(build.__name__ == action.value for action, build in BUILDERS.items())
