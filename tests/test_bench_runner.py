"""The copy-test runner against fake workers: hangs, crashes, garbage, OOM, corruption, cancel, timeout."""

import dataclasses
import importlib.util
import os
import pathlib
import sys
import threading
import time

import pytest

from p2ptop.bench.runner import BenchOptions, bench_available, run_all, run_pair
from p2ptop.demos import load_demo

from .workers import alive, assert_all_gone, live_snapshot

FAKE = pathlib.Path(__file__).parent / "fake_workers" / "fake_worker.py"
BOTH = [(0, 1), (1, 0)]  # two jobs in one run (bench --all itself tests each unordered pair once)


@pytest.fixture
def live():
    """A 2-GPU snapshot that claims to be live, so the runner starts a worker instead of simulating."""
    return live_snapshot()


def opts(mode, pidfile=None, timeout=10.0):
    cmd = [sys.executable, str(FAKE), mode] + ([str(pidfile)] if pidfile else [])
    return BenchOptions(worker=cmd, timeout_s=timeout, check_contention=False)  # hermetic: this host's GPUs do not matter


def test_ok_worker_gives_judged_results(live):
    r = run_pair(live, 0, 1, opts("ok"))
    assert r.status == "ok" and not r.simulated
    assert r.measurement("ce_one_way").value == 390.0
    assert r.measurement("ce_one_way").expected == 450.0  # 18 x NVLink 4.0 at 25 GB/s
    assert r.measurement("ce_bidirectional").expected == 900.0
    assert r.verdict == "healthy" and r.integrity == "ok"
    assert r.params["share"] == pytest.approx(390 / 450, abs=1e-3)
    assert r.params["worker"]["cupy"] == "fake"


def test_all_pairs_in_one_worker(live, tmp_path):
    events = []
    rs = run_all(live, BOTH, opts("ok", tmp_path / "pids"), on_event=events.append)
    assert [(r.a, r.b) for r in rs] == [(0, 1), (1, 0)]
    assert all(r.status == "ok" for r in rs)
    assert len((tmp_path / "pids").read_text().split()) == 1  # one worker process for both pairs
    assert [e["type"] for e in events if e["type"] == "result"] == ["result", "result"]
    progress = [e for e in events if e["type"] == "progress"]
    assert progress and all(0 <= e["fraction"] <= 1 and 0 <= e["overall"] <= 1 for e in progress)


def test_hang_becomes_timeout_and_the_worker_is_killed(live, tmp_path):
    t0 = time.monotonic()
    r = run_pair(live, 0, 1, opts("hang", tmp_path / "pids", timeout=1.0))
    assert time.monotonic() - t0 < 5
    assert r.status == "timeout" and r.verdict == "failing"
    assert any("no result within 1 s" in e for e in r.errors)
    assert_all_gone(tmp_path / "pids")


def test_hang_before_any_pair_times_out_every_pair(live, tmp_path):
    rs = run_all(live, BOTH, opts("hang_start", tmp_path / "pids", timeout=1.0))
    assert [r.status for r in rs] == ["timeout", "timeout"]
    assert_all_gone(tmp_path / "pids")


def test_cancel_kills_the_whole_process_group(live, tmp_path):
    cancel = threading.Event()
    threading.Timer(0.8, cancel.set).start()
    t0 = time.monotonic()
    r = run_pair(live, 0, 1, opts("grandchild", tmp_path / "pids", timeout=60), cancel=cancel)
    assert time.monotonic() - t0 < 5
    assert r.status == "cancelled" and r.verdict == "interrupted"
    assert_all_gone(tmp_path / "pids")  # the worker and the child it started


def test_cancel_of_all_marks_the_rest_cancelled(live, tmp_path):
    cancel = threading.Event()
    threading.Timer(0.8, cancel.set).start()
    rs = run_all(live, BOTH, opts("hang", tmp_path / "pids", timeout=60), cancel=cancel)
    assert [r.status for r in rs] == ["cancelled", "cancelled"]
    assert_all_gone(tmp_path / "pids")


def test_crash_mid_pair_is_reported_and_the_rest_run_in_a_fresh_worker(live):
    rs = run_all(live, BOTH, opts("crash"))
    assert [r.status for r in rs] == ["crashed", "crashed"]
    assert "SIGSEGV" in rs[0].errors[-1]


def test_exit_between_pairs_retries_the_rest(live, tmp_path):
    rs = run_all(live, BOTH, opts("exit_between", tmp_path / "pids"))
    assert [r.status for r in rs] == ["ok", "ok"]


