"""The one way mqjournal writes a size for people: units of 1024 (1 KB = 1024 bytes), one decimal.

The gate, the reports, the task logs and the fleet view write every size with these functions, never a format of
their own, so that the same receivers read as the same number wherever an admin looks.
"""

from __future__ import annotations


def size(n: int | None) -> str:
    value = float(n or 0)
    if value < 1024:
        return f"{value:.0f} B"
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} TB"


def signed_size(n: int) -> str:
    """A size that can be negative: net space, when new save files outweigh the receivers they free."""
    return f"-{size(-n)}" if n < 0 else size(n)
