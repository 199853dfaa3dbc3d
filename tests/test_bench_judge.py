"""Judging copy-test figures against the link, and the findings bad results give."""

import pytest

from p2ptop.bench.judge import FAILING_SHARE, HEALTHY_SHARE, bench_findings, judge, share_verdict
from p2ptop.bench.simulate import simulate_pair
from p2ptop.demos import load_demo
from p2ptop.fabric import Fabric
from p2ptop.findings import FACT_KEYS
from p2ptop.model import BenchResult, Measurement

# measured on 2x H200 through NVSwitch (nvidia-h200-x2, 2026-11-23)
H200 = {"ce_one_way": 394.2, "ce_reverse": 394.1, "ce_bidirectional": 779.4, "sm_read": 374.0, "sm_write": 369.8,
        "latency_copy_us": 2.17, "latency_kernel_us": 0.86, "host_staged": 39.4}


@pytest.fixture
def fabric():
    return Fabric(load_demo("h200x2-vm"))


def result(scale=1.0, **kw):
    ms = [Measurement(n, value=v * (scale if n.startswith(("ce_", "sm_")) else 1), unit="us" if n.endswith("_us") else "GB/s")
          for n, v in H200.items()]
    return BenchResult(a=0, b=1, measurements=ms, integrity="ok", **kw)


def test_thresholds():
    assert (HEALTHY_SHARE, FAILING_SHARE) == (0.70, 0.25)
    assert share_verdict(0.876) == "healthy"
    assert share_verdict(0.70) == "healthy"
    assert share_verdict(0.69) == "slow"
    assert share_verdict(0.25) == "slow"
    assert share_verdict(0.0845) == "failing"  # 38 of 450 GB/s: P2P through host memory


def test_the_measured_h200_pair_is_healthy(fabric):
    r = judge(result(), fabric)
    assert r.verdict == "healthy"
    assert r.measurement("ce_one_way").expected == 450.0
    assert r.measurement("ce_bidirectional").expected == 900.0
    assert r.measurement("host_staged").expected == 63.0 and r.measurement("host_staged").verdict == "info"
    assert r.measurement("latency_copy_us").verdict == "info"
    assert r.params["share"] == pytest.approx(0.876, abs=1e-3)


def test_slow_and_failing(fabric):
    assert judge(result(0.5), fabric).verdict == "slow"
    assert judge(result(0.1), fabric).verdict == "failing"


def test_a_failed_copy_is_failing(fabric):
    r = result()
    r.measurements[0] = Measurement("ce_one_way", error="cudaErrorLaunchFailure (719): unspecified launch failure")
    assert judge(r, fabric).verdict == "failing"


@pytest.mark.parametrize("kw", [{"status": "timeout"}, {"status": "crashed"}, {"status": "failed"}, {"integrity": "corrupt"}])
def test_a_bad_end_or_corruption_is_failing_whatever_the_figures(fabric, kw):
    r = result()
    for k, v in kw.items():
        setattr(r, k, v)
    assert judge(r, fabric).verdict == "failing"


def test_peer_access_error_is_failing(fabric):
    r = result()
    r.params["peer_access"] = "cudaErrorPeerAccessUnsupported"
    assert judge(r, fabric).verdict == "failing"


def test_cancelled_is_interrupted_not_failing(fabric):
    assert judge(result(status="cancelled"), fabric).verdict == "interrupted"


def test_unknown_link_rate_is_info():
    snap = load_demo("nvl72")
    fab = Fabric(snap)
    r = judge(BenchResult(a=0, b=1, measurements=[Measurement("ce_one_way", value=700.0)]), fab)
    assert r.measurement("ce_one_way").expected == 900.0  # NVLink 5.0 is cited
    snap.gpus[0].nvlinks[0].version = 8  # NVLink 6.0: no cited per-link figure
    for link in snap.gpus[0].nvlinks + snap.gpus[1].nvlinks:
        link.version = 8
    r = judge(BenchResult(a=0, b=1, measurements=[Measurement("ce_one_way", value=700.0)]), Fabric(snap))
    assert r.measurement("ce_one_way").expected is None and r.measurement("ce_one_way").verdict == "info"


def test_findings_for_bad_results_only(fabric):
    snap = load_demo("h200x2-vm")
    snap.bench = [result(0.5), result(), result()]
    snap.bench[2].a, snap.bench[2].b = 1, 0
    snap.bench[2].integrity, snap.bench[2].first_bad_offset = "corrupt", 4096
    fs = bench_findings(snap, fabric)
    # pair 0-1: the latest (healthy) result wins, so no finding; pair 1-0: corrupt
    assert [(f.id, f.subject, f.severity) for f in fs] == [("bench.corrupt", "pair:1-0", "problem")]
    assert "4096" in fs[0].summary


def test_slow_finding_has_the_share_and_known_fact_keys(fabric):
    snap = load_demo("h200x2-vm")
    snap.bench = [result(0.5)]
    (f,) = bench_findings(snap, fabric)
    assert f.id == "bench.slow" and f.severity == "warning"
    assert f.facts["bench.share"] == pytest.approx(0.438, abs=1e-3)
    assert f.facts["bench.verdict"] == "slow" and f.facts["pair.path"] == "NV18"
    assert set(f.facts) <= set(FACT_KEYS)
    assert "197.1 GB/s, 44% of the 450 GB/s" in f.summary


def test_error_findings_carry_the_cuda_text(fabric):
    snap = load_demo("pcie-4gpu-iommu")
    fab = Fabric(snap)
    snap.bench = [judge(simulate_pair(snap, fab, 0, 2, {"ce", "sm"}), fab)]
    (f,) = bench_findings(snap, fab)
    assert f.id == "bench.peer_access" and f.severity == "problem"
    assert f.facts["bench.peer_access"] == "cudaErrorPeerAccessUnsupported"
    assert "cudaErrorPeerAccessUnsupported (217)" in f.facts["bench.error"]
    assert "(simulated)" in f.summary
    assert set(f.facts) <= set(FACT_KEYS)


def test_simulated_degraded_links_are_slower():
    snap = load_demo("nvlink-degraded")
    fab = Fabric(snap)
    full = simulate_pair(snap, fab, 0, 1, {"ce"})
    degraded = [(a, b) for a in snap.gpu_indices for b in snap.gpu_indices
                if a != b and fab.expected(a, b).trained_gbps != fab.expected(a, b).gbps]
    assert degraded
    slow = simulate_pair(snap, fab, *degraded[0], {"ce"})
    assert slow.measurement("ce_one_way").value < full.measurement("ce_one_way").value
    assert slow.simulated and "expected figures" in slow.params["simulated_from"]
