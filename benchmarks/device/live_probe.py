"""In-process figures of the live path on a real GPU host, for benchmarks/device/live.sh.

    python3 benchmarks/device/live_probe.py inprocess   # live snapshot, refresh, calls per refresh, events
    python3 benchmarks/device/live_probe.py latency     # per-function NVML latency table (JSON, CallLatency format)
    python3 benchmarks/device/live_probe.py procs N [--target R] CMD... / CMD...   # process times of two commands, interleaved
    python3 benchmarks/device/live_probe.py phases      # where `p2ptop topo` spends its time, in process
    python3 benchmarks/device/live_probe.py compiled    # whether p2ptop's dependencies have compiled modules
    python3 benchmarks/device/live_probe.py timeline N  # `p2ptop topo` as a process: when each phase ends, spawn = 0
    python3 benchmarks/device/live_probe.py importtime N ARGS...  # -X importtime of `p2ptop ARGS`, N runs, fastest each

Every figure is printed with its reference; nothing here is simulated.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.getcwd())


def stats(xs: list[float]) -> str:
    return (f"median {statistics.median(xs) * 1000:7.1f} ms (min {min(xs) * 1000:.1f}, max {max(xs) * 1000:.1f}, "
            f"n={len(xs)})")


def verdict(value: float, target: float) -> str:
    return "MET" if value <= target else "MISSED"


def procs(n: int, a: list[str], b: list[str], target: float = 0.0) -> None:
    """Wall time of each command as a process, run alternately n times (after one warm-up run each)."""
    ta, tb = [], []
    for cmd in (a, b):
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(n):
        for cmd, out in ((a, ta), (b, tb)):
            t0 = time.perf_counter()
            rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
            out.append(time.perf_counter() - t0)
            if rc != 0:
                print(f"  ! {' '.join(cmd)} exited {rc}")
    ma, mb = statistics.median(ta), statistics.median(tb)
    print(f"  {' '.join(a):<40} {stats(ta)}")
    print(f"  {' '.join(b):<40} {stats(tb)}")
    print(f"  ratio (second / first, medians): {mb / ma:.2f}"
          + (f"   target <= {target:g}: {verdict(mb / ma, target)}" if target else ""))


def inprocess() -> None:
    from p2ptop.live import LiveSource, read_once
    from p2ptop.sources.nvml import NvmlReader

    t0 = time.perf_counter()
    snap = read_once(host_facts=False)
    print(f"first live read in this process (imports, nvmlInit, full read, no host facts): {(time.perf_counter() - t0) * 1000:.1f} ms;"
          f" {len(snap.gpus)} GPU(s): {', '.join(g.name or '?' for g in snap.gpus)}")
    for facts in (False, True):
        xs = []
        for _ in range(10):
            t0 = time.perf_counter()
            read_once(host_facts=facts)
            xs.append(time.perf_counter() - t0)
        what = "with host facts (cached 60 s in process after the first)" if facts else "without host facts"
        print(f"live snapshot in process (nvmlInit + full read + nvmlShutdown), {what}: {stats(xs)}   target <= 100 ms")
    src = LiveSource(events=True)
    first = src.poll()
    print(f"live source, first poll: full read, {first.calls} NVML calls, {first.seconds * 1000:.1f} ms")
    dyn = [src.poll() for _ in range(10)]
    print(f"live source, refresh (NVML kept open, only what moves): {stats([p.seconds for p in dyn])};"
          f" NVML calls per refresh {statistics.median(p.calls for p in dyn):.0f} (full read: {first.calls});"
          f" full reads among them: {sum(p.full for p in dyn)}")
    cpu = []
    for _ in range(10):
        c0 = time.thread_time()
        src.poll()
        cpu.append(time.thread_time() - c0)
    print(f"live source, refresh CPU time of the polling thread: {stats(cpu)}")
    reader = src._reader
    for i, plan in sorted(getattr(reader, "plans", {}).items()):
        print(f"GPU{i} NVLink counters: {plan.way()}")
    print(f"counter note (events log): {src.counter_note or '(none: every counter batched, or no NVLink)'}")
    print(f"NVML events: {json.dumps({str(k): v for k, v in src.event_status.items()})}")
    for k, v in src.event_status.items():
        if "supported" in v:
            print(f"  GPU{k}: supported event types 0x{v['supported']:x}, registered 0x{v.get('registered', 0):x}")
    print(f"  watcher thread running: {src.events is not None}; events delivered so far: "
          f"{src.events.delivered if src.events else 0} (an Xid cannot be caused on purpose here)")
    watcher = src.events
    thread = watcher._thread if watcher is not None else None
    t0 = time.perf_counter()
    src.close()
    print(f"  close: returned after {(time.perf_counter() - t0) * 1000:.1f} ms (quit does not wait for the event thread's"
          f" wait, up to 5 s; the thread frees its event set and calls nvmlShutdown when the wait returns)")
    if thread is not None:
        thread.join(7.0)
        print(f"  event thread {'ended' if not thread.is_alive() else 'STILL RUNNING'} "
              f"{(time.perf_counter() - t0):.2f} s after close; event set freed: {watcher._set is None}")
    # the field-values groups on this host, answer by answer (p2ptop/sources/nvlink_fields.py; a link-scoped
    # field on a GPU without NVLink fails the whole call, so each group is its own call)
    r = NvmlReader()
    r.open()
    try:
        h, why = r.call("nvmlDeviceGetHandleByIndex", 0)
        groups = {"PCIe replays 94, link count 91": [94, 91], "totals 38/45/52/59": [38, 45, 52, 59],
                  "link 0: state 165, version 166": [(165, 0), (166, 0)],
                  "link 0: DL replay/recovery/CRC 161/162/163": [(161, 0), (162, 0), (163, 0)],
                  "link 0 per-link ids (flit 32, data 39, replay 46, recovery 53)": [32, 39, 46, 53]}
        for what, fields in groups.items():
            t0 = time.perf_counter()
            vals, why = r.call("nvmlDeviceGetFieldValues", h, fields)
            ms = (time.perf_counter() - t0) * 1000
            if why:
                print(f"nvmlDeviceGetFieldValues, {what}: the call answered {why} ({ms:.3f} ms)")
            else:
                print(f"nvmlDeviceGetFieldValues, {what} ({ms:.3f} ms; field: nvmlReturn, value): " + ", ".join(
                    f"{f}: {int(v.nvmlReturn)}, {int(v.value.ullVal) if int(v.nvmlReturn) == 0 else '-'}"
                    for f, v in zip(fields, vals)))
    finally:
        r.close()


def phases() -> None:
    """`p2ptop topo` live, step by step in this process (fresh interpreter: run it as its own process)."""
    t = [("start", time.perf_counter())]
    import p2ptop.cli  # noqa: F401
    import p2ptop.commands.topo  # noqa: F401
    t.append(("import p2ptop.cli + commands.topo", time.perf_counter()))
    import pynvml  # noqa: F401, PLC0415 - a device probe, not the package
    t.append(("import pynvml", time.perf_counter()))
    from p2ptop.live import LiveSource
    from p2ptop.topo_text import topo_report
    t.append(("import p2ptop.live + topo_text", time.perf_counter()))
    src = LiveSource(host_facts=False, events=False, what="topo")  # what p2ptop topo reads
    reader = src._open()
    t.append(("nvmlInit (first in this process: the library is loaded)", time.perf_counter()))
    snap = src.poll().snapshot
    t.append((f"topo read ({src.last and len(snap.gpus)} GPUs, {reader.ncalls} NVML calls, PCIe path from sysfs)",
              time.perf_counter()))
    text = topo_report(snap)
    t.append((f"topo report ({len(text)} characters)", time.perf_counter()))
    src.close()
    t.append(("nvmlShutdown", time.perf_counter()))
    for (_, t0), (what, t1) in zip(t, t[1:]):
        print(f"  {what:<72} {(t1 - t0) * 1000:7.1f} ms")
    print(f"  {'total in process (the interpreter start is not in it)':<72} {(t[-1][1] - t[0][1]) * 1000:7.1f} ms")


def topocalls() -> None:
    """The topo read's own time, call by call (first calls in a fresh process: what `p2ptop topo` pays), and
    what is left for Python and sysfs."""
    from p2ptop.live import LiveSource
    from p2ptop.sources import nvml as nvml_mod

    spent: list[tuple[str, float]] = []
    real = nvml_mod.NvmlReader.call

    def timed(self, name, *args, count=True):
        t0 = time.perf_counter()
        try:
            return real(self, name, *args, count=count)
        finally:
            spent.append((name, time.perf_counter() - t0))

    nvml_mod.NvmlReader.call = timed
    src = LiveSource(host_facts=False, events=False, what="topo")
    t0 = time.perf_counter()
    src._open()
    t1 = time.perf_counter()
    src.poll()
    t2 = time.perf_counter()
    src.close()
    t3 = time.perf_counter()
    print(f"  open (nvmlInit) {(t1 - t0) * 1000:.1f} ms; topo read {(t2 - t1) * 1000:.1f} ms; close {(t3 - t2) * 1000:.1f} ms")
    for name, dt in spent:
        print(f"    {name:<44} {dt * 1000:8.3f} ms")
    calls = sum(dt for _, dt in spent)
    print(f"  NVML calls in the read {calls * 1000:.1f} ms; the rest (Python, sysfs, model) {((t2 - t1) - calls) * 1000:.1f} ms")


def affinity(order: str) -> None:
    """First-call cost of the affinity calls in a fresh process, in the ORDER given (comma-separated: cpu, mem,
    numa, sysfs), and what each says (does the cost move to whichever comes first?)."""
    import pynvml  # noqa: PLC0415 - a device probe

    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    bus = pynvml.nvmlDeviceGetPciInfo(h).busId
    bus = (bus.decode() if isinstance(bus, bytes) else bus).lower()
    if bus.count(":") == 2 and len(bus.split(":")[0]) == 8:
        bus = bus[4:]  # 00000000:xx:yy.z -> 0000:xx:yy.z
    out = []
    for what in order.split(","):
        t0 = time.perf_counter()
        try:
            if what == "cpu":
                v = list(pynvml.nvmlDeviceGetCpuAffinity(h, 4))
            elif what == "mem":
                v = list(pynvml.nvmlDeviceGetMemoryAffinity(h, 1, 0))
            elif what == "numa":
                v = pynvml.nvmlDeviceGetNumaNodeId(h)
            else:
                d = f"/sys/bus/pci/devices/{bus}"
                v = (open(f"{d}/local_cpulist").read().strip(), open(f"{d}/local_cpus").read().strip(),
                     open(f"{d}/numa_node").read().strip())
        except Exception as e:  # noqa: BLE001
            v = f"{type(e).__name__}: {e}"
        out.append(f"{what} {(time.perf_counter() - t0) * 1000:.3f} ms -> {v}")
    pynvml.nvmlShutdown()
    print("  " + "; ".join(out))


def compiled() -> None:
    """Each dependency's top module and whether its compiled module (.pyc) is there; a user's pip install has them."""
    import importlib.util

    for name in ("p2ptop", "pynvml", "textual", "rich", "networkx", "jsonschema"):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin:
            print(f"  {name:<11} not installed")
            continue
        pyc = importlib.util.cache_from_source(spec.origin)
        print(f"  {name:<11} {spec.origin}: compiled module {'present' if os.path.exists(pyc) else 'MISSING'}")


def latency() -> None:
    """Seconds per call of each NVML function the reader uses, on GPU0 (median of 20 calls)."""
    from p2ptop.sources.nvml import NvmlReader

    r = NvmlReader()
    r.open()
    try:
        h, _ = r.call("nvmlDeviceGetHandleByIndex", 0)
        count, _ = r.call("nvmlDeviceGetCount")
        h1 = r.call("nvmlDeviceGetHandleByIndex", 1)[0] if count and count > 1 else h
        import pynvml  # noqa: PLC0415 - a device probe, not the package (layering applies to p2ptop/)

        info = pynvml.c_nvmlGpuFabricInfoV_t() if hasattr(pynvml, "c_nvmlGpuFabricInfoV_t") else None
        import ctypes

        calls = {
            "nvmlSystemGetDriverVersion": (), "nvmlSystemGetCudaDriverVersion": (), "nvmlSystemGetNVMLVersion": (),
            "nvmlDeviceGetCount": (), "nvmlDeviceGetHandleByIndex": (0,), "nvmlDeviceGetName": (h,),
            "nvmlDeviceGetUUID": (h,), "nvmlDeviceGetSerial": (h,), "nvmlDeviceGetPciInfo": (h,),
            "nvmlDeviceGetBrand": (h,), "nvmlDeviceGetArchitecture": (h,), "nvmlDeviceGetMemoryInfo": (h,),
            "nvmlDeviceGetCudaComputeCapability": (h,), "nvmlDeviceGetCurrPcieLinkGeneration": (h,),
            "nvmlDeviceGetMaxPcieLinkGeneration": (h,), "nvmlDeviceGetCurrPcieLinkWidth": (h,),
            "nvmlDeviceGetMaxPcieLinkWidth": (h,), "nvmlDeviceGetPcieReplayCounter": (h,),
            "nvmlDeviceGetUtilizationRates": (h,), "nvmlDeviceGetCpuAffinity": (h, 4), "nvmlDeviceGetNumaNodeId": (h,),
            "nvmlDeviceGetMemoryAffinity": (h, 1, 0), "nvmlDeviceGetVirtualizationMode": (h,),
            "nvmlDeviceGetMigMode": (h,), "nvmlDeviceGetNvLinkState": (h, 0), "nvmlDeviceGetNvLinkVersion": (h, 0),
            "nvmlDeviceGetNvLinkRemotePciInfo": (h, 0), "nvmlDeviceGetNvLinkRemoteDeviceType": (h, 0),
            "nvmlDeviceGetNvLinkCapability": (h, 0, 0), "nvmlDeviceGetNvLinkErrorCounter": (h, 0, 0),
            "nvmlDeviceGetTopologyCommonAncestor": (h, h1), "nvmlDeviceGetP2PStatus": (h, h1, 0),
            "nvmlDeviceGetFieldValues": (h, [94, (165, 0), 38, 45, 52, 59]),
            "nvmlDeviceGetSupportedEventTypes": (h,),
        }
        if info is not None:
            calls["nvmlDeviceGetGpuFabricInfoV"] = (h, ctypes.byref(info))
        table, answers = {}, {}
        for name, args in calls.items():
            xs = []
            for _ in range(20):
                t0 = time.perf_counter()
                _, why = r.call(name, *args)
                xs.append(time.perf_counter() - t0)
            table[name] = round(statistics.median(xs), 7)
            answers[name] = why or "ok"
        # a field-values call's cost by the number of fields (what the refresh shortcut relies on)
        for n in (1, 8, 32):
            xs = []
            for _ in range(20):
                t0 = time.perf_counter()
                r.call("nvmlDeviceGetFieldValues", h, [94] * n)
                xs.append(time.perf_counter() - t0)
            table[f"nvmlDeviceGetFieldValues[{n} fields]"] = round(statistics.median(xs), 7)
        # on a GPU with NVLink: a field-values call's cost by its NVLink fields (one driver query, or one a field?)
        links = 0
        while links < 36 and r.call("nvmlDeviceGetNvLinkState", h, links)[1] is None:
            links += 1
        if links:
            groups = {"1 link state": [(165, 0)], f"{links} link states": [(165, l) for l in range(links)],
                      f"{links} x DL replay/recovery/CRC": [(f, l) for l in range(links) for f in (161, 162, 163)],
                      "4 counters of link 0 by per-link ids": [32, 39, 46, 53]}
            for what, fields in groups.items():
                xs = []
                for _ in range(20):
                    t0 = time.perf_counter()
                    r.call("nvmlDeviceGetFieldValues", h, fields)
                    xs.append(time.perf_counter() - t0)
                table[f"nvmlDeviceGetFieldValues[{what}]"] = round(statistics.median(xs), 7)
    finally:
        r.close()
    out = {
        "origin": f"MEASURED by benchmarks/device/live_probe.py latency on {socket.gethostname()} at "
                  f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}: median of 20 calls each on GPU0, through "
                  f"NvmlReader.call (the reader's own wrapper included). Answers: "
                  + "; ".join(f"{k}: {v}" for k, v in answers.items() if v != "ok"),
        "default_s": round(statistics.median(table.values()), 7),
        "per_call_s": table,
    }
    print(json.dumps(out, indent=1))


def importtime(n: int, args: list[str], top: int = 22) -> None:
    """``python -X importtime -m p2ptop ARGS`` n times: per module the smallest self and cumulative times (ms)."""
    best: dict[str, list[int]] = {}
    for _ in range(n):
        err = subprocess.run([sys.executable, "-X", "importtime", "-m", "p2ptop", *args], capture_output=True,
                             text=True).stderr
        for line in err.splitlines():
            if line.startswith("import time:") and line.count("|") == 2 and "self [us]" not in line:
                a, b, name = line[len("import time:"):].split("|")
                cur = best.setdefault(name.strip(), [10**9, 10**9])
                cur[0], cur[1] = min(cur[0], int(a)), min(cur[1], int(b))
    print(f"  {'self ms':>8} {'cumul. ms':>9}  module   (fastest of {n} runs of python -X importtime -m p2ptop {' '.join(args)})")
    for name, (a, b) in sorted(best.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"  {a / 1000:8.2f} {b / 1000:9.2f}  {name}")


#: run in the child by timeline(): `p2ptop topo` as cli.entry runs it, with marks on the shared monotonic clock
_TIMELINE_CHILD = r"""
import time, sys, json, threading
marks = {"python started": time.perf_counter()}
main = threading.main_thread()
def hook(event, args):
    if threading.current_thread() is not main:
        return
    if event == "import" and "imports done" not in marks:
        marks["last import"] = time.perf_counter()
    elif event == "ctypes.call_function" and "imports done" not in marks:
        marks["imports done"] = marks.get("last import", 0.0)
        marks["first NVML call, main thread"] = time.perf_counter()
