"""Findings from a snapshot: what is wrong, or worth knowing, per host, GPU and pair.

``findings_for(snapshot)`` is the one entry point the dashboard, ``explain``, ``doctor`` and the
report use. Host facts (``snapshot.host``) and copy-test results (``snapshot.bench``) add to it.
"""

from __future__ import annotations

from typing import Optional

from .fabric import Fabric
from .findings import Finding, gpu_subject, pair_subject
from .model import GPU, P2P_STATUS_TEXT, Snapshot

CONSUMER_BRANDS = {"GEFORCE", "TITAN", "GEFORCE_RTX", "TITAN_RTX"}
BUSY_PERCENT = 20  # a GPU busier than this is "under load" for PCIe link judgements


def gpu_facts(gpu: GPU) -> dict:
    facts = {
        "gpu.name": gpu.name,
        "gpu.brand": gpu.brand,
        "gpu.consumer": (gpu.brand or "").upper() in CONSUMER_BRANDS or "GeForce" in (gpu.name or ""),
        "gpu.architecture": gpu.architecture,
        "gpu.virtualization": gpu.virtualization_mode,
        "gpu.nvlink_down": sum(1 for l in gpu.nvlinks if l.state == "inactive"),
        "gpu.nvlink_errors": sum(v for l in gpu.nvlinks for v in l.counters.values() if v),
        "gpu.fabric_state": gpu.fabric.state,
        "gpu.fabric_status": gpu.fabric.status,
        "gpu.pcie_gen_cur": gpu.pcie_gen_cur,
        "gpu.pcie_gen_max": gpu.pcie_gen_max,
        "gpu.pcie_width_cur": gpu.pcie_width_cur,
        "gpu.pcie_width_max": gpu.pcie_width_max,
    }
    lost = any("lost" in why.lower() for why in gpu.na.values())
    if lost:
        facts["gpu.lost"] = True
    return {k: v for k, v in facts.items() if v is not None}


def _gpu_findings(gpu: GPU) -> list[Finding]:
    out: list[Finding] = []
    facts = gpu_facts(gpu)
    subj = gpu_subject(gpu.index)
    if facts.get("gpu.lost"):
        out.append(Finding("gpu.lost", subj, "problem", f"GPU{gpu.index}: NVML reports the GPU is lost",
                           [f"{k}: {v}" for k, v in gpu.na.items() if "lost" in v.lower()][:3], facts))
    down = [l.link for l in gpu.nvlinks if l.state == "inactive"]
    if down and gpu.active_links:
        out.append(Finding("nvlink.down", subj, "problem",
                           f"GPU{gpu.index}: {len(down)} of {len(gpu.nvlinks)} NVLinks down (links {', '.join(map(str, down))})",
                           [f"NVML NVLink state link {l} = inactive" for l in down], facts))
    elif down and not gpu.active_links:
        out.append(Finding("nvlink.all_down", subj, "problem", f"GPU{gpu.index}: all {len(down)} NVLinks are down",
                           ["NVML NVLink state = inactive on every link"], facts))
    errs = {l.link: {k: v for k, v in l.counters.items() if v} for l in gpu.nvlinks}
    errs = {k: v for k, v in errs.items() if v}
    if errs:
        ev = [f"link {k}: " + ", ".join(f"{n}={c}" for n, c in v.items()) for k, v in errs.items()]
        out.append(Finding("nvlink.errors", subj, "warning", f"GPU{gpu.index}: NVLink error counters are not zero", ev, facts))
    if gpu.pcie_degraded:
        busy = gpu.utilization_gpu is not None and gpu.utilization_gpu >= BUSY_PERCENT
        width_low = gpu.pcie_width_cur is not None and gpu.pcie_width_max is not None and gpu.pcie_width_cur < gpu.pcie_width_max
        text = f"PCIe Gen{gpu.pcie_gen_cur} x{gpu.pcie_width_cur} of Gen{gpu.pcie_gen_max} x{gpu.pcie_width_max}"
        if width_low or busy:
            f = dict(facts, **{"gpu.pcie_degraded_under_load": True})
            load = f"{gpu.utilization_gpu}% busy" if gpu.utilization_gpu is not None else "load not known"
            out.append(Finding("pcie.degraded", subj, "problem", f"GPU{gpu.index}: {text} ({load})",
                               [f"NVML current/max link: {text}", f"utilization {load}"], f))
        else:
            f = dict(facts, **{"gpu.pcie_idle_downclock": True})
            out.append(Finding("pcie.idle_downclock", subj, "info",
                               f"GPU{gpu.index}: {text} while idle (links slow down when idle; not a fault)",
                               [f"NVML current/max link: {text}", f"utilization {gpu.utilization_gpu}%"], f))
    if gpu.fabric.state not in (None, "NOT_SUPPORTED", "COMPLETED") or (gpu.fabric.status not in (None, "Success")):
        out.append(Finding("fabric.not_ready", subj, "problem",
                           f"GPU{gpu.index}: NVSwitch fabric registration {gpu.fabric.state} ({gpu.fabric.status})",
                           [f"NVML fabric state {gpu.fabric.state}, status {gpu.fabric.status}"], facts))
    return out


def pair_findings(snapshot: Snapshot, fabric: Fabric, a: int, b: int) -> list[Finding]:
    pair = snapshot.pair(a, b)
    if pair is None:
        return []
    path = fabric.path_class(a, b)
    facts: dict = {"pair.path": path, "pair.nvlink_count": fabric.nvlink_count(a, b), "pair.cross_socket": path == "SYS"}
    for cap, status in pair.p2p.items():
        if status is not None:
            facts[f"p2p.{cap}"] = status
    for i in (a, b):
        gpu = snapshot.gpu(i)
        if gpu:
            for k, v in gpu_facts(gpu).items():
                if isinstance(v, bool):
                    facts[k] = facts.get(k, False) or v
                elif isinstance(v, int) and k in ("gpu.nvlink_down", "gpu.nvlink_errors"):
                    facts[k] = max(facts.get(k, 0), v)
                else:
                    facts.setdefault(k, v)
    out: list[Finding] = []
    subj = pair_subject(a, b)
    bad = {cap: s for cap, s in pair.p2p.items() if cap in ("read", "write") and s not in (None, "OK")}
    if bad:
        reasons = sorted(set(bad.values()))
        text = ", ".join(P2P_STATUS_TEXT.get(r, r) for r in reasons)
        out.append(Finding("p2p.not_supported", subj, "problem", f"GPU{a}->GPU{b}: P2P not available ({text}); copies go through host memory",
                           [f"NVML P2P {cap} = {P2P_STATUS_TEXT.get(s, s)}" for cap, s in bad.items()] + [f"path {path}"], facts))
    elif path in ("PHB", "NODE", "SYS") and not facts["pair.nvlink_count"]:
        out.append(Finding("p2p.through_cpu", subj, "info", f"GPU{a}->GPU{b}: P2P works but crosses the CPU ({path})",
                           [f"path {path}"], facts))
    return out


def findings_for(snapshot: Snapshot, fabric: Optional[Fabric] = None) -> list[Finding]:
    """Every finding about a snapshot: GPUs, ordered pairs, then host facts and copy tests where present."""
    fabric = fabric or Fabric(snapshot)
    out: list[Finding] = []
    for gpu in snapshot.gpus:
        out.extend(_gpu_findings(gpu))
    for a in snapshot.gpu_indices:
        for b in snapshot.gpu_indices:
            if a != b:
                out.extend(pair_findings(snapshot, fabric, a, b))
    return out
