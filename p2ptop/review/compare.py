"""Before against after: the figures of the same test, the verdict, the pair's P2P status and what
changed between the two snapshots (p2ptop.changes), and the outcome that suggests."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from ..changes import diff
from ..model import BenchResult, Snapshot, SnapshotError, _build

RANK = {"healthy": 0, "contended": 1, "slow": 2, "interrupted": 2, "failing": 3}
#: A figure this much better counts as an improvement even when the verdict did not change.
BETTER = 1.25


@dataclass
class Row:
    name: str
    unit: str
    before: Optional[float]
    after: Optional[float]
    before_verdict: Optional[str] = None
    after_verdict: Optional[str] = None

    @property
    def ratio(self) -> Optional[float]:
        if self.before and self.after is not None and self.before > 0:
            return self.after / self.before
        return None


@dataclass
class Comparison:
    rows: list[Row] = field(default_factory=list)
    verdict_before: Optional[str] = None
    verdict_after: Optional[str] = None
    status_before: Optional[str] = None
    status_after: Optional[str] = None
    p2p_before: dict[str, Optional[str]] = field(default_factory=dict)
    p2p_after: dict[str, Optional[str]] = field(default_factory=dict)
    changes: list[str] = field(default_factory=list)
    simulated: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for row, r in zip(d["rows"], self.rows):
            row["ratio"] = r.ratio
        return d


def _result(d: Optional[dict[str, Any]]) -> Optional[BenchResult]:
    if not d:
        return None
    try:
        return _build(BenchResult, d, "result")
    except (SnapshotError, TypeError, ValueError):
        return None


def _snapshot(d: Optional[dict[str, Any]]) -> Optional[Snapshot]:
    if not d:
        return None
    try:
        return Snapshot.from_dict(d, where="review snapshot")
    except SnapshotError:
        return None


def _verdict(r: Optional[BenchResult]) -> Optional[str]:
    if r is None:
        return None
    return r.verdict if r.status == "ok" else (r.verdict or r.status)


def compare(before: dict[str, Any], after: dict[str, Any]) -> Comparison:
    """``before``/``after``: {"result": BenchResult dict, "snapshot": Snapshot dict} as a review stores them."""
    rb, ra = _result(before.get("result")), _result(after.get("result"))
    c = Comparison(verdict_before=_verdict(rb), verdict_after=_verdict(ra),
                   status_before=rb.status if rb else None, status_after=ra.status if ra else None,
                   simulated=bool((rb and rb.simulated) or (ra and ra.simulated)))
    names: list[str] = []
    for r in (rb, ra):
        for m in (r.measurements if r else []):
            if m.name not in names:
                names.append(m.name)
    for name in names:
        mb = rb.measurement(name) if rb else None
        ma = ra.measurement(name) if ra else None
        unit = (mb or ma).unit
        c.rows.append(Row(name, unit, mb.value if mb else None, ma.value if ma else None,
                          mb.verdict if mb else None, ma.verdict if ma else None))
    sb, sa = _snapshot(before.get("snapshot")), _snapshot(after.get("snapshot"))
    ref = rb or ra
    if ref is not None and ref.a != ref.b:
        for snap, out in ((sb, c.p2p_before), (sa, c.p2p_after)):
            pair = snap.pair(ref.a, ref.b) if snap else None
            if pair:
                out.update(pair.p2p)
    if sb is not None and sa is not None:
        c.changes = [ch.text for ch in diff(sb, sa)]
    return c


def suggest(c: Comparison) -> Optional[str]:
    """'helped', 'did_not_help' or None (nothing to go on). The user confirms; this only proposes."""
    if c.verdict_after is None:
        return None
    if c.verdict_after in ("interrupted", "contended"):
        return None  # the re-test itself is not comparable: run it again
    rb = RANK.get(c.verdict_before or "", None)
    ra = RANK.get(c.verdict_after, None)
    if ra is not None and rb is not None and ra < rb:
        return "helped"
    judged = [r.ratio for r in c.rows if r.ratio is not None and r.unit == "GB/s"]
    if judged and min(judged) >= BETTER:
        return "helped"
    return "did_not_help"
