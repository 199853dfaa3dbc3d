"""Pieces of the CuPy worker that run without CuPy: PCI bus ids (NVML's form vs CUDA's) and its test order."""

from p2ptop.bench import worker
from p2ptop.bench.catalog import MEASUREMENTS, TEST_MEASUREMENTS, TESTS


def test_nvml_and_cuda_bus_ids_match():
    assert worker._bus_key("00000000:3A:00.0") == worker._bus_key("0000:3a:00.0") == (0, 0x3A, 0, 0)
    assert worker._bus_key("00000001:07:1F.3") == (1, 7, 0x1F, 3)
    assert worker._bus_key("00000000:00:06.0") != worker._bus_key("00000000:00:07.0")
    assert worker._bus_key("garbage") is None


def test_every_test_has_a_worker_method_and_known_measurements():
    for test in TESTS:
        assert callable(getattr(worker.Worker, f"test_{test}"))
        assert set(TEST_MEASUREMENTS[test]) <= set(MEASUREMENTS)
    assert {m for ms in TEST_MEASUREMENTS.values() for m in ms} == set(MEASUREMENTS)


def test_host_link_logic_with_a_simulated_cupy(tmp_path):
    """The worker's host-link path against tests/fake_cupy (SIMULATED CUDA: calls logged, nothing copied):
    directions, pinned buffers, held streams, both-ways streams, integrity, every buffer freed."""
    import json
    import os
    import pathlib
    import subprocess
    import sys

    from p2ptop.bench.runner import BenchOptions

    here = pathlib.Path(__file__).parent
    log = tmp_path / "cuda.log"
    env = dict(os.environ, FAKE_CUPY_LOG=str(log), PYTHONPATH=f"{here / 'fake_cupy'}{os.pathsep}{here.parent}")
    job = {"pairs": [[0, 0]], "pci_bus_ids": {"0": "00000000:00:06.0"}, "options": BenchOptions().job()}
    p = subprocess.Popen([sys.executable, "-m", "p2ptop.bench.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    p.stdin.write(json.dumps(job) + "\n")
    p.stdin.flush()  # stdin stays open, as the runner keeps it: the worker exits at its EOF
    events = []
    for line in p.stdout:
        events.append(json.loads(line))
        if events[-1]["type"] in ("done", "fatal"):
            break
    p.stdin.close()
    p.wait(timeout=10)
    assert events[-1]["type"] == "done", (events[-3:], p.stderr.read())
    assert events[0]["type"] == "hello" and events[-1]["type"] == "done"
    ms = {e["name"]: e for e in events if e["type"] == "measurement"}
    assert set(ms) == {"h2d", "d2h", "host_bidirectional", "latency_h2d_us", "latency_d2h_us"}
    assert all("error" not in m for m in ms.values())
    one = 512 * 2**20 * 16 / 0.010 / 1e9  # the fake's 10 ms between events
    assert ms["h2d"]["value"] == round(one, 4) and ms["host_bidirectional"]["value"] == round(2 * one, 4)
    assert ms["latency_h2d_us"]["value"] == round(10_000 / 100, 4)  # 100 copies in 10 ms
    assert [e["status"] for e in events if e["type"] == "integrity"] == ["ok"]
    assert [e["status"] for e in events if e["type"] == "pair_end"] == ["ok"]
    assert [e["step"] for e in events if e["type"] == "progress"][1:4] == ["h2d", "d2h", "host_bidirectional"]

    calls = [json.loads(line) for line in log.read_text().splitlines()]
    dev = {c[1] for c in calls if c[0] == "malloc"}
    host = {c[1] for c in calls if c[0] == "hostAlloc" and c[2] > 64}
    copies = [c for c in calls if c[0] == "memcpyAsync"]
    assert copies and all((c[1] in dev and c[2] in host) if c[4] == 1 else (c[1] in host and c[2] in dev) for c in copies)
    big = [c for c in copies if c[3] == 512 * 2**20]
    assert sum(c[4] == 1 for c in big) == sum(c[4] == 2 for c in big) == 2 * 3 * (4 + 16)  # alone + both ways
    # every timed copy is queued behind a spin kernel on its own stream (nvbandwidth's method)
    for i, c in enumerate(calls):
        if c[0] == "memcpyAsync" and c[3] == 512 * 2**20:
            spins = [d for d in calls[:i] if d[0] == "kernel" and d[1] == "spin"]
            assert spins and c[5] in {s[4] for s in spins}
    # both ways: host->GPU and GPU->host on two different streams
    both_streams = {(c[4], c[5]) for c in big}
    assert len({s for k, s in both_streams if k == 1} | {s for k, s in both_streams if k == 2}) == 2
    freed = {c[1] for c in calls if c[0] in ("free", "freeHost")}
    assert len(dev - freed) == 1  # only the integrity result array, which CuPy's own pool frees
    assert host <= freed
