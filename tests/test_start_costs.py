"""What commands skip to start fast, without losing anything: the knowledge base's remembered validation,
the package list from folder names, the host commands started together, doctor's traffic window."""

import json
import threading
import time

from p2ptop.commands import doctor
from p2ptop.demos import load_demo
from p2ptop.host.facts import CommandResult, _installed_packages, prefetched
from p2ptop.knowledge import loader
from p2ptop.knowledge.loader import load_paths
from p2ptop.knowledge.paths import builtin_dir
from p2ptop.knowledge.valid_cache import ValidCache


def _one_entry(tmp_path, name="e.json"):
    src = next(p for p in sorted(builtin_dir().glob("*.json")) if not p.name.endswith("schema.json"))
    d = tmp_path / "kb"
    d.mkdir(exist_ok=True)
    (d / name).write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    return d, json.loads(src.read_text(encoding="utf-8"))


def test_an_entry_validated_once_is_not_validated_again_until_it_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("P2PTOP_CACHE_DIR", str(tmp_path / "cache"))
    d, data = _one_entry(tmp_path)
    calls = []
    real = loader.validate
    monkeypatch.setattr(loader, "validate", lambda x: calls.append(1) or real(x))
    kb = load_paths([d])
    assert len(kb.entries) == 1 and not kb.problems and len(calls) == 1
    assert (tmp_path / "cache" / "kb-valid.json").is_file()
    kb = load_paths([d])
    assert len(kb.entries) == 1 and len(calls) == 1  # remembered: not validated again
    data["failure_class"] = "no-such-class"  # changed (and now broken): validated again, and reported
    (d / "e.json").write_text(json.dumps(data), encoding="utf-8")
    kb = load_paths([d])
    assert len(calls) == 2 and not kb.entries
    assert any(p.field == "failure_class" and "unknown failure class" in p.message for p in kb.problems)
    kb = load_paths([d])  # a broken entry is never remembered: reported every time
    assert len(calls) == 3 and kb.problems


def test_an_unreadable_cache_validates_everything(tmp_path, monkeypatch):
    (tmp_path / "cache").write_text("not a folder")
    monkeypatch.setenv("P2PTOP_CACHE_DIR", str(tmp_path / "cache" / "sub"))
    d, _ = _one_entry(tmp_path)
    assert len(load_paths([d]).entries) == 1
    assert len(load_paths([d]).entries) == 1  # could not write the cache: still loads
    c = ValidCache(tmp_path / "garbage.json")
    (tmp_path / "garbage.json").write_text("{broken")
    assert not c.known("x")


def test_installed_packages_from_dist_info_names(tmp_path, monkeypatch):
    for n in ("cupy_cuda12x-13.3.0.dist-info", "nvidia_cuda_runtime_cu12-12.4.127.dist-info",
              "Old_Thing-1.0-py3.12.egg-info", "not-a-dist", "broken.dist-info"):
        (tmp_path / n).mkdir()
    monkeypatch.setattr("sys.path", [str(tmp_path), str(tmp_path / "missing")])
    pkgs = _installed_packages()
    assert pkgs == {"cupy-cuda12x": "13.3.0", "nvidia-cuda-runtime-cu12": "12.4.127", "old-thing": "1.0"}


def test_prefetched_commands_run_together_and_answer_once():
    started, lock = [], threading.Lock()

    def run(argv):
        with lock:
            started.append(tuple(argv))
        time.sleep(0.2)
        return CommandResult(0, " ".join(argv))

    t0 = time.monotonic()
    r = prefetched(run, (("a",), ("b",), ("c",)))
    outs = [r(["a"]).out, r(["b"]).out, r(["c"]).out]
    assert outs == ["a", "b", "c"]
    assert time.monotonic() - t0 < 0.5  # together, not 0.6 s one after another
    assert r(["a"]).out == "a" and started.count(("a",)) == 2  # asked again: run again
    assert r(["d"]).out == "d"  # not prefetched: run when asked


def test_doctor_waits_for_a_traffic_window_only_with_an_active_nvlink(monkeypatch):
    from p2ptop.bench import contention

    seen = []
    monkeypatch.setattr(contention, "busy_now", lambda snap, window_s=None, **kw: seen.append(window_s) or {})
    for name, want in (("dgx-h100", contention.WINDOW_S), ("pcie-4gpu-iommu", 0.0)):
        snap = load_demo(name)
        snap.source.kind = "nvml"  # the check runs on live snapshots only
        doctor.busy_gpu_findings(snap)
        assert seen[-1] == want, name


