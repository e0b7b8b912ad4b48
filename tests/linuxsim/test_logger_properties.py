"""Whatever happens to a linear log, its points stay at or behind CURRLOG and MQ reuses only what the planner's own
rule (`linuxmq.extents.fate`) says neither restart nor media recovery needs."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from mqjournal.errors import InvalidName
from mqjournal.linuxmq.extents import EXTENT_NUMBERS, Extent, Fate, LogManagement, LogPoints, fate
from mqjournal.linuxsim import logger

from .conftest import EXTENT, T0, starting_at

extent_names = st.builds(lambda n: Extent(n).name, st.integers(0, 40).map(lambda n: (n - 8) % EXTENT_NUMBERS))
steps = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.integers(0, 3 * EXTENT)),
        st.tuples(st.just("checkpoint"), st.none()),
        st.tuples(st.just("images"), st.sampled_from(["*", "APP.*", "TO.PARTNER", "QM1"])),
        st.tuples(st.just("open"), st.sampled_from(["u1", "u2"])),
        st.tuples(st.just("close"), st.sampled_from(["u1", "u2"])),
        st.tuples(st.just("damage"), st.sampled_from(["APP.QUEUE", "TO.PARTNER"])),
        st.tuples(st.just("recreate"), st.sampled_from(["APP.QUEUE", "TO.PARTNER"])),
        st.tuples(st.just("archived"), extent_names),
        st.tuples(st.just("archlog"), extent_names),
        st.tuples(st.just("advance"), st.none()),
        st.tuples(st.just("rm"), extent_names),
    ),
    max_size=40,
)


def apply(qm, step: str, arg) -> None:
    actions = {
        "write": lambda: logger.write(qm, arg, at=T0),
        "checkpoint": lambda: logger.checkpoint(qm),
        "images": lambda: logger.record_media_images(qm, arg, at=T0),
        "open": lambda: logger.open_unit_of_work(qm, arg),
        "close": lambda: logger.end_unit_of_work(qm, arg),
        "damage": lambda: logger.damage(qm, arg),
        "recreate": lambda: logger.recreate_objects(qm, "all", arg),
        "archived": lambda: logger.set_log_archived(qm, arg),
        "archlog": lambda: logger.reset_archlog(qm, arg),
        "advance": lambda: logger.advance_log(qm, at=T0),
        "rm": lambda: logger.remove_extent(qm, arg),
    }
    with contextlib.suppress(logger.LoggerError, InvalidName):  # refused, as MQ or Linux would: the state must hold
        actions[step]()


@settings(max_examples=300, deadline=None)
@given(
    management=st.sampled_from(list(LogManagement)),
    first=st.sampled_from([0, EXTENT_NUMBERS - 3]),
    sequence=steps,
)
def test_points_never_pass_currlog_and_only_unneeded_extents_become_reusable(management, first, sequence):
    qm = starting_at(management, first)
    for step, arg in sequence:
        apply(qm, step, arg)
        # LogPoints refuses a RECLOG or MEDIALOG after CURRLOG (or an R extent as a point): the planner's own check.
        points = LogPoints(Extent(qm.current), Extent(qm.restart), Extent(qm.media))
        assert qm.extent(qm.current) is not None
        for extent in qm.extents.values():
            if not extent.reusable:
                continue
            assert management is not LogManagement.MANUAL
            assert fate(Extent(extent.number), points, LogManagement.ARCHIVE) is not Fate.NEEDED
            assert fate(Extent(extent.number), points, LogManagement.ARCHIVE) is Fate.RELEASABLE
            if management is LogManagement.ARCHIVE:
                assert extent.archived
