"""Copy tests on a busy node: contention seen and named, interrupted is not failing, one test at a time per GPU.

NVML is the capture fake with SIMULATED activity scenarios (p2ptop.sources.capture.scenario); the worker
is tests/fake_workers/fake_worker.py. Nothing here needs a GPU.
"""

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from p2ptop.bench import contention
from p2ptop.bench.judge import judge, result_finding
from p2ptop.bench.lock import GpuLocks, describe, read_holder
from p2ptop.bench.runner import BenchOptions, _external_signal, run_all, run_pair
from p2ptop.commands.bench import EXIT_CONTENDED, EXIT_INTERRUPTED, EXIT_LOCKED, exit_status
from p2ptop.demos import load_demo
from p2ptop.fabric import Fabric
from p2ptop.model import BenchResult, Snapshot
from p2ptop.sources.capture import Activity, Capture, FakeNvml, scenario

HERE = pathlib.Path(__file__).parent
FAKE = HERE / "fake_workers" / "fake_worker.py"
H200 = HERE / "fixtures" / "captures" / "h200x2-nvswitch-vm"


@pytest.fixture
def live():
    """A 2-GPU snapshot that claims to be live, so the runner starts a worker instead of simulating."""
    snap = load_demo("h200x2-vm")
    snap.source.kind = "nvml"
    snap.source.simulated = False
    return snap


def fake_nvml(activity=None):
    return FakeNvml(Capture.load(str(H200)), activity=activity)


def opts(mode, nvml=None, pidfile=None, **kw):
    cmd = [sys.executable, str(FAKE), mode] + ([str(pidfile)] if pidfile else [])
    return BenchOptions(worker=cmd, timeout_s=kw.pop("timeout_s", 10.0), nvml=nvml, **kw)


def wait_for_file(path, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return path.read_text().split()


# --- the contention check ------------------------------------------------------------------------


def test_idle_gpus_are_not_busy(live):
    w = contention.Watch(live, [0, 1], nvml=fake_nvml(scenario("idle", (0, 1))), window_s=0.05)
    c = w.before()
    w.close()
    assert c.checked and not c.busy and c.reasons == []
    assert c.utilization == {"0": 0, "1": 0}
    assert c.traffic["0"]["nvlink_tx_gbps"] == 0 and c.traffic["0"]["pcie_tx_gbps"] == pytest.approx(0.001, abs=0.001)


def test_the_capture_itself_answers_idle_except_nvlink(live):
    """Without a scenario the fake answers what nvidia-smi -q recorded: no process, 0 %, ~1 MB/s PCIe."""
    w = contention.Watch(live, [0, 1], nvml=fake_nvml(), window_s=0.01)
    c = w.before()
    w.close()
    assert c.checked and not c.busy
    assert "nvlink_traffic.0" in c.na and "not recorded" in c.na["nvlink_traffic.0"]


def test_a_busy_process_is_named_with_pid_and_memory(live):
    w = contention.Watch(live, [0, 1], nvml=fake_nvml(scenario("busy_process", (0, 1), pid=os.getpid())), window_s=0.01)
    c = w.before()
    w.close()
    assert not c.busy and c.processes == []  # this process is the watcher itself: never counted
    w = contention.Watch(live, [0, 1], nvml=fake_nvml(scenario("busy_process", (0, 1), pid=1)), window_s=0.01)
    c = w.before()
    w.close()
    assert c.busy
    p = c.processes[0]
    assert (p.gpu, p.pid, p.used_mib, p.seen) == (0, 1, 874, "before")
    assert any("pid 1, 874 MiB" in r and r.startswith("GPU0") for r in c.reasons)


def test_own_pid_is_excluded_and_an_invisible_pid_is_named_so(live):
    w = contention.Watch(live, [0], nvml=fake_nvml(scenario("busy_process", (0,), pid=999_999_999)), window_s=0.01)
    c = w.before()
    w.close()
    assert c.busy and "(name not visible here)" in c.reasons[0]
    w = contention.Watch(live, [0], nvml=fake_nvml(scenario("busy_process", (0,), pid=4242)), window_s=0.01)
    w.add_own_pid(4242)
    c = w.before()
    w.close()
    assert not c.busy


def test_utilisation_from_others_makes_it_busy(live):
    w = contention.Watch(live, [0, 1], nvml=fake_nvml(scenario("matmul", (0, 1), pid=1)), window_s=0.01)
    c = w.before()
    w.close()
    assert c.busy and "GPU0: 100% utilised before the test (by others)" in c.reasons
    assert not any(r.startswith("GPU1") for r in c.reasons)


@pytest.mark.parametrize("name, words", [("nvlink_traffic", "NVLink out traffic"), ("pcie_traffic", "PCIe out traffic")])
def test_rising_throughput_counters_make_it_busy(live, name, words):
    w = contention.Watch(live, [0, 1], nvml=fake_nvml(scenario(name, (0, 1))), window_s=0.05)
    c = w.before()
    w.close()
    assert c.busy and not c.processes
    reason = next(r for r in c.reasons if words in r)
    gbps = float(reason.split("traffic ")[1].split(" GB/s")[0])
    assert gbps >= contention.BUSY_GBPS
    if name == "nvlink_traffic":  # 150 GB/s rising counters, measured over the window
        assert c.traffic["0"]["nvlink_tx_gbps"] == pytest.approx(150, rel=0.05)


def test_nvml_unavailable_claims_nothing(live):
    nv = FakeNvml(Capture.load(str(H200)), init_error="DRIVER_NOT_LOADED")
    w = contention.Watch(live, [0, 1], nvml=nv)
    c = w.before()
    w.close()
    assert not c.checked and not c.busy and "Driver Not Loaded" in c.na["nvml"]


def test_every_activity_call_failing_is_na_never_raises(live):
    for fn in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetFieldValues", "nvmlDeviceGetPcieThroughput",
               "nvmlDeviceGetUtilizationRates"):
        for error in ("NOT_SUPPORTED", "GPU_IS_LOST", "MISSING"):
            nv = FakeNvml(Capture.load(str(H200)), faults={fn: error}, activity=scenario("idle", (0, 1)))
            w = contention.Watch(live, [0, 1], nvml=nv, window_s=0.0)
            c = w.before()
            w.close()
            assert c.checked and not c.busy and c.na, (fn, error)


