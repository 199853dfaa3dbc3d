"""The NCCL runner against fake rank workers (tests/fake_workers/fake_nccl_worker.py: SIMULATED logs)."""

import os
import pathlib
import sys
import threading
import time

import pytest

from p2ptop.demos import load_demo
from p2ptop.nccl.runner import ONE_GPU, NcclOptions, nccl_available, plan_all, run_group, run_plan

from .workers import alive, assert_all_gone, live_snapshot

FAKE = pathlib.Path(__file__).parent / "fake_workers" / "fake_nccl_worker.py"
SIZES = [8, 1024, 1 << 20, 256 << 20]


@pytest.fixture
def live():
    """A 2-GPU snapshot that claims to be live, so the runner starts a worker instead of simulating."""
    return live_snapshot()


def opts(mode, timeout=10.0):
    return NcclOptions(sizes=SIZES, worker=[sys.executable, str(FAKE), mode], timeout_s=timeout)


def test_ok_run_gives_rows_transports_and_version(live, monkeypatch):
    monkeypatch.setenv("FAKE_NCCL_VIA", "P2P/CUMEM/read")
    r = run_group(live, [0, 1], opts("ok"))
    assert r.status == "ok", r.errors
    assert r.nccl_version == "2.28.9"
    assert [(x["op"], x["bytes"]) for x in r.rows] == [("sendrecv", s) for s in SIZES] + [("all_reduce", s) for s in SIZES]
    big = r.best("sendrecv")
    assert big["busbw"] == pytest.approx((256 << 20) / 1e9 / (20e-6 + (256 << 20) / 300e9), rel=1e-3)
    pair = r.table["pairs"][0]
    assert pair["gpus"] == [0, 1] and pair["worst"] == "P2P/CUMEM" and pair["read"]
    assert pair["forward"] == {"P2P/CUMEM": 2} and pair["reverse"] == {"P2P/CUMEM": 2}
    assert {x["how"] for x in r.table["ranks"]} == {"the GPU p2ptop gave this rank"}
    assert "NCCL INFO" in r.log_text


def test_children_get_the_debug_variables_and_no_nvls(live, monkeypatch, tmp_path):
    monkeypatch.delenv("NCCL_NVLS_ENABLE", raising=False)
    monkeypatch.setenv("NCCL_DEBUG_FILE", str(tmp_path / "x.%h.%p"))
    probe = tmp_path / "env.py"
    probe.write_text("import json, os, sys\njob = json.loads(sys.stdin.readline())\n"
                     "print(json.dumps({'type': 'fatal', 'message': json.dumps({k: os.environ.get(k) for k in "
                     "('NCCL_DEBUG', 'NCCL_DEBUG_SUBSYS', 'NCCL_NVLS_ENABLE', 'NCCL_DEBUG_FILE', 'CUDA_DEVICE_ORDER')})}))\n")
    r = run_group(live, [0, 1], NcclOptions(sizes=SIZES, worker=[sys.executable, str(probe)], timeout_s=5))
    seen = [e for e in r.errors if "NCCL_DEBUG" in e and "{" in e][0]
    assert '"NCCL_DEBUG": "INFO"' in seen and '"NCCL_DEBUG_SUBSYS": "INIT,P2P,SHM,NET,ENV"' in seen
    assert '"NCCL_NVLS_ENABLE": "0"' in seen and '"NCCL_DEBUG_FILE": null' in seen and '"PCI_BUS_ID"' in seen
    assert any("NCCL_DEBUG_FILE was set" in e for e in r.errors)


def test_user_nvls_setting_is_kept(live, monkeypatch, tmp_path):
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    probe = tmp_path / "env.py"
    probe.write_text("import json, os, sys\nsys.stdin.readline()\n"
                     "print(json.dumps({'type': 'fatal', 'message': 'NVLS=' + str(os.environ.get('NCCL_NVLS_ENABLE'))}))\n")
    r = run_group(live, [0, 1], NcclOptions(sizes=SIZES, worker=[sys.executable, str(probe)], timeout_s=5))
    assert any("NVLS=1" in e for e in r.errors)