def test_garbage_is_kept_as_evidence(live):
    r = run_pair(live, 0, 1, opts("garbage"))
    assert r.status == "ok"
    assert any("unreadable output" in e and "this is not JSON" in e for e in r.errors)


def test_only_garbage_is_a_crash_with_the_output_cleaned(live):
    r = run_pair(live, 0, 1, opts("only_garbage"))
    assert r.status == "crashed" and r.verdict == "failing"
    text = " ".join(r.errors)
    assert "not json" in text and "\x1b" not in text


def test_out_of_memory_is_a_failed_result_with_the_cuda_error(live):
    r = run_pair(live, 0, 1, opts("oom"))
    assert r.status == "failed" and r.verdict == "failing"
    assert r.errors == ["setup: cudaErrorMemoryAllocation (2): out of memory"]


def test_corruption_is_failing_with_the_offset(live):
    r = run_pair(live, 0, 1, opts("corrupt"))
    assert r.integrity == "corrupt" and r.first_bad_offset == 4096 and r.verdict == "failing"


def test_fatal_worker_makes_every_pair_unavailable(live):
    rs = run_all(live, BOTH, opts("fatal"))
    assert [r.status for r in rs] == ["unavailable", "unavailable"]
    assert "cudaErrorNoDevice" in rs[0].errors[0]


def test_missing_worker_program(live):
    r = run_pair(live, 0, 1, BenchOptions(worker=["/nonexistent/p2ptop-worker"]))
    assert r.status == "unavailable" and "cannot start" in r.errors[0]


def test_a_crash_keeps_the_end_of_stderr_where_the_traceback_stands(live):
    """The worker's stderr is bounded by its end, not its start: 20 kB of noise, then the last line."""
    code = ("import sys; sys.stdin.readline(); sys.stderr.write('NOISE-START ' + 'x' * 20000 + '\\n'); "
            "sys.stderr.write('RuntimeError: the last line\\n'); sys.exit(1)")
    r = run_pair(live, 0, 1, BenchOptions(worker=[sys.executable, "-c", code], timeout_s=10.0, check_contention=False))
    text = r.errors[-1]
    assert r.status == "crashed" and "exited with status 1" in text
    assert text.endswith("RuntimeError: the last line") and "NOISE-START" not in text


def test_unknown_pair_fails_without_a_worker(live):
    r = run_pair(live, 0, 7, opts("ok"))
    assert r.status == "failed" and "no such GPU" in r.errors[0]


def test_real_worker_without_cupy_says_what_to_install(live, monkeypatch):
    monkeypatch.delenv("P2PTOP_BENCH_WORKER", raising=False)
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here")
    ok, why = bench_available(live)
    assert not ok and "p2ptop[cuda12]" in why and "p2ptop[cuda13]" in why
    r = run_pair(live, 0, 1, BenchOptions(worker=[sys.executable, "-m", "p2ptop.bench.worker"]))
    assert r.status == "unavailable" and "p2ptop[cuda13]" in r.errors[0]


def test_demo_and_replay_are_simulated_without_a_worker():
    snap = load_demo("pcie-4gpu-iommu")
    events = []
    rs = run_all(snap, [(0, 1), (0, 2)], BenchOptions(worker=["/nonexistent"], simulated_pair_s=0), on_event=events.append)
    assert all(r.simulated and r.status == "ok" for r in rs)
    assert rs[0].verdict == "healthy"
    assert rs[1].verdict == "failing" and rs[1].params["peer_access"] == "cudaErrorPeerAccessUnsupported"
    assert any(e["type"] == "progress" and "simulated" in e["message"] for e in events)


def test_simulated_cancel():
    cancel = threading.Event()
    cancel.set()
    rs = run_all(load_demo("h200x2-vm"), BOTH, BenchOptions(simulated_pair_s=0), cancel=cancel)
    assert [r.status for r in rs] == ["cancelled", "cancelled"]


def test_all_pairs_plans_each_unordered_pair_once(live, tmp_path):
    """bench --all: one job per unordered pair, which measures both directions (issue 17, point 6)."""
    from p2ptop.bench.runner import all_pairs

    assert all_pairs(live) == [(0, 1)]
    rs = run_all(live, None, opts("ok", tmp_path / "pids"))
    assert [(r.a, r.b) for r in rs] == [(0, 1)]
    assert rs[0].measurement("ce_one_way").value and rs[0].measurement("ce_reverse").value
    big = load_demo("h200x2-vm")
    big.gpus = big.gpus + [dataclasses.replace(big.gpus[0], index=i) for i in (2, 3)]
    pairs = all_pairs(big)
    assert pairs == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert len(pairs) == len({frozenset(p) for p in pairs})