# --- the runner: busy, allow-busy, during ------------------------------------------------------


def test_idle_run_is_healthy_with_the_check_recorded(live):
    r = run_pair(live, 0, 1, opts("ok", fake_nvml(scenario("idle", (0, 1)))))
    assert r.status == "ok" and r.verdict == "healthy"
    assert r.contention.checked and not r.contention.busy and r.contention.check_s < 1


def test_busy_gpus_are_not_measured_without_allow_busy(live, tmp_path):
    pidfile = tmp_path / "pids"
    r = run_pair(live, 0, 1, opts("ok", fake_nvml(scenario("matmul", (0, 1), pid=1)), pidfile))
    assert r.status == "busy" and r.verdict == "contended" and r.measurements == []
    assert not pidfile.exists()  # the worker (started beside the check) never got its go: no GPU work (no pid file)
    assert any("100% utilised" in x for x in r.contention.reasons)
    assert result_finding(r, Fabric(live)) is None  # nothing for the knowledge base
    assert exit_status([r]) == EXIT_CONTENDED


def test_allow_busy_measures_and_labels_contended(live):
    r = run_pair(live, 0, 1, opts("ok", fake_nvml(scenario("nvlink_traffic", (0, 1))), allow_busy=True))
    assert r.status == "ok" and r.verdict == "contended"
    m = r.measurement("ce_one_way")
    assert m.value == 390.0 and m.expected == 450.0 and m.verdict == "contended"  # figures kept, not judged
    assert result_finding(r, Fabric(live)) is None
    assert any("NVLink" in x for x in r.contention.reasons)


def test_contended_slow_figures_are_not_slow(live):
    """The H200 case of issue 18: 225 GB/s (50 %) with an all-reduce running reads contended, not slow."""
    r = BenchResult(0, 1, measurements=[])
    from p2ptop.model import Contention, Measurement

    r.measurements = [Measurement("ce_one_way", 225.0), Measurement("sm_write", 171.0)]
    r.contention = Contention(checked=True, busy=True, reasons=["GPU0: NVLink out traffic 150.0 GB/s before the test"])
    assert judge(r, Fabric(live)).verdict == "contended"
    r.contention.busy = False
    assert judge(r, Fabric(live)).verdict == "slow"


