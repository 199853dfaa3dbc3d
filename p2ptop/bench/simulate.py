"""Simulated copy tests for demo and replay snapshots: figures derived from the fabric, marked simulated.

A demo or a replayed snapshot is not the machine p2ptop runs on, so nothing is measured. Each figure
is the fabric's expected link rate (what the links trained at now) times the share a healthy link
reached in the real run on 2x H200 through NVSwitch (``EFFICIENCY``), with a small deterministic
spread for min/max. A pair whose NVML P2P read status is not OK behaves as CUDA would: enabling peer
access fails with cudaErrorPeerAccessUnsupported, the copy-engine copies go through host memory and the
SM tests cannot run. Every result has ``simulated=True`` and says so in ``params["simulated_from"]``.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Optional

from ..fabric import Fabric, pcie_gbps
from ..model import BenchResult, Measurement, Snapshot
from .catalog import MEASUREMENTS, TEST_MEASUREMENTS, TESTS

#: Share of the link rate reached on a healthy pair (nvbandwidth on 2x H200: 394, 779, 376, 370 of 450/900).
#: Share of the link rate reached on a healthy pair: p2ptop on 2x H200 through NVSwitch (2026-11-23):
#: 394, 394, 779, 374, 370 GB/s of 450 (900 both ways).
EFFICIENCY = {"ce_one_way": 0.876, "ce_reverse": 0.876, "ce_bidirectional": 1.731, "sm_read": 0.831, "sm_write": 0.822}
HOST_STAGED_SHARE = 0.625  # 39.4 of 63 GB/s (PCIe Gen5 x16) with peer access off, same run
LATENCY_US = {  # (NVLink, PCIe): small-copy and dependent-read latency, microseconds
    "latency_copy_us": (2.2, 2.6),  # NVLink: same run (2.17-2.19); PCIe: a guess, labelled simulated
    "latency_kernel_us": (0.86, 1.8),  # NVLink: same run; PCIe: a guess, labelled simulated
}
STAGED_LATENCY_US = 16.0  # a small copy through host memory (p2pBandwidthLatencyTest, P2P off)
SIMULATED_TOTAL_S = 2.0  # a simulated --all never takes longer than this, whatever the pair count
PEER_UNSUPPORTED = ("cudaErrorPeerAccessUnsupported", 217, "peer access is not supported between these two devices")
#: Host link, share of the PCIe rate: one H100 SXM, Gen5 x16 (63 GB/s), pinned copies 52.85 H->D, 50.99 D->H
#: (shared/captures/h100x1-vm). Both at once and latency were not measured there: not simulated.
HOST_EFFICIENCY = {"h2d": 52.85 / 63.0, "d2h": 50.99 / 63.0}


def simulate_host(snapshot: Snapshot, a: int, tests: set[str]) -> BenchResult:
    """GPU a's host link from its PCIe link as trained now, labelled simulated."""
    from .catalog import HOST_TESTS
    from .judge import host_link_expected

    gpu = snapshot.gpu(a)
    gbps, basis = host_link_expected(snapshot, a)
    trained = pcie_gbps(gpu.pcie_gen_cur, gpu.pcie_width_cur) if gpu is not None else None
    if trained is not None and gbps is not None:
        gbps = min(gbps, trained) if not (gpu.utilization_gpu is not None and gpu.utilization_gpu < 20) else gbps
    rng = random.Random(a * 100003 + a)
    r = BenchResult(a=a, b=a, simulated=True, integrity="not run", params={"simulated_from": f"expected figures of the host link ({basis})"})
    wanted = [t for t in HOST_TESTS if t in tests] or list(HOST_TESTS)
    for test in wanted:
        for name in TEST_MEASUREMENTS[test]:
            unit = MEASUREMENTS[name][0]
            if name in HOST_EFFICIENCY and gbps:
                value, lo, hi = _spread(rng, gbps * HOST_EFFICIENCY[name])
                r.measurements.append(Measurement(name, value=value, unit=unit, min=lo, max=hi))
            else:  # no measured reference to simulate it from: left out, and said so
                r.params.setdefault("not_simulated", []).append(name)
    if "host_integrity" in wanted:
        r.integrity = "ok"
    return r


def _spread(rng: random.Random, value: float) -> tuple[float, float, float]:
    lo, hi = value * (1 - rng.uniform(0.002, 0.01)), value * (1 + rng.uniform(0.002, 0.01))
    return round(value, 2), round(lo, 2), round(hi, 2)


def simulate_pair(snapshot: Snapshot, fabric: Fabric, a: int, b: int, tests: set[str]) -> BenchResult:
    exp = fabric.expected(a, b)
    link = exp.trained_gbps if exp.trained_gbps is not None else exp.gbps
    host = fabric.host_expected(a, b)
    staged = host * HOST_STAGED_SHARE if host else None
    pair = snapshot.pair(a, b)
    peer_ok = pair is None or pair.status("read") in (None, "OK")
    rng = random.Random(a * 100003 + b)
    r = BenchResult(a=a, b=b, simulated=True, integrity="not run",
                    params={"simulated_from": f"expected figures of the fabric ({exp.basis})"})
    if not peer_ok:
        name, code, text = PEER_UNSUPPORTED
        r.params["peer_access"] = name
        r.errors.append(f"peer_access: {name} ({code}): {text}")
    for test in TESTS:
        if test not in tests:
            continue
        for name in TEST_MEASUREMENTS[test]:
            unit = MEASUREMENTS[name][0]
            if name in EFFICIENCY:
                if not peer_ok and name.startswith("sm_"):
                    r.measurements.append(Measurement(name, unit=unit, error="not run: peer access unavailable"))
                    continue
                base = (staged * EFFICIENCY[name] / EFFICIENCY["ce_one_way"]) if not peer_ok else (link * EFFICIENCY[name] if link else None)
            elif name == "host_staged":
                base = staged
            elif not peer_ok:
                base = STAGED_LATENCY_US if name == "latency_copy_us" else None
            else:
                base = LATENCY_US[name][0 if exp.kind == "nvlink" else 1]
            if base is None:
                r.measurements.append(Measurement(name, unit=unit, error="not simulated: the link rate is not known" if peer_ok else "not run: peer access unavailable"))
                continue
            value, lo, hi = _spread(rng, base)
            r.measurements.append(Measurement(name, value=value, unit=unit, min=lo, max=hi))
    if "integrity" in tests:
        r.integrity = "ok"
    return r


def simulate_pairs(snapshot: Snapshot, fabric: Fabric, pairs, options, emit, cancel: Optional[threading.Event]):
    """Yield one simulated, judged result per pair, with progress events; stops at cancel."""
    steps = [t for t in TESTS if t in options.tests] or ["ce"]
    pause = min(options.simulated_pair_s, SIMULATED_TOTAL_S / max(1, len(pairs))) / len(steps)
    for i, (a, b) in enumerate(pairs):
        started = time.monotonic()
        for k, step in enumerate(steps):
            if cancel is not None and cancel.is_set():
                break
            emit.progress(a, b, step, k / len(steps), f"{TESTS[step]} (simulated)")
            if pause:
                time.sleep(pause)
        if cancel is not None and cancel.is_set():
            for a2, b2 in pairs[i:]:
                yield emit.result(BenchResult(a=a2, b=b2, status="cancelled", simulated=True, integrity="not run",
                                              errors=["cancelled"]))
            return
        r = simulate_host(snapshot, a, set(options.tests)) if a == b else simulate_pair(snapshot, fabric, a, b, set(options.tests))
        r.duration_s = round(time.monotonic() - started, 3)
        yield emit.result(r)
