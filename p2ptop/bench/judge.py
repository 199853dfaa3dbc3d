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

Two verdicts say the figures tell nothing about the link, and give no finding:

- **interrupted**: the worker was ended from outside (a signal: SIGKILL as the OOM killer sends it,
  SIGTERM, SIGINT) or cancelled; what was measured before is kept.
- **contended**: something else used the GPUs or the path (``contention.py``: other compute processes,
  utilisation or link traffic before the test); the figures are kept, each judged ``contended``. A GPU or
  link fault still makes the result failing: corrupt data, a CUDA error other than out-of-memory (another
  process may hold the memory), a hang past the timeout, peer access refused, a host link trained low.

**Host links** (``a == b``): H->D and D->H against the GPU's PCIe link at its maximum generation and
width (the narrowest link up to the root port where sysfs was read), with the same shares: a single H100
(Gen5 x16, 63 GB/s raw) reached 52.9 GB/s H->D and 51.0 D->H with pinned copies (84 %, 81 %;
shared/captures/h100x1-vm), nvbandwidth 51.3-54.2 and 53.6-55.1 on another. Each direction measured
while the other runs (``h2d_bidir``, ``d2h_bidir``, as nvbandwidth's host_to_device_bidirectional_memcpy_ce
and device_to_host_bidirectional_memcpy_ce measure them) is shown and judged ``info``: host memory and the
root complex bound it, not the link, and by how much depends on the platform. nvbandwidth on that healthy
Gen5 x16 H100 gave 34.5 GB/s H->D and 48.8 D->H that way (55 % and 77 % of the one-way raw rate;
benchmarks/results/h100x1-2026-11-24/nvbandwidth-host.json); its README's example gives H->D 26 GB/s
alone and 18.5 while D->H runs. No share of the link rate that every healthy link reaches both ways is
documented, so only the one-way figures decide. The link's generation and width are read during the copies: below its
maximum under load the link is at fault (``slow``, and said so); a low reading only before the test is
the GPU saving power when idle, not a fault. PCIe replays rising by ``REPLAY_LIMIT`` or more during the
test make it ``slow``; uncorrectable AER errors (non-fatal or fatal) rising make it ``failing``;
correctable AER errors are reported.
"""

from __future__ import annotations

from typing import Optional

from ..fabric import Fabric, pcie_gbps
from ..findings import Finding, gpu_subject, pair_subject
from ..model import BenchResult, Measurement, Snapshot

HEALTHY_SHARE = 0.70
FAILING_SHARE = 0.25

#: Figures judged against the link rate, with the multiple of the one-way rate they should reach.
JUDGED = {"ce_one_way": 1.0, "ce_reverse": 1.0, "ce_bidirectional": 2.0, "sm_read": 1.0, "sm_write": 1.0}
#: The same for a host link, against the GPU's PCIe rate one way. Only the one-way figures: both ways at once
#: (h2d_bidir, d2h_bidir; host_bidirectional of older results) are info (see above).
HOST_JUDGED = {"h2d": 1.0, "d2h": 1.0}
RANK = {"healthy": 0, "slow": 1, "failing": 2}
#: PCIe replays during one host-link test that make it slow. Our limit: a healthy link replays rarely (the
#: H100 capture: 2 since boot); NVIDIA's DCGM pcie plugin has a replay-count limit of its own (max_pcie_replays).
REPLAY_LIMIT = 8
#: CUDA errors that load from others can cause (another process holds the memory): not a link fault.
LOAD_ERRORS = ("cudaErrorMemoryAllocation", "out of memory")
#: a test that ended without figures to judge -> the words its finding says
ENDED_WORDS = {"timeout": "hung and was killed", "crashed": "crashed", "failed": "failed", "unavailable": "could not run"}


def share_verdict(share: float) -> str:
    if share >= HEALTHY_SHARE:
        return "healthy"
    if share >= FAILING_SHARE:
        return "slow"
    return "failing"


def host_link_expected(snapshot: Snapshot, a: int) -> tuple[Optional[float], str]:
    """A host link's raw rate one way (its narrowest PCIe link at max generation and width), and the basis."""
    gpu = snapshot.gpu(a)
    if gpu is None:
        return None, "GPU not in the snapshot"
    links = [(gpu.pcie_gen_max, gpu.pcie_width_max, f"GPU{a}")]
    links += [(d.link_gen_max, d.link_width_max, d.bdf) for d in gpu.pcie_path if d.role == "switch_upstream"]
    rated = [(pcie_gbps(g, w), g, w, who) for g, w, who in links if pcie_gbps(g, w) is not None]
    if not rated or pcie_gbps(gpu.pcie_gen_max, gpu.pcie_width_max) is None:
        return None, "PCIe (the GPU's max link generation or width not read)"
    gbps, g, w, who = min(rated, key=lambda x: x[0])
    return gbps, f"PCIe Gen{g} x{w}" + (f" (switch uplink {who})" if who != f"GPU{a}" else "")