def test_corrupt_data_under_contention_is_still_failing(live):
    r = run_pair(live, 0, 1, opts("corrupt", fake_nvml(scenario("busy_process", (0, 1), pid=1)), allow_busy=True))
    assert r.verdict == "failing" and r.contention.busy
    assert result_finding(r, Fabric(live)).id == "bench.corrupt"


def test_a_process_starting_during_the_test_is_seen(live, monkeypatch, tmp_path):
    act = scenario("idle", (0, 1))
    monkeypatch.setenv("FAKE_TIMES", str(tmp_path / "times"))
    monkeypatch.setenv("FAKE_PAIR_S", "0.8")
    timer = threading.Timer(0.3, lambda: act.processes[1].append((1, 2 << 30)))
    timer.start()
    try:
        r = run_pair(live, 0, 1, opts("timed", fake_nvml(act)))
    finally:
        timer.cancel()
    assert r.verdict == "contended"
    p = r.contention.processes[0]
    assert (p.gpu, p.pid, p.seen) == (1, 1, "during") and p.used_mib == 2048


def test_the_worker_itself_is_never_contention(live, monkeypatch, tmp_path):
    """The fake NVML lists the worker's own pid during the test (as real NVML would): not counted."""
    act = scenario("idle", (0, 1))
    pidfile = tmp_path / "pids"

    def add_worker():
        pids = wait_for_file(pidfile)
        act.processes[0].append((int(pids[0]), 1 << 30))

    monkeypatch.setenv("FAKE_TIMES", str(tmp_path / "times"))
    monkeypatch.setenv("FAKE_PAIR_S", "0.6")
    t = threading.Thread(target=add_worker)
    t.start()
    r = run_pair(live, 0, 1, opts("timed", fake_nvml(act), pidfile))
    t.join()
    assert r.verdict == "healthy" and not r.contention.busy


# --- interrupted is not failing ---------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_worker_killed_from_outside_is_interrupted_with_what_was_measured(live, tmp_path, sig):
    pidfile = tmp_path / "pids"
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("rs", run_all(live, [(0, 1), (1, 0)], opts("slow", fake_nvml(scenario("idle", (0, 1))), pidfile))))
    t.start()
    pid = int(wait_for_file(pidfile)[0])
    time.sleep(0.3)  # the first measurement is out
    os.kill(pid, sig)
    t.join(15)
    r, rest = out["rs"]
    assert r.status == "interrupted" and r.verdict == "interrupted"
    assert r.params["signal"] == sig.name and sig.name in r.errors[0]
    assert r.measurement("ce_one_way").value == 390.0  # what was measured before it is kept
    assert rest.status == "interrupted" and rest.measurements == []  # the rest is not run
    assert result_finding(r, Fabric(live)) is None and result_finding(rest, Fabric(live)) is None
    assert exit_status([r, rest]) == EXIT_INTERRUPTED


def test_a_worker_crashing_by_itself_is_still_failing(live):
    r = run_pair(live, 0, 1, opts("selfkill_SIGSEGV"))
    assert r.status == "crashed" and r.verdict == "failing"


def test_hang_past_the_timeout_is_failing_not_interrupted(live):
    r = run_pair(live, 0, 1, opts("hang", timeout_s=0.5))
    assert r.status == "timeout" and r.verdict == "failing"


def test_shell_style_exit_codes():
    assert _external_signal(137) == "SIGKILL" and _external_signal(143) == "SIGTERM" and _external_signal(-2) == "SIGINT"
    assert _external_signal(139) is None and _external_signal(-11) is None and _external_signal(1) is None


# --- one test at a time per GPU ---------------------------------------------------------------

RACER = textwrap.dedent("""
    import json, sys
    from p2ptop.bench.runner import BenchOptions, run_pair
    from p2ptop.demos import load_demo
    snap = load_demo("h200x2-vm"); snap.source.kind = "nvml"
    events = []
    def on_event(ev):
        if ev["type"] == "progress" and ev["step"] == "waiting":
            events.append(ev["message"])
    r = run_pair(snap, 0, 1, BenchOptions(worker=[sys.executable, sys.argv[1], "timed"], check_contention=False), on_event)
    print(json.dumps({"status": r.status, "verdict": r.verdict, "waiting": events}))
""")


