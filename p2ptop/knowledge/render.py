"""Entries and matches as plain text for the command line (``kb show``, ``explain``).

Every string that comes from a KB file or a log passes through :func:`clean`, so terminal codes in
them are never sent to the terminal.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any, Optional

from ..findings import FACT_KEYS
from .entry import FAILURE_CLASSES, VERIFICATION_TIERS, Entry

_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
WIDTH = 100


def clean(value: Any) -> str:
    """Text from a KB file or a log, safe to print: terminal escape sequences and control characters removed."""
    return _CONTROL.sub("", "" if value is None else str(value))


def percent(rate: Any) -> str:
    return f"{round(float(rate) * 100)}%" if isinstance(rate, (int, float)) else "?"


def fact_help(fact: str) -> str:
    """A missing fact with what it means, for 'would decide' lines."""
    desc = FACT_KEYS.get(fact) or ("the NCCL/CUDA environment variable" if fact.startswith("env.") else "")
    return f"{fact} ({desc})" if desc else fact


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(clean(text), WIDTH, initial_indent=indent, subsequent_indent=indent + "  ") or [indent]


def entry_text(entry: Entry, lang: str = "en", header: Optional[str] = None) -> str:
    """One entry: signature, class, root cause, dead ends, workarounds with commands, sources, tier."""
    lines: list[str] = [header or f"{clean(entry.id)}"]
    cls = entry.failure_class
    lines += _wrap(entry.text("signature", lang), "  ")
    lines.append(f"  class: {cls or 'none given'}" + (f" ({FAILURE_CLASSES[cls]})" if cls in FAILURE_CLASSES else ""))
    tier = entry.verification_tier
    lines.append(f"  verification: {tier}" + (f" ({VERIFICATION_TIERS[tier]})" if tier in VERIFICATION_TIERS else ""))
    lines.append("  Root cause:")
    lines += _wrap(entry.text("root_cause", lang), "    ")
    if entry.dead_ends:
        lines.append("  Dead ends (what does not help):")
        for i, d in enumerate(entry.dead_ends):
            what = entry.dead_end_text(i, lang) or d.get("why_fails", "")
            lines += _wrap(f"- {what} [fails {percent(d.get('fail_rate'))}]", "    ")
            if d.get("why_fails") and entry.dead_end_text(i, lang) and lang != "zh":
                lines += _wrap(f"why: {d['why_fails']}", "      ")
    if entry.workarounds:
        lines.append("  Workarounds:")
        for i, w in enumerate(entry.workarounds):
            lines += _wrap(f"{i + 1}. {entry.workaround_text(i, lang)} [works {percent(w.get('success_rate'))}]", "    ")
            if w.get("condition"):
                lines += _wrap(f"when: {w['condition']}", "       ")
            if w.get("command"):
                lines.append(f"       $ {clean(w['command'])}")
            if w.get("sources"):
                lines.append(f"       source: {clean(', '.join(w['sources']))}")
    if entry.sources:
        lines.append("  Sources:")
        lines += [f"    {clean(s)}" for s in entry.sources]
    if entry.related_ids:
        lines.append(f"  Related: {clean(', '.join(entry.related_ids))}")
    return "\n".join(lines)


def match_header(rank: int, m) -> str:
    return f"{rank}. {clean(m.entry.id)}  score {m.score:.2f} ({m.confidence})"


def match_text(rank: int, m, lang: str = "en", full: bool = True) -> str:
    lines = [match_header(rank, m)]
    lines += [f"   why: {clean(r)}" for r in m.reasons]
    if m.deciding_facts:
        lines.append("   would decide: " + "; ".join(fact_help(f) for f in m.deciding_facts))
    nc = getattr(m, "next_command", None)
    if nc and getattr(m, "confidence", "") == "unsure":
        lines.append(f"   next: $ {clean(nc['command'])}   (reads {clean(nc['fact'])})")
    if full:
        body = entry_text(m.entry, lang).split("\n", 1)[1]
        lines.append(body)
    return "\n".join(lines)
