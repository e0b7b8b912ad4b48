"""What the save step may do now, decided on the live state: pure functions, no I/O.

The executor (mqjournal.ibmi.executor) reads the host and the catalog, asks these, and sends what they allow; the
delete side's counterpart is `rules.delete_decisions`. Both answer from the state read right before acting, not
from the plan, which may be hours old by then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from mqjournal.rules import BackupEvidence, EvidenceKey, is_saved
from mqjournal.snapshot import Receiver, ReceiverStatus, Snapshot, receivers_by_name


class SaveVerdict(StrEnum):
    SAVE = "save"
    ALREADY_SAVED = "already_saved"  # a catalogued save of it is proven on the host or in the backup store now
    NOT_SAVED = "not_saved"  # it cannot be saved now: `detail` says why


@dataclass(frozen=True)
class SaveDecision:
    receiver: str
    verdict: SaveVerdict
    detail: str = ""


def save_decisions(
    wanted: Sequence[str], live: Snapshot, evidence: Mapping[EvidenceKey, Sequence[BackupEvidence]]
) -> list[SaveDecision]:
    """One decision per wanted name, in the order asked: a receiver that is gone or still attached is not saved (a
    save taken while attached leaves it ONLINE, never fully saved); one with a save proven on the host is not saved
    again; any other is saved."""
    on_host = receivers_by_name(live, live.qmgr_library)
    decisions = []
    for name in wanted:
        receiver = on_host.get(name)
        if receiver is None:
            decisions.append(SaveDecision(name, SaveVerdict.NOT_SAVED, "not on the system"))
        elif receiver.status == ReceiverStatus.ATTACHED:
            decisions.append(
                SaveDecision(name, SaveVerdict.NOT_SAVED, "attached: it is saved once it has been detached")
            )
        elif receiver.attached_at is not None and any(
            e.proven or e.saved_on_host for e in evidence.get((receiver.library, name, receiver.attached_at), ())
        ):
            decisions.append(SaveDecision(name, SaveVerdict.ALREADY_SAVED))
        else:
            decisions.append(SaveDecision(name, SaveVerdict.SAVE))
    return decisions


def unproven_save(saved: Receiver, now: Receiver | None, *, in_save_file: bool, save_file: str, message: str) -> str:
    """Why the save of `saved` into `save_file` does not count ("" when it does): only the save file's own content
    counts, and the receiver the host shows now must be the one saved (same attach time), fully saved."""
    if not in_save_file:
        return f"{save_file} does not hold it after SAVOBJ ({message})"
    if now is None or now.attached_at != saved.attached_at or not is_saved(now):
        return f"{save_file} holds it but the host does not show it fully saved"
    return ""