def test_two_runners_racing_never_measure_at_the_same_time(tmp_path):
    times = tmp_path / "times"
    env = dict(os.environ, FAKE_TIMES=str(times), FAKE_PAIR_S="0.6", PYTHONPATH=str(HERE.parent))
    procs = [subprocess.Popen([sys.executable, "-c", RACER, str(FAKE)], stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=30)[0] for p in procs]
    import json

    results = [json.loads(o.strip().splitlines()[-1]) for o in outs]
    assert all(r["status"] == "ok" and r["verdict"] == "healthy" for r in results)
    waited = [r for r in results if r["waiting"]]
    assert len(waited) == 1  # one waited, and said for whom
    assert "another copy test holds it, pid" in waited[0]["waiting"][0] and "since" in waited[0]["waiting"][0]
    spans = {}
    for line in times.read_text().splitlines():
        kind, t, pid = line.split()
        spans.setdefault(pid, {})[kind] = float(t)
    (s1, e1), (s2, e2) = sorted((v["start"], v["end"]) for v in spans.values())
    assert e1 <= s2  # the second started measuring after the first ended


def test_no_wait_says_who_holds_the_lock(live):
    holder = GpuLocks(live, [1])
    assert holder.acquire(0) is None
    try:
        t0 = time.monotonic()
        r = run_pair(live, 0, 1, opts("ok", check_contention=False, wait_s=0))
        assert time.monotonic() - t0 < 2
        assert r.status == "locked" and r.verdict is None
        assert f"GPU1 is being tested by pid {os.getpid()}" in r.errors[0] and "--no-wait" in r.errors[0]
        assert exit_status([r]) == EXIT_LOCKED
        t0 = time.monotonic()
        r = run_pair(live, 0, 1, opts("ok", check_contention=False, wait_s=0.4))
        assert r.status == "locked" and 0.35 < time.monotonic() - t0 < 3 and "waited 0.4 s" in r.errors[0]
    finally:
        holder.release()
    r = run_pair(live, 0, 1, opts("ok", check_contention=False, wait_s=0))
    assert r.status == "ok"


def test_holder_writes_who_it_is_and_the_text_is_data(live, tmp_path):
    locks = GpuLocks(live, [0], str(tmp_path))
    assert locks.acquire(0) is None
    path = locks.paths[0][1]
    info = read_holder(path)
    assert info["pid"] == os.getpid() and info["user"] and info["since"] and info["gpus"] == "0"
    assert live.gpu(0).uuid in os.path.basename(path)
    assert oct(os.stat(path).st_mode & 0o777) == "0o666"
    locks.release()
    with open(path, "w") as f:
        f.write('{"pid": 7, "command": "evil\\u001b[31m red", "user": "bob"}')
    assert "\x1b" not in describe(read_holder(path)) and "pid 7 (bob: evil" in describe(read_holder(path))


def test_a_dead_holder_never_leaves_a_gpu_locked(live, tmp_path):
    code = ("import sys,time; from p2ptop.bench.lock import GpuLocks; from p2ptop.demos import load_demo;"
            "l=GpuLocks(load_demo('h200x2-vm'), [0, 1], sys.argv[1]); assert l.acquire(0) is None; print('held', flush=True); time.sleep(60)")
    p = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=str(HERE.parent)))
    assert p.stdout.readline().strip() == "held"
    mine = GpuLocks(live, [0, 1], str(tmp_path))
    assert mine.acquire(0) is not None  # held by the other process
    p.kill()
    p.wait()
    assert mine.acquire(0) is None  # the kernel released it with its holder
    mine.release()


# --- host links ---------------------------------------------------------------------------------


@pytest.fixture
def one_gpu():
    """The one-H100 capture read through the real NVML reader: a live one-GPU snapshot."""
    from p2ptop.sources.nvml import read_snapshot

    snap = read_snapshot(FakeNvml(Capture.load(str(HERE / "fixtures" / "captures" / "h100x1-vm"))), sysfs_root="/nonexistent")
    assert snap.source.kind == "nvml" and len(snap.gpus) == 1
    return snap


def host_nvml(load_file, idle=(1, 16), loaded=(5, 16), replay=None):
    act = scenario("idle", (0,))
    act.pcie_link = {0: lambda: loaded if os.path.exists(load_file) else idle}
    if replay is not None:
        act.replay = {0: replay}
    return FakeNvml(Capture.load(str(HERE / "fixtures" / "captures" / "h100x1-vm")), activity=act)