def test_busy_now_opens_no_xid_event_set(h200_capture):
    from p2ptop.bench.contention import busy_now
    from p2ptop.sources.capture import FakeNvml

    fake = FakeNvml(h200_capture, event_types=0xFF9F)
    snap = load_demo("h200x2-vm")
    busy_now(snap, nvml=fake, window_s=0.0)
    assert "nvmlEventSetCreate" not in fake.calls and "nvmlDeviceGetUtilizationRates" in fake.calls


def test_quick_exit_commands_leave_nvml_to_the_exit(monkeypatch):
    """`p2ptop topo` as a process ends with os._exit: its read does not shut NVML down first (the exit releases
    it); any other command, and the same read in a process that goes on, still calls nvmlShutdown."""
    import pathlib
    import sys

    from p2ptop import cli
    from p2ptop.live import read_once
    from p2ptop.sources import nvml
    from p2ptop.sources.capture import Capture, FakeNvml

    cap = Capture.load(pathlib.Path(__file__).parent / "fixtures" / "captures" / "h100x1-vm")
    fake = FakeNvml(cap)
    read_once(fake, "/nonexistent", host_facts=False, what="topo")
    assert fake.calls[-1] == "nvmlShutdown"

    seen = {}

    def fake_main(argv):
        seen["flag"] = nvml.LEAVE_OPEN_FOR_EXIT
        f = FakeNvml(cap)
        read_once(f, "/nonexistent", host_facts=False, what="topo")
        seen["calls"] = f.calls
        return 0

    class Exited(Exception):
        pass

    def fake_exit(status):
        raise Exited(status)

    monkeypatch.setattr(cli, "main", fake_main)
    monkeypatch.setattr("os._exit", fake_exit)
    monkeypatch.setattr(nvml, "LEAVE_OPEN_FOR_EXIT", False)
    monkeypatch.setattr(sys, "argv", ["p2ptop", "topo"])
    try:
        cli.entry()
    except Exited:
        pass
    assert seen["flag"] is True and "nvmlShutdown" not in seen["calls"]
    monkeypatch.setattr(nvml, "LEAVE_OPEN_FOR_EXIT", False)
    monkeypatch.setattr(sys, "argv", ["p2ptop", "snapshot"])
    try:
        cli.entry()
    except SystemExit:
        pass
    assert seen["flag"] is False and seen["calls"][-1] == "nvmlShutdown"


def test_live_topo_warms_nvml_in_a_thread_and_nothing_else_does(monkeypatch):
    """`p2ptop topo` (live) starts NVML's first calls in a thread while it imports (sources.nvml_warm); with
    --demo/--replay, or any command that does not end at once, nothing is started (its nvmlInit is never shut
    down: only a process that ends with os._exit may leave it)."""
    import sys

    from p2ptop import cli
    from p2ptop.sources import nvml, nvml_warm

    started = []
    monkeypatch.setattr(nvml_warm, "start", lambda: started.append(list(sys.argv[1:])))
    monkeypatch.setattr(cli, "main", lambda argv: 0)
    monkeypatch.setattr("os._exit", lambda status: (_ for _ in ()).throw(SystemExit(status)))
    for argv in (["topo"], ["topo", "--json"], ["topo", "--demo", "dgx-h100"], ["topo", "--replay=x.json"],
                 ["--demo", "dgx-h100", "topo"], ["snapshot"], ["doctor"], ["topo", "--help"]):
        monkeypatch.setattr(nvml, "LEAVE_OPEN_FOR_EXIT", False)
        monkeypatch.setattr(sys, "argv", ["p2ptop", *argv])
        try:
            cli.entry()
        except SystemExit:
            pass
    assert started == [["topo"], ["topo", "--json"]]


def test_the_nvml_warm_up_fails_quietly_without_the_library():
    from p2ptop.sources import nvml_warm

    assert nvml_warm.warm("libnvidia-ml-not-here.so.1") == 0
    nvml_warm.start().join(5)  # on this machine: no driver (CI) or a real one; either way no exception escapes
