"""Markdown as a reader of Airflow's UI sees it."""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt


def as_read(markdown: str) -> str:
    """The rendered Markdown's text, without markup: what a person reads (CommonMark, as the UI renders it)."""
    return html.unescape(re.sub(r"<[^>]+>", "", MarkdownIt().render(markdown)))