def test_host_link_idle_downclock_is_not_a_fault(one_gpu, monkeypatch, tmp_path):
    load = tmp_path / "load"
    monkeypatch.setenv("FAKE_LOAD_FILE", str(load))
    monkeypatch.setenv("FAKE_STEP_S", "0.3")
    r = run_pair(one_gpu, 0, 0, opts("ok", host_nvml(str(load))))
    assert r.host_link and r.status == "ok" and r.verdict == "healthy"
    assert r.measurement("h2d").expected == 63.0 and r.measurement("h2d").verdict == "healthy"  # Gen5 x16
    link = r.params["link"]
    assert (link["idle_gen"], link["load_gen"], link["load_width"], link["gen_max"]) == (1, 5, 16, 5)
    assert link["load_samples"] >= 3
    from p2ptop.bench.judge import link_notes

    assert any("idle GPU saving power" in n for n in link_notes(r))
    assert result_finding(r, Fabric(one_gpu)) is None


def test_host_link_trained_low_under_load_is_a_fault(one_gpu, monkeypatch, tmp_path):
    load = tmp_path / "load"
    monkeypatch.setenv("FAKE_LOAD_FILE", str(load))
    monkeypatch.setenv("FAKE_STEP_S", "0.3")
    r = run_pair(one_gpu, 0, 0, opts("ok", host_nvml(str(load), idle=(1, 16), loaded=(4, 16))))
    assert r.verdict == "slow"  # the figures are fine (52.9 of 63), the link is not
    f = result_finding(r, Fabric(one_gpu))
    assert f.id == "bench.host_link_fault" and f.subject == "gpu:0" and "Gen4 x16 during the copies, Gen5 x16 possible" in f.summary
    assert f.facts["gpu.pcie_degraded_under_load"] is True and f.facts["bench.host_link"] is True
    from p2ptop.findings import FACT_KEYS

    assert set(f.facts) <= set(FACT_KEYS)


def test_host_link_replays_rising_make_it_slow(one_gpu, monkeypatch, tmp_path):
    load = tmp_path / "load"
    monkeypatch.setenv("FAKE_LOAD_FILE", str(load))
    monkeypatch.setenv("FAKE_STEP_S", "0.1")
    counter = iter(range(0, 10_000, 50))
    r = run_pair(one_gpu, 0, 0, opts("ok", host_nvml(str(load), idle=(5, 16), replay=lambda: next(counter))))
    assert r.verdict == "slow" and r.params["link"]["replay_after"] > r.params["link"]["replay_before"]


