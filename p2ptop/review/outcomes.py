"""What this site saw: per entry and per workaround, how often a confirmed attempt helped, shown beside
the public estimate and used to break ties in the ranking (a workaround that did not help on this host
moves down for this host)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional


@dataclass
class Tally:
    helped: int = 0
    did_not_help: int = 0

    @property
    def tried(self) -> int:
        return self.helped + self.did_not_help


def site_outcomes(attempts: Iterable[tuple[Any, Any]], host: Optional[str] = None) -> dict[tuple[str, Optional[int]], Tally]:
    """(entry id, workaround index) -> tally, and (entry id, None) -> the entry's tally, over confirmed
    attempts; ``host`` keeps only this host's (the review's host) where given."""
    out: dict[tuple[str, Optional[int]], Tally] = {}
    for review, a in attempts:
        if not a.confirmed or a.state not in ("helped", "did_not_help") or not a.entry_id:
            continue
        if host is not None and review.host != host:
            continue
        item = review.items[a.item] if 0 <= a.item < len(review.items) else {}
        for key in ((a.entry_id, item.get("workaround")), (a.entry_id, None)):
            t = out.setdefault(key, Tally())
            if a.state == "helped":
                t.helped += 1
            else:
                t.did_not_help += 1
    return out


def outcome_text(tally: Optional[Tally]) -> str:
    """'helped here 3 of 4 times' ('' when never tried here)."""
    if tally is None or tally.tried == 0:
        return ""
    return f"helped here {tally.helped} of {tally.tried} time{'s' if tally.tried != 1 else ''}"


def rank_key(entry_id: str, outcomes: dict[tuple[str, Optional[int]], Tally]) -> float:
    """A tie-breaker for entries of equal score: this site's share of attempts that helped (0.5 when none)."""
    t = outcomes.get((entry_id, None))
    if t is None or t.tried == 0:
        return 0.5
    return t.helped / t.tried


def order_workarounds(entry_id: str, count: int, host_outcomes: dict[tuple[str, Optional[int]], Tally]) -> list[int]:
    """Workaround indices of an entry in the order to show them on this host: those that did not help here last."""
    def key(i: int) -> tuple[int, int]:
        t = host_outcomes.get((entry_id, i))
        failed_here = bool(t and t.did_not_help and not t.helped)
        return (1 if failed_here else 0, i)
    return sorted(range(count), key=key)


def load_site_outcomes(host: Optional[str] = None) -> dict[tuple[str, Optional[int]], Tally]:
    """This user's outcomes from the review store ({} when there is none or it cannot be read)."""
    from .store import ReviewStore, StoreError

    if not ReviewStore.exists():
        return {}
    try:
        store = ReviewStore()
        try:
            return site_outcomes(store.all_attempts(), host)
        finally:
            store.close()
    except StoreError:
        return {}


def outcomes_from_bundles(paths: Iterable[str]) -> dict[tuple[str, Optional[int]], Tally]:
    """Outcomes of many hosts, read from the reviews.json of their ticket bundles (fleet view)."""
    import json
    from pathlib import Path

    out: dict[tuple[str, Optional[int]], Tally] = {}
    for p in paths:
        f = Path(p) / "reviews.json" if Path(p).is_dir() else Path(p)
        try:
            reviews = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        for r in reviews if isinstance(reviews, list) else []:
            items = r.get("items") or []
            for a in r.get("attempts") or []:
                if not a.get("confirmed") or a.get("state") not in ("helped", "did_not_help") or not a.get("entry_id"):
                    continue
                idx = a.get("item")
                w = items[idx].get("workaround") if isinstance(idx, int) and 0 <= idx < len(items) else None
                for key in ((a["entry_id"], w), (a["entry_id"], None)):
                    t = out.setdefault(key, Tally())
                    if a["state"] == "helped":
                        t.helped += 1
                    else:
                        t.did_not_help += 1
    return out