def test_a_hanging_rank_times_out_and_every_rank_is_killed(live, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_PIDFILE", str(tmp_path / "pids"))
    t0 = time.monotonic()
    r = run_group(live, [0, 1], opts("hang", timeout=1.0))
    assert time.monotonic() - t0 < 8
    assert r.status == "timeout"
    assert any("within 1 s" in e and "one missing rank hangs the rest" in e for e in r.errors)
    assert_all_gone(tmp_path / "pids")
    assert r.table["pairs"], "the NCCL lines printed before the hang are still read"


def test_a_crashed_rank_is_named_and_its_peer_killed(live, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_PIDFILE", str(tmp_path / "pids"))
    r = run_group(live, [0, 1], opts("crash"))
    assert r.status == "crashed"
    assert any("rank 1 (GPU1)" in e and "SIGSEGV" in e for e in r.errors)
    assert_all_gone(tmp_path / "pids")


def test_an_nccl_error_in_one_rank_ends_the_run_with_its_words(live, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_PIDFILE", str(tmp_path / "pids"))
    t0 = time.monotonic()
    r = run_group(live, [0, 1], opts("init_error", timeout=30))
    assert time.monotonic() - t0 < 10, "a failed rank must not leave its peer waiting for the full timeout"
    assert r.status == "failed"
    assert any("rank 1 (GPU1): init: ncclSystemError (2): unhandled system error" in e for e in r.errors)
    assert_all_gone(tmp_path / "pids")


def test_garbage_is_kept_as_evidence(live):
    r = run_group(live, [0, 1], opts("garbage"))
    assert r.status == "ok"
    assert any("unreadable output" in e and "not json at all" in e and "\x1b" not in e for e in r.errors)


def test_no_nccl_makes_the_run_unavailable_with_the_reason(live):
    r = run_group(live, [0, 1], opts("fatal"))
    assert r.status == "unavailable"
    assert any("libnccl.so.2" in e for e in r.errors)


def test_cancel_kills_the_ranks_and_their_children(live, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_PIDFILE", str(tmp_path / "pids"))
    cancel = threading.Event()
    threading.Timer(0.8, cancel.set).start()
    t0 = time.monotonic()
    r = run_group(live, [0, 1], opts("grandchild", timeout=60), cancel=cancel)
    assert time.monotonic() - t0 < 6
    assert r.status == "cancelled"
    assert_all_gone(tmp_path / "pids")


def test_missing_worker_program(live):
    r = run_group(live, [0, 1], NcclOptions(sizes=SIZES, worker=["/nonexistent/nccl-worker"]))
    assert r.status == "unavailable" and "cannot start" in r.errors[0]


def test_one_gpu_and_same_gpu_are_refused_plainly(live):
    r = run_group(live, [0, 0], opts("ok"))
    assert r.status == "failed" and "distinct GPU per rank" in r.errors[0]
    one = load_demo("h200x2-vm")
    one.source.kind = "nvml"
    one.gpus = one.gpus[:1]
    ok, why = nccl_available(one)
    assert not ok and why == ONE_GPU


def test_demo_is_not_this_machine():
    ok, why = nccl_available(load_demo("h200x2-vm"))
    assert not ok and "not this machine" in why


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_plan_all_covers_every_pair_once_with_no_gpu_twice_in_a_round(n):
    rounds = plan_all(list(range(n)))
    pairs = [tuple(g) for r in rounds for g in r if len(g) == 2]
    assert sorted(pairs) == [(a, b) for a in range(n) for b in range(a + 1, n)]
    for r in rounds:
        used = [g for job in r for g in job]
        assert len(used) == len(set(used))
    if n > 2:
        assert rounds[-1] == [list(range(n))]  # then all GPUs together
    else:
        assert rounds == [[[0, 1]]]  # the pair is all GPUs: run once
    assert len(rounds) == (n - 1 if n % 2 == 0 else n) + (1 if n > 2 else 0)


def test_run_plan_runs_a_round_side_by_side(tmp_path, monkeypatch):
    snap = load_demo("dgx-h100")
    snap.source.kind = "nvml"
    rounds = plan_all(snap.gpu_indices[:4])
    t0 = time.monotonic()
    runs = run_plan(snap, rounds[:1], opts("ok"))
    assert [r.gpus for r in runs] == rounds[0] and all(r.status == "ok" for r in runs)
    assert runs[0].beside == [rounds[0][1]]
    assert time.monotonic() - t0 < 20


def test_cancel_during_a_plan_marks_the_later_rounds_cancelled(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_PIDFILE", str(tmp_path / "pids"))
    snap = load_demo("dgx-h100")
    snap.source.kind = "nvml"
    rounds = plan_all(snap.gpu_indices[:4])
    cancel = threading.Event()
    threading.Timer(0.8, cancel.set).start()
    t0 = time.monotonic()
    runs = run_plan(snap, rounds, opts("hang", timeout=60), cancel=cancel)
    assert time.monotonic() - t0 < 10
    assert [r.gpus for r in runs] == [g for r in rounds for g in r]
    assert {r.status for r in runs[:2]} == {"cancelled"} and all(r.status == "cancelled" for r in runs)
    assert any("before it started" in e for r in runs[2:] for e in r.errors)
    assert_all_gone(tmp_path / "pids")


def test_busbw_far_under_the_link_is_a_problem(live, monkeypatch):
    from p2ptop.nccl.findings import run_findings

    monkeypatch.setenv("FAKE_NCCL_GBPS", "100")
    r = run_group(live, [0, 1], opts("ok"))
    f = [x for x in run_findings([r], live) if x.id == "nccl.busbw_low"]
    assert len(f) == 1 and f[0].severity == "problem" and f[0].subject == "pair:0-1"
    assert f[0].facts["nccl.busbw_share"] == pytest.approx(r.best("sendrecv")["busbw"] / 450, abs=1e-3) and f[0].facts["nccl.busbw_share"] < 0.5
    assert "18 x NVLink 4.0" in f[0].summary
    monkeypatch.setenv("FAKE_NCCL_GBPS", "360")  # 80 % of the link: what healthy NCCL reaches
    assert not [x for x in run_findings([run_group(live, [0, 1], opts("ok"))], live) if x.id == "nccl.busbw_low"]


def test_a_failed_run_is_a_finding_with_nccls_result(live):
    from p2ptop.nccl.findings import run_findings

    r = run_group(live, [0, 1], opts("init_error"))
    f = [x for x in run_findings([r], live) if x.id == "nccl.run_failed"]
    assert f and f[0].facts["error.nccl"] == "ncclSystemError" and f[0].facts["nccl.status"] == "failed"


def test_one_rank_can_be_started_through_a_wrapper(live, tmp_path):
    wrap = tmp_path / "wrap.sh"
    wrap.write_text('#!/bin/sh\necho "$$" >> "$(dirname "$0")/wrapped"\nexec "$@"\n')
    wrap.chmod(0o755)
    o = opts("ok")
    o.wrap = {1: [str(wrap)]}
    r = run_group(live, [0, 1], o)
    assert r.status == "ok" and len((tmp_path / "wrapped").read_text().split()) == 1


def test_one_gpu_is_a_one_rank_communicator(live, monkeypatch):
    """NCCL allows nranks=1: on a one-GPU host the worker, the log reader and the busbw code still run."""
    one = load_demo("h200x2-vm")
    one.source.kind = "nvml"
    one.source.simulated = False
    one.gpus = one.gpus[:1]
    assert nccl_available(one, opts("ok"), nranks=1) == (True, "")
    assert nccl_available(one, opts("ok")) == (False, ONE_GPU)
    r = run_group(one, [0], opts("ok"))
    assert r.status == "ok", r.errors
    assert r.nccl_version == "2.28.9" and "NCCL INFO" in r.log_text
    assert r.table["ranks"][0]["gpu"] == 0 and r.table["pairs"] == []
    assert r.table["self"][0]["rank"] == 0 and r.table["self"][0]["gpu"] == 0
    ar = [x for x in r.rows if x["op"] == "all_reduce"]
    sr = [x for x in r.rows if x["op"] == "sendrecv"]
    assert len(ar) == len(sr) == len(SIZES)
    assert all(x["busbw"] == 0.0 for x in ar) and ar[-1]["algbw"] > 0  # nccl-tests: 2(n-1)/n = 0 for n=1
    assert all(x["busbw"] == x["algbw"] for x in sr)
    from p2ptop.nccl.findings import run_findings

    assert run_findings([r], one) == []
    failed = run_group(one, [0], opts("fatal"))
    assert failed.status == "unavailable" and [f.subject for f in run_findings([failed], one)] == ["gpu:0"]
