"""Untrusted text (NVML strings, logs, knowledge-base entries, host facts) made safe for Markdown.

Text is data: terminal codes and control characters are dropped, and characters Markdown or
GitHub's HTML would interpret are escaped, so a string shows as itself in a GitHub or Jira issue.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

# ANSI CSI and OSC sequences, other ESC sequences, C0/C1 controls but tab and newline, and the
# Unicode bidirectional overrides that can make text read differently from what it is.
_TERMINAL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]{}|~#!])")


def clean(value: Any) -> str:
    """The text of a value with terminal codes and control characters removed (tab and newline kept)."""
    return _TERMINAL.sub("", "" if value is None else str(value)).replace("\r\n", "\n").replace("\r", "\n")


def inline(value: Any) -> str:
    """Untrusted text for one line of Markdown: cleaned, on one line, special characters escaped."""
    text = " ".join(clean(value).split())
    return _INLINE_SPECIAL.sub(r"\\\1", text.replace("&", "&amp;").replace("<", "&lt;"))


def cell(value: Any) -> str:
    """Untrusted text for a table cell (``|`` escaped too); empty shows as N/A."""
    text = inline(value)
    return text if text else "N/A"


def code(value: Any) -> str:
    """Untrusted text as an inline code span, with a fence longer than any backtick run inside."""
    text = " ".join(clean(value).split())
    if not text:
        return "N/A"
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fence_for(text: str) -> str:
    """A code-block fence longer than any backtick run in ``text`` (at least three)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def code_block(text: str, lang: str = "text") -> str:
    body = clean(text).rstrip("\n")
    fence = fence_for(body)
    return f"{fence}{lang}\n{body}\n{fence}\n"


def details(summary: str, body: str) -> str:
    """A folded block; ``summary`` must already be safe (use :func:`inline`)."""
    return f"<details><summary>{summary}</summary>\n\n{body.rstrip()}\n\n</details>\n"


def table(headers: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    """A table; headers are ours, every row value is escaped with :func:`cell`."""
    heads = list(headers)
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join(" --- " for _ in heads) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"
