"""`backup: site` on a simulated partition: the site's own SAVLIB makes receivers deletable once it is old enough
by the partition's clock, never before, and never a receiver that save caught attached (docs/site-backup.md)."""

from __future__ import annotations

from datetime import timedelta

from mqjournal import rules
from mqjournal.ibmi.collector import collect
from mqjournal.policy import Policy
from tests.ibmi.executing import receivers_on_host

SITE = Policy(backup="site", site_save_min_age_hours=12)


def nightly_savlib(sim_fleet) -> None:
    """The site's own backup, as its CL runs it: a save of the whole queue manager library, attached receiver too."""
    shell = sim_fleet.connect()
    assert shell.cl("CRTSAVF FILE(QGPL/NIGHTLY)")[0] == 0
    assert shell.cl("SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF(QGPL/NIGHTLY)")[0] == 0


def site_plan(executor):
    """The plan with the site's backup, and the chain oldest first: what the approval gate would show."""
    snap = collect(executor.session, executor.target, host="ibmi1", run_id="run1", tz=executor.tz)
    _qm, rows = rules.plan_queue_manager(snap, [snap], as_of=snap.collected_at, policy=SITE)
    return {r.receiver: r.reason for r in rows}, [r.name for r in rules.chain_of(snap)]


def test_the_save_step_saves_nothing_and_sends_nothing(sim_fleet, executor):
    files = set(sim_fleet.host().partition.save_files)
    commands = len(sim_fleet.service.received.entries("ibmi1"))
    result = executor.save(["AMQA000001"], save_library="QGPL", policy=SITE)
    assert result.saved == result.save_files == result.not_saved == []
    assert result.note == (
        "backup: site: the site's own backup saves the receivers, mqjournal saves none (1 asked for: AMQA000001)"
    )
    assert set(sim_fleet.host().partition.save_files) == files
    assert len(sim_fleet.service.received.entries("ibmi1")) == commands


def test_receivers_the_site_saved_are_deleted_only_once_the_save_is_old_enough(sim_fleet, executor):
    reasons, chain = site_plan(executor)
    assert "SAVED_BY_SITE" not in reasons.values()  # nothing saved yet: the simulated churn saves nothing
    nightly_savlib(sim_fleet)
    saved_by_site = [n for n in chain if receivers_on_host(sim_fleet)[n].status == "SAVED"]
    assert saved_by_site

    sim_fleet.host().advance(timedelta(hours=11))
    too_early = executor.delete(chain, policy=SITE)
    assert too_early.deleted == []
    first, why = too_early.kept[0]
    assert first == chain[0] and why.startswith("saved by the site's backup 11") and "deletable after 12 h" in why

    sim_fleet.host().advance(timedelta(hours=2))
    reasons, chain = site_plan(executor)
    deletable = [n for n in chain if reasons[n] == "SAVED_BY_SITE"]
    assert deletable == saved_by_site
    result = executor.delete(chain, policy=SITE)
    assert result.deleted == saved_by_site and result.failed is None
    assert not set(saved_by_site) & set(receivers_on_host(sim_fleet))
    assert [d.delete_option for d in executor.catalog.deletions_for("ibmi1", "QMTEST")] == ["*NONE"] * len(
        saved_by_site
    )


def test_the_receiver_the_site_saved_while_attached_is_kept_and_stops_the_later_ones(sim_fleet, executor):
    attached = next(r.name for r in executor.live().receivers if r.status == "ATTACHED")
    nightly_savlib(sim_fleet)
    sim_fleet.host().advance(timedelta(hours=13))  # long enough for it to be detached and no longer needed
    caught = receivers_on_host(sim_fleet)[attached]
    assert caught.status == "ONLINE" and caught.saved_at is not None  # IBM i: never fully saved

    reasons, chain = site_plan(executor)
    assert reasons[attached] == "NOT_SAVED_BY_SITE"
    result = executor.delete(chain, policy=SITE)
    assert attached in receivers_on_host(sim_fleet) and attached not in result.deleted
    kept = dict(result.kept)
    assert kept[attached].startswith("not saved by the site's backup yet: its last save, on ")
    assert "does not cover all of it (IBM i shows it ONLINE" in kept[attached]
    later = chain[chain.index(attached) + 1 :]
    assert all(kept[n] == f"{attached}, older in the chain, was not deleted" for n in later)
