"""Judge copy-test figures against what the link should give, and turn bad results into findings.

What a link should give is the fabric's raw link rate one way (``Fabric.expected(a, b).gbps``: NVLink
count x per-link rate, or the slowest PCIe hop); both directions at once should give twice that.
Real copies never reach the raw rate: protocol overhead takes 10-20 % (on 2x H200 through NVSwitch,
nvbandwidth's copy engine and p2ptop's both reach 394 of 450 GB/s, 88 %; SM copies 370-376, 82-84 %;
PCIe loses a similar share to packet headers, not measured here). So a bandwidth figure is

- **healthy** at or above ``HEALTHY_SHARE`` (70 %) of the expected figure;
- **slow** from ``FAILING_SHARE`` (25 %) up to 70 %: the pair works but something (links down,
  a degraded PCIe link, traffic through the CPU) costs a large share;
- **failing** below 25 % (e.g. P2P silently going through host memory: 38 of 450 GB/s on the H200
  pair, 8 %), or when the copy failed.

Latency and the host-staged copy are shown for comparison and judged ``info``. A figure whose link
rate is not known is ``info`` too. The overall verdict of a result is the worst of its figures, and
``failing`` whatever the figures when the run did not end well (failed, timeout, crashed, unavailable),
when enabling peer access failed, or when the integrity check found corrupt data.
"""

from __future__ import annotations

from typing import Optional

from ..fabric import Fabric
from ..findings import Finding, pair_subject
from ..model import BenchResult, Measurement, Snapshot

HEALTHY_SHARE = 0.70
FAILING_SHARE = 0.25

#: Figures judged against the link rate, with the multiple of the one-way rate they should reach.
JUDGED = {"ce_one_way": 1.0, "ce_reverse": 1.0, "ce_bidirectional": 2.0, "sm_read": 1.0, "sm_write": 1.0}
RANK = {"healthy": 0, "slow": 1, "failing": 2}


def share_verdict(share: float) -> str:
    if share >= HEALTHY_SHARE:
        return "healthy"
    if share >= FAILING_SHARE:
        return "slow"
    return "failing"


def _judge_measurement(m: Measurement, link_gbps: Optional[float], host_gbps: Optional[float]) -> None:
    if m.name in JUDGED:
        m.expected = round(link_gbps * JUDGED[m.name], 1) if link_gbps else None
        if m.error or m.value is None:
            m.verdict = "failing"
        elif m.expected:
            m.verdict = share_verdict(m.value / m.expected)
        else:
            m.verdict = "info"
    else:
        if m.name == "host_staged":
            m.expected = host_gbps
        m.verdict = "info"


def judge(result: BenchResult, fabric: Fabric) -> BenchResult:
    """Fill ``expected`` and ``verdict`` of every measurement and the result's overall verdict."""
    exp = fabric.expected(result.a, result.b)
    host = fabric.host_expected(result.a, result.b)
    for m in result.measurements:
        _judge_measurement(m, exp.gbps, host)
    result.params["expected_basis"] = exp.basis
    one_way = result.measurement("ce_one_way")
    if one_way and one_way.value is not None and one_way.expected:
        result.params["share"] = round(one_way.value / one_way.expected, 3)
    if result.status == "cancelled":
        result.verdict = None
    elif result.status != "ok" or result.integrity == "corrupt" or result.params.get("peer_access"):
        result.verdict = "failing"
    else:
        ranked = [m.verdict for m in result.measurements if m.verdict in RANK]
        result.verdict = max(ranked, key=RANK.__getitem__) if ranked else None
    return result


# --- findings ---------------------------------------------------------------------------------


def _figure(m: Measurement) -> str:
    if m.error or m.value is None:
        return f"{m.name}: failed ({m.error or 'no value'})"
    spread = f" (min {m.min:g}, max {m.max:g})" if m.min is not None and m.max is not None else ""
    exp = f" of {m.expected:g} expected ({m.value / m.expected:.0%})" if m.expected else ""
    return f"{m.name}: {m.value:g} {m.unit}{spread}{exp}"


def result_finding(result: BenchResult, fabric: Fabric) -> Optional[Finding]:
    """The one finding a result gives: None for healthy, cancelled and unjudged results."""
    if result.status == "cancelled" or result.verdict not in ("slow", "failing"):
        return None
    a, b = result.a, result.b
    sim = " (simulated)" if result.simulated else ""
    head = f"GPU{a}->GPU{b}"
    one_way = result.measurement("ce_one_way")
    if result.integrity == "corrupt":
        fid, summary = "bench.corrupt", f"{head}: data corrupted by a P2P copy (first bad byte at offset {result.first_bad_offset}){sim}"
    elif result.status in ("timeout", "crashed", "failed", "unavailable"):
        what = {"timeout": "hung and was killed", "crashed": "crashed", "failed": "failed", "unavailable": "could not run"}[result.status]
        fid, summary = f"bench.{result.status}", f"{head}: copy test {what}{sim}"
    elif result.params.get("peer_access"):
        fid, summary = "bench.peer_access", f"{head}: peer access could not be enabled ({result.params['peer_access']}){sim}"
    elif one_way and one_way.value is not None and one_way.expected:
        fid = f"bench.{result.verdict}"
        summary = (f"{head}: copies reach {one_way.value:g} GB/s, {one_way.value / one_way.expected:.0%} of the "
                   f"{one_way.expected:g} GB/s the link should give ({result.params.get('expected_basis', '')}){sim}")
    else:
        worst = [m for m in result.measurements if m.verdict == result.verdict]
        fid = f"bench.{result.verdict}"
        summary = f"{head}: copy test {result.verdict}" + (f" ({worst[0].name})" if worst else "") + sim
    facts = {
        "pair.path": fabric.path_class(a, b),
        "pair.nvlink_count": fabric.nvlink_count(a, b),
        "bench.status": result.status,
        "bench.verdict": result.verdict,
        "bench.peer_access": result.params.get("peer_access", "ok"),
    }
    if result.integrity in ("ok", "corrupt"):
        facts["bench.integrity"] = result.integrity
    if "share" in result.params:
        facts["bench.share"] = result.params["share"]
    if result.errors:
        facts["bench.error"] = result.errors[0]
    evidence = ([f"simulated from the expected figures ({result.params.get('expected_basis', '')})"] if result.simulated else [])
    evidence += [_figure(m) for m in result.measurements if m.verdict in ("slow", "failing")]
    evidence += list(result.errors)
    severity = "warning" if result.verdict == "slow" else "problem"
    return Finding(fid, pair_subject(a, b), severity, summary, evidence, {k: v for k, v in facts.items() if v is not None})


def bench_findings(snapshot: Snapshot, fabric: Optional[Fabric] = None) -> list[Finding]:
    """Findings for the latest slow, failing, corrupt or broken copy test of each ordered pair."""
    fabric = fabric or Fabric(snapshot)
    out = []
    seen = set()
    for r in snapshot.bench:
        if (r.a, r.b) in seen:
            continue
        seen.add((r.a, r.b))
        latest = snapshot.bench_result(r.a, r.b)
        f = result_finding(judge(latest, fabric), fabric) if latest else None
        if f:
            out.append(f)
    return out
