"""The time zone descriptions a simulated partition can name in QTIMZON, and the local time they give.

A description without DST is named from its offset (QP0100UTCS, Q0000UTC), as IBM i names the ones it ships and the one
it creates at IPL from an offset (IBM i 7.4 "Initial time zone setting"). The few descriptions with DST the simulator
ships follow the Olson zone IBM lists as their Alternate name; the simulator models them, the client does not read
this table. A site's own description (one an admin made with CRTTIMZON) follows the rules the fleet file names for the
host (`time_zone_rules`), as the client then reads them."""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

WITH_DST = {
    "QN0500EST3": "America/New_York",
    "QP0100CET2": "Europe/Zurich",
    "Q0000GMT2": "Europe/London",
}


def fixed_offset_description(offset: timedelta) -> str:
    """The IBM-supplied description without DST for a UTC offset: QN0500UTCS, QP0100UTCS, Q0000UTC."""
    minutes = int(offset.total_seconds() // 60)
    if minutes == 0:
        return "Q0000UTC"
    return f"Q{'N' if minutes < 0 else 'P'}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}UTCS"


def rules(description: str, site_rules: str = "") -> tzinfo | None:
    """The DST rules of a description: the site's (`site_rules`, an Olson name) or the one the simulator ships with
    DST; None for one without (the fixed offset rules)."""
    name = site_rules or WITH_DST.get(description)
    return ZoneInfo(name) if name else None


def local(moment: datetime, description: str, site_rules: str = "") -> datetime:
    """What the partition's clock read at `moment`, without offset, as Db2 for i prints its timestamps."""
    zone = rules(description, site_rules)
    return (moment.astimezone(zone) if zone is not None else moment).replace(tzinfo=None)


def offset_at(moment: datetime, description: str, site_rules: str = "") -> timedelta:
    """QUTCOFFSET at `moment`: it follows the description's DST (IBM i 7.4 QTIMZON: "All current settings contain
    either the standard time or daylight saving time (DST) values depending on whether DST is in effect")."""
    zone = rules(description, site_rules)
    offset = moment.astimezone(zone).utcoffset() if zone is not None else moment.utcoffset()
    return offset if offset is not None else timedelta(0)