def test_slow_host_link_figures(one_gpu, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_H2D", "20.0")
    r = run_pair(one_gpu, 0, 0, opts("ok", host_nvml(str(tmp_path / "load"), idle=(5, 16))))
    assert r.measurement("h2d").verdict == "slow" and r.verdict == "slow"
    assert result_finding(r, Fabric(one_gpu)).id == "bench.slow"


def test_host_link_on_a_busy_gpu_is_contended(one_gpu):
    act = scenario("matmul", (0,), pid=1)
    r = run_pair(one_gpu, 0, 0, opts("ok", FakeNvml(Capture.load(str(HERE / "fixtures" / "captures" / "h100x1-vm")), activity=act)))
    assert r.status == "busy" and r.verdict == "contended"


def test_one_gpu_host_bench_all_is_its_host_link(one_gpu, monkeypatch, capsys):
    from p2ptop.cli import main
    from p2ptop.commands import bench as bench_cmd

    monkeypatch.setattr(bench_cmd, "snapshot_from_args", lambda args: (one_gpu, None))
    monkeypatch.setenv("P2PTOP_BENCH_WORKER", f"{sys.executable} {FAKE} ok")
    status = main(["bench", "--all"])
    out = capsys.readouterr().out
    assert "GPU0 <-> host  host link (PCIe Gen5 x16)" in out and "PCIe link:" in out
    assert status in (0, 3)  # 3 only if this machine's own NVML saw something: no NVML here, so 0
    assert status == 0


def test_demo_host_link_is_simulated():
    from p2ptop.bench.simulate import simulate_host

    snap = load_demo("h200x2-vm")
    r = simulate_host(snap, 1, {"h2d", "d2h", "host_bidirectional"})
    assert r.simulated and r.measurement("h2d").value == pytest.approx(52.85, rel=0.02)
    # both ways at once: from nvbandwidth's bidirectional host tests on a Gen5 x16 H100, shown and never judged
    assert r.measurement("h2d_bidir").value == pytest.approx(34.55, rel=0.02)
    assert r.measurement("d2h_bidir").value == pytest.approx(48.78, rel=0.02)
    assert "not_simulated" not in r.params


# --- snapshots ---------------------------------------------------------------------------------


def test_old_snapshots_still_load_and_judge_the_same():
    from p2ptop.model import load_snapshot

    snap = load_snapshot(str(HERE / "fixtures" / "captures" / "h200x2-live" / "p2ptop-snapshot-bench.json"))
    assert [(r.a, r.b, r.verdict, r.contention) for r in snap.bench] == [(0, 1, "healthy", None), (1, 0, "healthy", None)]
    fab = Fabric(snap)
    assert [judge(r, fab).verdict for r in snap.bench] == ["healthy", "healthy"]


def test_new_results_round_trip(live):
    r = run_pair(live, 0, 1, opts("ok", fake_nvml(scenario("busy_process", (0, 1), pid=1)), allow_busy=True))
    live.bench.append(r)
    again = Snapshot.from_json(live.to_json())
    r2 = again.bench_result(0, 1)
    assert r2.verdict == "contended" and r2.contention.processes[0].pid == 1 and r2.contention.busy


def test_doctor_reports_busy_gpus(live, monkeypatch, capsys):
    from p2ptop.commands import doctor

    real = contention.busy_now
    monkeypatch.setattr(contention, "busy_now", lambda snap, **kw: real(snap, nvml=fake_nvml(scenario("matmul", (0, 1), pid=1)), window_s=0.01))
    fs = doctor.busy_gpu_findings(live)
    assert [f.subject for f in fs] == ["gpu:0"] and "copy-test figures taken now are not comparable" in fs[0].summary
    assert fs[0].severity == "warning" and any("100% utilised" in e for e in fs[0].evidence)
    live.source.kind = "demo"
    assert doctor.busy_gpu_findings(live) == []


CLI_LIVE = textwrap.dedent("""
    import sys
    from p2ptop.commands import bench as b
    from p2ptop.demos import load_demo
    from p2ptop.cli import main
    snap = load_demo("h200x2-vm"); snap.source.kind = "nvml"; snap.source.simulated = False
    b.snapshot_from_args = lambda args: (snap, None)
    sys.exit(main(sys.argv[1:]))
""")


def test_ctrl_c_gives_interrupted_results_and_exit_4(tmp_path):
    pidfile = tmp_path / "pids"
    env = dict(os.environ, PYTHONPATH=str(HERE.parent), P2PTOP_BENCH_WORKER=f"{sys.executable} {FAKE} slow {pidfile}")
    p = subprocess.Popen([sys.executable, "-c", CLI_LIVE, "bench", "0", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    worker = int(wait_for_file(pidfile)[0])
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert p.returncode == EXIT_INTERRUPTED, (out, err)
    assert "status cancelled, verdict interrupted" in out and "CE A->B        390.0" in out
    deadline = time.monotonic() + 3
    while os.path.exists(f"/proc/{worker}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{worker}")


def test_bench_help_documents_the_exit_codes(capsys):
    from p2ptop.cli import main

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("0 every result healthy", "1 a pair or host link is slow or failing", "3 contended", "4 interrupted",
                  "5 another p2ptop test holds a GPU", "--allow-busy", "--no-wait", "--wait SECONDS"):
        assert words in text, words


def test_an_xid_during_the_test_makes_it_failing_even_when_busy(live):
    act = scenario("busy_process", (0, 1), pid=1)
    act.xids = [(1, 79)]
    r = run_pair(live, 0, 1, opts("ok", fake_nvml(act), allow_busy=True))
    assert r.params["xids"] == "GPU1: Xid 79" and r.verdict == "failing"
    f = result_finding(r, Fabric(live))
    assert f.id == "bench.xid" and f.facts["host.xid_latest"] == 79 and "Xid 79" in f.summary
    from p2ptop.findings import FACT_KEYS

    assert set(f.facts) <= set(FACT_KEYS)


def test_no_xid_no_event_noise(live):
    r = run_pair(live, 0, 1, opts("ok", fake_nvml(scenario("idle", (0, 1)))))
    assert "xids" not in r.params and r.verdict == "healthy" and "xid_events" not in r.contention.na


def test_a_planted_symlink_is_never_followed(live, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    locks = GpuLocks(live, [0], str(tmp_path / "locks"))
    os.symlink(victim, locks.paths[0][1])
    from p2ptop.bench.lock import LockUnavailable

    with pytest.raises(LockUnavailable, match="cannot be opened"):
        locks.acquire(0)
    assert victim.read_text() == "precious"
    r = run_pair(live, 0, 1, opts("ok", check_contention=False, lock_dir=str(tmp_path / "locks")))
    assert r.status == "ok" and "GPU locks not used" in r.params["lock"] and victim.read_text() == "precious"


def test_utilisation_left_by_a_test_that_just_ended_is_not_load(live):
    """NVML's utilisation lags up to 1 s: right after the test we waited for, it still shows that test."""
    readings = iter([60, 40, 5])
    act = scenario("idle", (0, 1))
    act.utilization = {0: lambda: next(readings, 0), 1: 0}
    w = contention.Watch(live, [0, 1], nvml=fake_nvml(act), window_s=0.01)
    c = w.before()
    w.close()
    assert not c.busy and c.utilization["0"] == 5 and "not load" in c.na["utilization.0"]


def test_utilisation_that_stays_high_without_a_listed_process_is_load(live):
    act = scenario("idle", (0, 1))
    act.utilization = {0: 90, 1: 0}
    w = contention.Watch(live, [0, 1], nvml=fake_nvml(act), window_s=0.01)
    t0 = time.monotonic()
    c = w.before()
    w.close()
    assert c.busy and "GPU0: 90% utilised before the test (by others)" in c.reasons
    assert time.monotonic() - t0 < contention.SETTLE_S + 0.5


@pytest.mark.parametrize("foreign, busy", [([999_999_991], False), ([999_999_991, 999_999_992], True)])
def test_pids_from_another_namespace(live, monkeypatch, tmp_path, foreign, busy):
    """In a container NVML may name the worker by a pid we cannot see: one new such pid is the worker."""
    act = scenario("idle", (0, 1))
    monkeypatch.setenv("FAKE_TIMES", str(tmp_path / "times"))
    monkeypatch.setenv("FAKE_PAIR_S", "0.6")
    timer = threading.Timer(0.25, lambda: act.processes[0].extend((pid, 1 << 30) for pid in foreign))
    timer.start()
    try:
        r = run_pair(live, 0, 1, opts("timed", fake_nvml(act)))
    finally:
        timer.cancel()
    assert r.contention.busy is busy
    assert ("processes.unseen_pid" in r.contention.na) is (not busy)


def test_process_names_never_carry_the_command_line(tmp_path):
    proc = tmp_path / "proc"
    (proc / "77").mkdir(parents=True)
    (proc / "77" / "comm").write_text("python3\n")
    (proc / "77" / "cmdline").write_bytes(b"/usr/bin/python3\0-u\0/home/a/train.py\0--token=SECRET\0\x1b[31m\0")
    assert contention.process_name(77, str(proc)) == "python3 train.py"
    assert contention.process_name(78, str(proc)) is None


def test_only_pairs_on_busy_gpus_are_skipped(live, monkeypatch, tmp_path):
    act = scenario("idle", (0, 1))
    act.processes[1] = [(1, 1 << 30)]
    monkeypatch.setenv("FAKE_GATE_LOG", str(tmp_path / "go"))
    rs = run_all(live, [(0, 0), (1, 1), (0, 1)], opts("ok", fake_nvml(act)))
    assert [(r.status, r.verdict) for r in rs] == [("ok", "healthy"), ("busy", "contended"), ("busy", "contended")]
    # the worker was told to run only the pair the check left in
    assert (tmp_path / "go").read_text().splitlines() == ['{"pairs": [[0, 0]]}']


# --- the check runs while the worker starts ------------------------------------------------------


def test_the_worker_waits_for_the_check_before_any_gpu_work(live, monkeypatch, tmp_path):
    """The go reaches the worker only after the check's window: the traffic read then is not the test's own."""
    go = tmp_path / "go"
    monkeypatch.setenv("FAKE_GATE_LOG", str(go))
    monkeypatch.setenv("FAKE_TIMES", str(tmp_path / "times"))
    monkeypatch.setenv("FAKE_PAIR_S", "0")
    t_end = {}
    real_end = contention.Watch.end_window

    def end_window(self):
        c = real_end(self)
        t_end["t"] = time.time()
        return c

    monkeypatch.setattr(contention.Watch, "end_window", end_window)
    r = run_pair(live, 0, 1, opts("timed", fake_nvml(scenario("idle", (0, 1)))))
    assert r.verdict == "healthy" and go.read_text().splitlines() == ['{"pairs": [[0, 1]]}']
    started = float((tmp_path / "times").read_text().split()[1])
    assert started >= t_end["t"] and r.contention.window_s >= contention.WINDOW_S


def test_the_check_overlaps_the_workers_start(live, monkeypatch):
    """A worker whose imports take 0.6 s (CuPy's take about that) never waits for the check: what the test
    waited (added_s) is less than what the check took (check_s). The figures are in benchmarks/bench_contention.py."""
    monkeypatch.setenv("FAKE_IMPORT_S", "0.6")
    r = run_pair(live, 0, 1, opts("ok", fake_nvml(scenario("idle", (0, 1)))))
    c = r.contention
    assert r.verdict == "healthy" and c.added_s is not None and c.check_s >= contention.WINDOW_S
    assert c.added_s < c.check_s


def test_a_check_that_raises_leaves_no_worker_behind(live, monkeypatch, tmp_path):
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("FAKE_IMPORT_S", "0.3")

    def broken(self):
        time.sleep(0.5)  # the worker has written its pid file by now (it does so before waiting for the go)
        raise RuntimeError("NVML went away")

    monkeypatch.setattr(contention.Watch, "before", broken)
    r = run_pair(live, 0, 1, opts("ok_pid_early", fake_nvml(scenario("idle", (0, 1))), pidfile))
    assert r.status == "failed" and "NVML went away" in r.errors[0]
    pid = int(pidfile.read_text().split()[0])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_no_check_no_gate(live, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_GATE_LOG", str(tmp_path / "go"))
    r = run_pair(live, 0, 1, opts("ok", check_contention=False))
    assert r.verdict == "healthy" and r.contention is None and not (tmp_path / "go").exists()


# --- both directions at once ---------------------------------------------------------------------


def test_a_healthy_gen5_host_link_reads_healthy_with_nvbandwidths_both_ways_figures(one_gpu, tmp_path, capsys):
    """The H100 of the device run: one way 52.9 / 51.0 GB/s, each way while the other runs 34.5 / 48.8 (nvbandwidth's
    own bidirectional figures on that host). Judged against twice the one-way rate, both-ways read slow; now they
    are shown (info, no expected figure) and only the one-way figures decide."""
    from p2ptop.commands.bench import report

    r = run_pair(one_gpu, 0, 0, opts("ok", host_nvml(str(tmp_path / "load"), idle=(5, 16))))
    assert r.status == "ok" and r.verdict == "healthy" and exit_status([r]) == 0
    for name, value in (("h2d_bidir", 34.5), ("d2h_bidir", 48.8)):
        m = r.measurement(name)
        assert m.value == value and m.verdict == "info" and m.expected is None
    assert r.measurement("h2d").verdict == "healthy" and r.measurement("h2d").expected == 63.0
    text = report([r], Fabric(one_gpu), "live")
    assert "H->D bidir" in text and "shown, not judged" in text
    assert "method: CPUs 0-15; untimed warm-up batches until steady: H->D 44.9, 52.0, 52.8 GB/s" in text
    assert "the test waited" in text


def test_old_both_ways_totals_are_shown_not_judged(one_gpu):
    """A saved result of the older p2ptop (H<->D total 79.7 GB/s, judged slow against 126 then) reads healthy now."""
    from p2ptop.model import Measurement

    r = BenchResult(0, 0, measurements=[Measurement("h2d", 54.1), Measurement("d2h", 54.6), Measurement("host_bidirectional", 79.7)])
    judge(r, Fabric(one_gpu))
    assert r.verdict == "healthy" and r.measurement("host_bidirectional").verdict == "info"
    r.measurements[0] = Measurement("h2d", 20.0)  # the one-way figures still decide
    assert judge(r, Fabric(one_gpu)).verdict == "slow"