sys.addaudithook(hook)
import p2ptop.cli as cli
from p2ptop.sources import nvml_warm
real_warm = nvml_warm.warm
def warm(*a, **k):
    marks["warm thread began"] = time.perf_counter()
    n = real_warm(*a, **k)
    marks["warm thread ended"] = time.perf_counter()
    return n
nvml_warm.warm = warm
import os
real_exit = os._exit
def exit_(status):
    marks["output written, exit"] = time.perf_counter()
    marks.pop("last import", None)
    sys.stderr.write("TIMELINE " + json.dumps(marks) + "\n"); sys.stderr.flush()
    real_exit(status)
os._exit = exit_
sys.argv = ["p2ptop", "topo"]
cli.entry()
"""


def timeline(n: int) -> None:
    """Where `p2ptop topo`'s time goes as a process: marks on the monotonic clock the parent shares (spawn = 0),
    medians of n runs; the warm-up thread's span beside the imports it overlaps."""
    rows: dict[str, list[float]] = {}
    for _ in range(n + 1):
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-c", _TIMELINE_CHILD], capture_output=True, text=True)
        end = time.perf_counter()
        line = next((l for l in p.stderr.splitlines() if l.startswith("TIMELINE ")), None)
        if line is None:
            print("  ! no timeline:", p.stderr[-300:])
            return
        marks = json.loads(line[len("TIMELINE "):])
        marks["process ended"] = end
        for k, v in marks.items():
            rows.setdefault(k, []).append((v - t0) * 1000)
    for k, v in sorted(rows.items(), key=lambda kv: statistics.median(kv[1][1:])):
        xs = v[1:]  # the first run warms the page cache
        print(f"  {k:<28} median {statistics.median(xs):6.1f} ms after spawn (min {min(xs):.1f}, max {max(xs):.1f}, n={len(xs)})")


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "inprocess":
        inprocess()
    elif what == "latency":
        latency()
    elif what == "phases":
        phases()
    elif what == "topocalls":
        topocalls()
    elif what == "affinity":
        affinity(sys.argv[2])
    elif what == "timeline":
        timeline(int(sys.argv[2]))
    elif what == "compiled":
        compiled()
    elif what == "importtime":
        importtime(int(sys.argv[2]), sys.argv[3:])
    elif what == "procs":
        n = int(sys.argv[2])
        rest = sys.argv[3:]
        target = 0.0
        if rest[0] == "--target":
            target, rest = float(rest[1]), rest[2:]
        cut = rest.index("/")
        procs(n, rest[:cut], rest[cut + 1:], target)
