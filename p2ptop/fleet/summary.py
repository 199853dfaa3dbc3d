"""One host's snapshot -> the few figures a fleet view ranks and compares (a plain, JSON-safe dict).

A summary is small (a few KB for eight GPUs) so thousands fit in memory and cross process boundaries
cheaply. It holds what ranks a host (GPUs lost, NVLinks down, refused pairs, pairs under expected,
findings, the top knowledge-base entry), what groups it with its siblings (GPU model and topology),
and what the odd-one-out comparison needs (copy-test figures per pair, link states and fault counters).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any, Optional

from ..bench.judge import JUDGED
from ..model import Snapshot

SEVERITY_RANK = {"ok": 0, "info": 1, "warning": 2, "problem": 3}
LINK_FAULT_COUNTERS = ("replay", "recovery")


def topology(snap: Snapshot, fabric: Any) -> tuple[str, str]:
    """(id, words) of the host's topology: the path-class matrix and NVLink count per GPU, so hosts whose
    GPUs are wired alike share an id. Links that are down do not change it (the NVLinks a GPU has, active
    or not, are counted), so a host with a link down still groups with its siblings."""
    idx = snap.gpu_indices
    rows = []
    for a in idx:
        rows.append(",".join(_static_path(snap, fabric, a, b) for b in idx))
    links = ",".join(str(len(snap.gpu(i).nvlinks)) for i in idx)
    digest = hashlib.sha1(("|".join(rows) + "/" + links).encode()).hexdigest()[:8]
    classes = Counter(_static_path(snap, fabric, a, b) for a in idx for b in idx if a != b)
    common = ", ".join(f"{c}" for c, _ in classes.most_common(2)) or "no pairs"
    return f"{len(idx)}x-{digest}", f"{len(idx)} GPUs, {common}"


def _static_path(snap: Snapshot, fabric: Any, a: int, b: int) -> str:
    if a == b:
        return "X"
    path = fabric.path_class(a, b) or "?"
    return "NV" if path.startswith("NV") else path  # how many links are up is a state, not the wiring


def summarize(snap: Snapshot, *, file: Optional[str] = None, kb: Any = None) -> dict[str, Any]:
    from ..diagnose import findings_for
    from ..fabric import Fabric

    fabric = Fabric(snap)
    findings = findings_for(snap, fabric)
    topo_id, topo_text = topology(snap, fabric)
    models = Counter(g.name or "unknown GPU" for g in snap.gpus)
    refused = sum(1 for p in snap.pairs if any(p.p2p.get(c) not in (None, "OK") for c in ("read", "write")))
    pairs: dict[str, dict[str, float]] = {}
    below = 0
    seen = set()
    for r in reversed(snap.bench):  # the latest result of each pair
        if (r.a, r.b) in seen:
            continue
        seen.add((r.a, r.b))
        if r.verdict in ("slow", "failing"):
            below += 1
        figures = {m.name: m.value for m in r.measurements if m.name in JUDGED and m.value is not None}
        if figures:
            pairs[f"{r.a}-{r.b}"] = figures
    links: dict[str, Any] = {}
    down = lost = 0
    for g in snap.gpus:
        if any("lost" in why.lower() for why in g.na.values()):
            lost += 1
        d = [l.link for l in g.nvlinks if l.state == "inactive"]
        down += len(d)
        faults = {str(l.link): sum(l.counters.get(c) or 0 for c in LINK_FAULT_COUNTERS) for l in g.nvlinks}
        links[str(g.index)] = {"n": len(g.nvlinks), "down": d, "faults": {k: v for k, v in faults.items() if v}}
    problems = [f for f in findings if f.severity == "problem"]
    warnings = [f for f in findings if f.severity == "warning"]
    worst = max((SEVERITY_RANK.get(f.severity, 0) for f in findings), default=0)
    top_kb = None
    if kb is not None and (problems or warnings):
        from ..knowledge import match

        m = match(kb, findings=findings, top=1)
        top_kb = m[0].entry.id if m else None
    shown = sorted(problems + warnings, key=lambda f: -SEVERITY_RANK[f.severity])
    return {
        "file": file,
        "host": snap.source.hostname or (file or "unknown host"),
        "taken_at": snap.source.taken_at,
        "simulated": bool(snap.source.simulated or snap.source.kind == "demo"),
        "source": snap.source.origin_kind or snap.source.kind,
        "model": models.most_common(1)[0][0] if models else "no GPUs",
        "gpus": len(snap.gpus),
        "driver": snap.driver_version,
        "topology": topo_id,
        "topology_text": topo_text,
        "gpus_lost": lost,
        "nvlinks_down": down,
        "refused_pairs": refused,
        "pairs_below_expected": below,
        "problems": len(problems),
        "warnings": len(warnings),
        "worst": next(k for k, v in SEVERITY_RANK.items() if v == worst),
        "findings": [f"{f.severity}: {f.summary}" for f in shown[:5]],
        "kb_top": top_kb,
        "pairs": pairs,
        "links": links,
    }


def rank_key(h: dict[str, Any]) -> tuple:
    """Worst first: GPUs lost, NVLinks down, refused pairs, pairs under expected (theirs or against their
    siblings), problems, warnings; then by name."""
    return (-h["gpus_lost"], -h["nvlinks_down"], -h["refused_pairs"], -(h["pairs_below_expected"] + len(h.get("odd", []))),
            -len(h.get("odd_links", [])), -h["problems"], -h["warnings"], h["host"])