def _judge_measurement(m: Measurement, link_gbps: Optional[float], host_gbps: Optional[float], table: dict = JUDGED) -> None:
    if m.name in table:
        m.expected = round(link_gbps * table[m.name], 1) if link_gbps else None
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


def link_faults(result: BenchResult) -> list[tuple[str, str]]:
    """(severity verdict, sentence) for what a host link's PCIe readings say of the link itself."""
    link = result.params.get("link")
    if not result.host_link or not isinstance(link, dict):
        return []
    out = []
    gmax, wmax = link.get("gen_max"), link.get("width_max")
    lg, lw = link.get("load_gen"), link.get("load_width")
    if lg is not None and lw is not None and gmax is not None and wmax is not None and (lg < gmax or lw < wmax):
        out.append(("slow", f"PCIe link trained low under load: Gen{lg} x{lw} during the copies, Gen{gmax} x{wmax} possible"))
    rb, ra = link.get("replay_before"), link.get("replay_after")
    if isinstance(rb, int) and isinstance(ra, int) and ra - rb >= REPLAY_LIMIT:
        out.append(("slow", f"PCIe replay counter rose by {ra - rb} during the test ({rb} -> {ra})"))
    for kind in ("nonfatal", "fatal"):
        b, a = link.get(f"aer_{kind}_before"), link.get(f"aer_{kind}_after")
        if isinstance(b, int) and isinstance(a, int) and a > b:
            out.append(("failing", f"AER {kind} (uncorrectable) errors rose by {a - b} during the test"))
    return out


def link_notes(result: BenchResult) -> list[str]:
    """What a host link's readings say that is not a fault (idle downclock, correctable errors, not read)."""
    link = result.params.get("link")
    if not result.host_link or not isinstance(link, dict):
        return []
    out = []
    ig, iw, gmax, wmax = link.get("idle_gen"), link.get("idle_width"), link.get("gen_max"), link.get("width_max")
    lg, lw = link.get("load_gen"), link.get("load_width")
    if ig is not None and gmax is not None and (ig < gmax or (iw or 0) < (wmax or 0)) and lg == gmax and lw == wmax:
        out.append(f"Gen{ig} x{iw} before the test is the idle GPU saving power: Gen{lg} x{lw} under load")
    elif lg is not None and lg == gmax and lw == wmax:
        out.append(f"PCIe Gen{lg} x{lw} under load, its maximum")
    if not link.get("load_samples"):
        out.append("the PCIe link was not read during the copies: judged on the figures alone")
    b, a = link.get("aer_correctable_before"), link.get("aer_correctable_after")
    if isinstance(b, int) and isinstance(a, int) and a > b:
        out.append(f"AER correctable errors rose by {a - b} during the test")
    return out


def _contended(result: BenchResult) -> bool:
    return result.contention is not None and result.contention.busy


def judge(result: BenchResult, fabric: Fabric) -> BenchResult:
    """Fill ``expected`` and ``verdict`` of every measurement and the result's overall verdict."""
    if result.host_link:
        gbps, basis = host_link_expected(fabric.snapshot, result.a)
        for m in result.measurements:
            _judge_measurement(m, gbps, None, HOST_JUDGED)
        result.params["expected_basis"] = basis
        one_way = result.measurement("h2d")
    else:
        exp = fabric.expected(result.a, result.b)
        host = fabric.host_expected(result.a, result.b)
        for m in result.measurements:
            _judge_measurement(m, exp.gbps, host)
        result.params["expected_basis"] = exp.basis
        one_way = result.measurement("ce_one_way")
    if one_way and one_way.value is not None and one_way.expected:
        result.params["share"] = round(one_way.value / one_way.expected, 3)
    faults = link_faults(result)
    load_error = result.status == "failed" and result.errors and all(any(e in x for e in LOAD_ERRORS) for x in result.errors)
    if result.status in ("cancelled", "interrupted"):
        result.verdict = "interrupted"
    elif result.status == "busy":
        result.verdict = "contended"
    elif result.status == "locked":
        result.verdict = None
    elif result.integrity == "corrupt" or result.params.get("peer_access") or result.params.get("xids"):
        result.verdict = "failing"  # a GPU fault: whatever else used the GPUs
    elif _contended(result) and (result.status == "ok" or load_error) and not faults:
        result.verdict = "contended"
        for m in result.measurements:
            if m.verdict in RANK:
                m.verdict = "contended"
    elif result.status != "ok":
        result.verdict = "failing"
    else:
        ranked = [m.verdict for m in result.measurements if m.verdict in RANK] + [v for v, _ in faults]
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
    """The one finding a result gives: None for healthy, contended, interrupted and unjudged results."""
    if result.status in ("cancelled", "interrupted", "busy", "locked") or result.verdict not in ("slow", "failing"):
        return None
    if result.params.get("xids") and result.status not in ("timeout", "crashed", "failed", "unavailable") and result.integrity != "corrupt":
        return _xid_finding(result)
    if result.host_link:
        return _host_link_finding(result)
    a, b = result.a, result.b
    sim = " (simulated)" if result.simulated else ""
    head = f"GPU{a}->GPU{b}"
    one_way = result.measurement("ce_one_way")
    if result.integrity == "corrupt":
        fid, summary = "bench.corrupt", f"{head}: data corrupted by a P2P copy (first bad byte at offset {result.first_bad_offset}){sim}"
    elif result.status in ENDED_WORDS:
        fid, summary = f"bench.{result.status}", f"{head}: copy test {ENDED_WORDS[result.status]}{sim}"
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
    return _result_finding(result, fid, pair_subject(a, b), summary, facts)


