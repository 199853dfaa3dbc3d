"""Pieces of the CuPy worker that run without CuPy: PCI bus ids (NVML's form vs CUDA's) and its test order."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from p2ptop.bench import worker
from p2ptop.bench.catalog import LEGACY_MEASUREMENTS, MEASUREMENTS, TEST_MEASUREMENTS, TESTS
from p2ptop.bench.worker_common import bus_key


def test_nvml_and_cuda_bus_ids_match():
    assert bus_key("00000000:3A:00.0") == bus_key("0000:3a:00.0") == (0, 0x3A, 0, 0)
    assert bus_key("00000001:07:1F.3") == (1, 7, 0x1F, 3)
    assert bus_key("00000000:00:06.0") != bus_key("00000000:00:07.0")
    assert bus_key("garbage") is None


def test_every_test_has_a_worker_method_and_known_measurements():
    for test in TESTS:
        assert callable(getattr(worker.Worker, f"test_{test}"))
        assert set(TEST_MEASUREMENTS[test]) <= set(MEASUREMENTS)
    assert {m for ms in TEST_MEASUREMENTS.values() for m in ms} | LEGACY_MEASUREMENTS == set(MEASUREMENTS)


def test_cpu_lists_parse_as_sysfs_and_nvml_write_them():
    assert worker.cpu_list("0-3,8,10-11") == {0, 1, 2, 3, 8, 10, 11}
    assert worker.cpu_list("5") == {5}
    with pytest.raises(ValueError):
        worker.cpu_list("zero-3")


def _worker(tmp_path, job, go=None, elapsed=""):
    """Run the CuPy worker against tests/fake_cupy (SIMULATED CUDA): its events and the CUDA calls it made."""
    here = pathlib.Path(__file__).parent
    log = tmp_path / "cuda.log"
    env = dict(os.environ, FAKE_CUPY_LOG=str(log), FAKE_CUPY_ELAPSED_MS=elapsed,
               PYTHONPATH=f"{here / 'fake_cupy'}{os.pathsep}{here.parent}")
    p = subprocess.Popen([sys.executable, "-m", "p2ptop.bench.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    p.stdin.write(json.dumps(job) + "\n")
    if go is not None:
        p.stdin.write(go + "\n")
    p.stdin.flush()  # stdin stays open, as the runner keeps it: the worker exits at its EOF
    events = []
    for line in p.stdout:
        events.append(json.loads(line))
        if events[-1]["type"] in ("done", "fatal"):
            break
    p.stdin.close()
    p.wait(timeout=20)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return events, calls, p


def test_host_link_logic_with_a_simulated_cupy(tmp_path):
    """The worker's host-link path against tests/fake_cupy (SIMULATED CUDA: calls logged, nothing copied):
    directions, pinned buffers, held streams, nvbandwidth's pattern before each sample, warm-up until the
    rate is steady, each direction timed while the other runs, the CPU binding, integrity, every buffer freed."""
    from p2ptop.bench.runner import BenchOptions

    cpu = min(os.sched_getaffinity(0))
    job = {"pairs": [[0, 0]], "pci_bus_ids": {"0": "00000000:00:06.0"}, "cpu_affinity": {"0": str(cpu)},
           "options": BenchOptions().job()}
    # an idle GPU warming up: the first copies take 20, 15, 11 ms, then 10 ms each
    events, calls, p = _worker(tmp_path, job, elapsed="20,15,11,10")
    assert events[-1]["type"] == "done", (events[-3:], p.stderr.read())
    assert events[0]["type"] == "hello" and "gate_wait_s" not in events[0]
    ms = {e["name"]: e for e in events if e["type"] == "measurement"}
    assert set(ms) == {"h2d", "d2h", "h2d_bidir", "d2h_bidir", "latency_h2d_us", "latency_d2h_us"}
    assert all("error" not in m for m in ms.values())
    one = 512 * 2**20 * 16 / 0.010 / 1e9  # the fake's 10 ms between events
    assert ms["h2d"]["value"] == round(one, 4) and ms["h2d_bidir"]["value"] == round(one, 4)
    # the warm-up took the slow first batches: no timed sample saw them; at least 5 samples one way
    assert ms["h2d"]["min"] == ms["h2d"]["max"] == round(one, 4) and len(ms["h2d"]["samples"]) == worker.HOST_MIN_SAMPLES
    assert len(ms["h2d_bidir"]["samples"]) == BenchOptions().repeats
    params = {k: v for e in events if e["type"] == "params" for k, v in e["params"].items()}
    batch = 512 * 2**20 * worker.WARM_BATCH / 1e9
    assert params["warm_h2d_gbps"] == ", ".join(f"{batch / ms_ * 1e3:.1f}" for ms_ in (20, 15, 11, 10, 10))
    assert params["warm_d2h_gbps"] == ", ".join(f"{batch / 10 * 1e3:.1f}" for _ in range(2))
    assert params["cpu_affinity"] == str(cpu)
    assert ms["latency_h2d_us"]["value"] == round(10_000 / 100, 4)  # 100 copies in 10 ms
    assert [e["status"] for e in events if e["type"] == "integrity"] == ["ok"]
    assert [e["status"] for e in events if e["type"] == "pair_end"] == ["ok"]
    assert [e["step"] for e in events if e["type"] == "progress"][1:4] == ["h2d", "d2h", "host_bidirectional"]

    dev = {c[1] for c in calls if c[0] == "malloc"}
    pinned = [c for c in calls if c[0] == "hostAlloc" and c[2] > 64]
    host = {c[1] for c in pinned}
    assert pinned and all(c[4] == [cpu] for c in pinned)  # allocated while bound to the GPU's CPUs, as nvbandwidth does
    copies = [c for c in calls if c[0] == "memcpyAsync"]
    assert copies and all((c[1] in dev and c[2] in host) if c[4] == 1 else (c[1] in host and c[2] in dev) for c in copies)
    big = [c for c in copies if c[3] == 512 * 2**20]
    c_, w_, r_ = 16, 4, worker.HOST_MIN_SAMPLES
    h2d_alone = 5 * worker.WARM_BATCH + r_ * (w_ + c_)
    d2h_alone = 2 * worker.WARM_BATCH + r_ * (w_ + c_)
    measured, interfering = 3 * (w_ + c_), 3 * (w_ + 2 * c_)  # each bidirectional test: 3 samples
    assert sum(c[4] == 1 for c in big) == h2d_alone + measured + interfering
    assert sum(c[4] == 2 for c in big) == d2h_alone + interfering + measured
    # every timed copy is queued behind a spin kernel on its own stream (nvbandwidth's method), and before each
    # held sample a kernel wrote a pattern into the buffers it copies (the pinned host buffer included)
    kernels = [(i, c) for i, c in enumerate(calls) if c[0] == "kernel"]
    spins = [i for i, c in kernels if c[1] == "spin"]
    samples = 0
    for k, i in enumerate(spins):
        if k and spins[k - 1] == i - 1:  # the second stream's spin of the same sample
            continue
        # the sample: its copies up to the host's wait for its end event
        nxt = next((j for j, c in enumerate(calls) if j > i and c[0] == "sync"), len(calls))
        sample = [c for c in calls[i:nxt] if c[0] == "memcpyAsync" and c[3] == 512 * 2**20]
        if not sample:
            continue
        samples += 1
        prev = max([j for j in spins if j < i] + [0])
        filled = {c[3][0] for c in calls[prev:i] if c[0] == "kernel" and c[1] == "fill"}
        assert {c[1] for c in sample} | {c[2] for c in sample} <= filled, k
        held = {c[4] for c in calls[i:i + 2] if c[0] == "kernel" and c[1] == "spin"}
        assert {c[5] for c in sample} <= held
    assert samples == 2 * worker.HOST_MIN_SAMPLES + 2 * 3
    # both ways: the measured direction on stream 0 is timed between its own events; the other direction, on
    # stream 1, waits for the start event and runs twice as many copies
    records = [c for c in calls if c[0] == "record"]
    waits = [c for c in calls if c[0] == "wait_event"]
    assert len(waits) == 6 and all(w[2] in {r[1] for r in records} for w in waits)
    s_measured, s_other = {c[5] for c in big if c[4] == 1}, {c[5] for c in big if c[4] == 2}
    assert len(s_measured | s_other) == 2 and {w[1] for w in waits} <= (s_measured | s_other)
    freed = {c[1] for c in calls if c[0] in ("free", "freeHost")}
    assert len(dev - freed) == 1  # only the integrity result array, which CuPy's own pool frees
    assert host <= freed


def test_gated_worker_makes_no_cuda_call_before_the_go(tmp_path):
    """With "gate" in the job, the worker waits for the runner's go (the pairs to run) before any CUDA call."""
    from p2ptop.bench.runner import BenchOptions

    job = {"pairs": [[0, 0]], "pci_bus_ids": {"0": "00000000:00:06.0"}, "gate": True,
           "options": BenchOptions(tests={"h2d"}).job()}
    events, calls, p = _worker(tmp_path, job, go="")  # EOF instead of a go: nothing runs, exit 0
    assert events == [] and calls == [] and p.returncode == 0
    events, calls, p = _worker(tmp_path, job, go=json.dumps({"pairs": []}))
    assert [e["type"] for e in events] == ["hello", "done"] and isinstance(events[0]["gate_wait_s"], float)
    assert calls and {c[0] for c in calls} <= {"getDeviceCount", "hostAlloc"}  # CUDA's start only: no buffer, no copy
    (tmp_path / "cuda.log").unlink()
    events, calls, p = _worker(tmp_path, job, go=json.dumps({"pairs": [[0, 0]]}))
    assert events[-1]["type"] == "done" and [e["name"] for e in events if e["type"] == "measurement"] == ["h2d"]
