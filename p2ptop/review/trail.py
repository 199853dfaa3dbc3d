"""The trail of reviews for report.md and ticket bundles: what failed, each fix tried with its outcome,
the before/after figures and the note; redacted like the rest of the ticket when asked."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from .compare import compare
from .store import STATES, Review

Clean = Callable[[str], str]


def _fig(v: Optional[float], unit: str) -> str:
    if v is None:
        return "–"
    return f"{v:.2f} {unit}" if unit != "GB/s" else f"{v:.1f} GB/s"


def _label(name: str) -> str:
    from ..bench.catalog import MEASUREMENTS
    return MEASUREMENTS.get(name, ("", name, ""))[1]


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def trail_dict(reviews: Iterable[Review], redact: Optional[Clean] = None) -> list[dict[str, Any]]:
    """JSON-ready reviews (the snapshots stored as before/after are left out: the bundle has its own)."""
    r_ = redact or (lambda s: s)
    out = []
    for review in reviews:
        d = review.to_dict()
        d["host"] = r_(d["host"]) if d["host"] else d["host"]
        d["problem"] = r_(d["problem"])
        d["before"] = {k: v for k, v in d["before"].items() if k != "snapshot"}
        for a in d["attempts"]:
            a["note"] = r_(a["note"])
            for k in ("before", "after"):
                if isinstance(a.get(k), dict):
                    a[k] = {kk: vv for kk, vv in a[k].items() if kk != "snapshot"}
        out.append(d)
    return out


def trail_markdown(reviews: Iterable[Review], redact: Optional[Clean] = None) -> str:
    """A Markdown section: per review, what failed and every attempt with its outcome and figures."""
    r_ = redact or (lambda s: s)
    reviews = list(reviews)
    if not reviews:
        return ""
    lines = ["## Fixes tried", ""]
    for review in reviews:
        lines.append(f"### Review {review.id}: {_md(r_(review.problem))}")
        lines.append(f"On {r_(review.host or 'an unnamed host')}, opened {review.created}, {review.status}.")
        lines.append("")
        if not review.attempts:
            lines += ["No fix tried yet.", ""]
            continue
        lines += ["| # | fix | outcome | verdict before → after | figures | note |", "| --- | --- | --- | --- | --- | --- |"]
        for n, a in enumerate(review.attempts, 1):
            item = review.items[a.item] if 0 <= a.item < len(review.items) else {}
            fix = f"{item.get('entry_id') or ''}: {a.action}".strip(": ")
            outcome = STATES.get(a.state, a.state) + ("" if a.confirmed or a.state in ("trying", "not_tried") else " (unconfirmed)")
            if a.state == "trying" and a.suggested:
                outcome += f"; suggested: {STATES.get(a.suggested, a.suggested)}"
            verdicts, figures = "–", "–"
            if a.after:
                c = compare(a.before or review.before, a.after)
                verdicts = f"{c.verdict_before or '–'} → {c.verdict_after or '–'}"
                main = [row for row in c.rows if row.unit == "GB/s"][:2]
                figures = "; ".join(f"{_label(row.name)} {_fig(row.before, row.unit)} → {_fig(row.after, row.unit)}" for row in main) or "–"
                if c.simulated:
                    figures += " (simulated)"
            lines.append(f"| {n} | {_md(fix)} | {_md(outcome)} | {_md(verdicts)} | {_md(figures)} | {_md(r_(a.note)) or '–'} |")
        lines.append("")
    return "\n".join(lines)