def _result_finding(result: BenchResult, fid: str, subject: str, summary: str, facts: dict, evidence: list = ()) -> Finding:
    """The finding of a judged result: its integrity, share and first error added to ``facts``; evidence: simulated,
    ``evidence``, the slow or failing figures, the errors; a warning when slow, else a problem."""
    if result.integrity in ("ok", "corrupt"):
        facts["bench.integrity"] = result.integrity
    if "share" in result.params:
        facts["bench.share"] = result.params["share"]
    if result.errors:
        facts["bench.error"] = result.errors[0]
    said = ([f"simulated from the expected figures ({result.params.get('expected_basis', '')})"] if result.simulated else [])
    said += list(evidence)
    said += [_figure(m) for m in result.measurements if m.verdict in ("slow", "failing")]
    said += list(result.errors)
    severity = "warning" if result.verdict == "slow" else "problem"
    return Finding(fid, subject, severity, summary, said, {k: v for k, v in facts.items() if v is not None})


def _xid_finding(result: BenchResult) -> Finding:
    a, b = result.a, result.b
    head = f"GPU{a} host link" if result.host_link else f"GPU{a}->GPU{b}"
    xids = str(result.params["xids"])
    codes = [int(x) for x in __import__("re").findall(r"Xid (\d+)", xids)]
    facts = {"bench.status": result.status, "bench.verdict": result.verdict, "bench.error": f"Xid during the copy test: {xids}"}
    if codes:
        facts["host.xid_latest"] = codes[-1]
        facts["host.xid_codes"] = ",".join(str(c) for c in dict.fromkeys(codes))
    return Finding("bench.xid", gpu_subject(a) if result.host_link else pair_subject(a, b), "problem",
                   f"{head}: the driver reported {xids} during the copy test", [f"NVML Xid events: {xids}"] + list(result.errors), facts)


def _host_link_finding(result: BenchResult) -> Finding:
    a = result.a
    sim = " (simulated)" if result.simulated else ""
    head = f"GPU{a} host link"
    faults = link_faults(result)
    h2d = result.measurement("h2d")
    if result.integrity == "corrupt":
        fid, summary = "bench.corrupt", f"{head}: data corrupted between host and GPU (first bad byte at offset {result.first_bad_offset}){sim}"
    elif result.status in ENDED_WORDS:
        fid, summary = f"bench.{result.status}", f"{head}: copy test {ENDED_WORDS[result.status]}{sim}"
    elif faults:
        fid = "bench.host_link_fault"
        summary = f"{head}: {faults[0][1]}{sim}"
    elif h2d and h2d.value is not None and h2d.expected:
        fid = f"bench.{result.verdict}"
        summary = (f"{head}: host->GPU copies reach {h2d.value:g} GB/s, {h2d.value / h2d.expected:.0%} of the "
                   f"{h2d.expected:g} GB/s the link should give ({result.params.get('expected_basis', '')}){sim}")
    else:
        fid, summary = f"bench.{result.verdict}", f"{head}: copy test {result.verdict}{sim}"
    link = result.params.get("link") if isinstance(result.params.get("link"), dict) else {}
    facts: dict = {"bench.status": result.status, "bench.verdict": result.verdict, "bench.host_link": True}
    if any("trained low" in text for _, text in faults):
        facts["gpu.pcie_degraded_under_load"] = True
        facts["gpu.pcie_gen_cur"], facts["gpu.pcie_width_cur"] = link.get("load_gen"), link.get("load_width")
        facts["gpu.pcie_gen_max"], facts["gpu.pcie_width_max"] = link.get("gen_max"), link.get("width_max")
    return _result_finding(result, fid, gpu_subject(a), summary, facts, [text for _, text in faults])


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
