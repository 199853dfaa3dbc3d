"""What the live path's NVLink reads cost on a host with NVLink, and what its counters say, for issue 21.

    python3 benchmarks/device/x2_probe.py costs     # per full read / refresh: NVML time by function (real calls)
    python3 benchmarks/device/x2_probe.py fields    # each field-values source and its function twin: median costs
    python3 benchmarks/device/x2_probe.py counters [SECONDS]  # every link's counters by function, 163, 161/162,
                                                   # twice SECONDS apart: which move, and what field 163 follows
    python3 benchmarks/device/x2_probe.py parallel  # the expensive calls on two GPUs, one after the other and in
                                                   # two threads at once (does the driver serve them in parallel?)

Real NVML only; every figure is a measurement on the host it runs on.
"""

from __future__ import annotations

import collections
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.getcwd())


def med(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1e3:8.3f} ms (min {min(xs) * 1e3:.3f}, n={len(xs)})"


class Timed:
    """pynvml with every call timed by function name (wall time and this thread's CPU time)."""

    def __init__(self, nvml):
        self._n = nvml
        self.wall = collections.Counter()
        self.cpu = collections.Counter()
        self.count = collections.Counter()

    def __getattr__(self, name):
        v = getattr(self._n, name)
        if not name.startswith("nvml") or not callable(v):
            return v

        def call(*a):
            w0, c0 = time.perf_counter(), time.thread_time()
            try:
                return v(*a)
            finally:
                key = name
                if name == "nvmlDeviceGetFieldValues":
                    ids = sorted({f[0] if isinstance(f, tuple) else f for f in a[1]})
                    key = f"{name}[{len(a[1])}: {','.join(map(str, ids[:8]))}{'...' if len(ids) > 8 else ''}]"
                self.wall[key] += time.perf_counter() - w0
                self.cpu[key] += time.thread_time() - c0
                self.count[key] += 1
        return call

    def report(self, title: str) -> None:
        total = sum(self.wall.values())
        print(f"{title}: {sum(self.count.values())} calls, {total * 1e3:.1f} ms wall in NVML "
              f"({sum(self.cpu.values()) * 1e3:.1f} ms CPU)")
        for k, w in self.wall.most_common(14):
            print(f"  {w * 1e3:8.2f} ms  {self.count[k]:4d} x  {k}")
        self.wall.clear(); self.cpu.clear(); self.count.clear()


def costs() -> None:
    import pynvml
    from p2ptop.live import LiveSource

    t = Timed(pynvml)
    w0 = time.perf_counter()
    src = LiveSource(t, "/", host_facts=False, events=False, static_every=1e9)
    src.poll()
    print(f"first poll (nvmlInit + full read): {(time.perf_counter() - w0) * 1e3:.1f} ms wall")
    t.report("full read")
    for i in range(3):
        w0 = time.perf_counter()
        src.poll()
        print(f"refresh {i + 1}: {(time.perf_counter() - w0) * 1e3:.1f} ms wall")
        t.report(f"refresh {i + 1}")
    src.close()


def fields() -> None:
    import pynvml as n

    n.nvmlInit()
    h = n.nvmlDeviceGetHandleByIndex(0)

    def timeit(fn, k=15):
        xs = []
        for _ in range(k):
            t0 = time.perf_counter()
            try:
                fn()
            except n.NVMLError:
                pass
            xs.append(time.perf_counter() - t0)
        return med(xs)

    links = 0
    while links < 36:
        try:
            n.nvmlDeviceGetNvLinkState(h, links)
            links += 1
        except n.NVMLError:
            break
    print(f"GPU0: {links} NVLinks")
    fv = n.nvmlDeviceGetFieldValues
    rows = {
        "version by function, link 0": lambda: n.nvmlDeviceGetNvLinkVersion(h, 0),
        "version field 166, link 0": lambda: fv(h, [(166, 0)]),
        f"version field 166, {links} links": lambda: fv(h, [(166, l) for l in range(links)]),
        "state by function, link 0": lambda: n.nvmlDeviceGetNvLinkState(h, 0),
        f"state field 165, {links} links": lambda: fv(h, [(165, l) for l in range(links)]),
        "replay by function (counter 0), link 0": lambda: n.nvmlDeviceGetNvLinkErrorCounter(h, 0, 0),
        "crc flit by function (counter 2), link 0": lambda: n.nvmlDeviceGetNvLinkErrorCounter(h, 0, 2),
        "crc data by function (counter 3), link 0": lambda: n.nvmlDeviceGetNvLinkErrorCounter(h, 0, 3),
        "field 161 replay, link 0": lambda: fv(h, [(161, 0)]),
        f"field 161 replay, {links} links": lambda: fv(h, [(161, l) for l in range(links)]),
        f"field 163 CRC, {links} links": lambda: fv(h, [(163, l) for l in range(links)]),
        f"fields 161+162+163, {links} links": lambda: fv(h, [(f, l) for l in range(links) for f in (161, 162, 163)]),
        f"states 165 x {links} + PCIe replays 94": lambda: fv(h, [(165, l) for l in range(links)] + [94]),
        "PCIe replays field 94": lambda: fv(h, [94]),
        "PCIe replays by function": lambda: n.nvmlDeviceGetPcieReplayCounter(h),
        "link count field 91": lambda: fv(h, [91]),
        "capability P2P by function, link 0": lambda: n.nvmlDeviceGetNvLinkCapability(h, 0, 0),
        "P2P status GPU0->GPU1 read": lambda: n.nvmlDeviceGetP2PStatus(h, n.nvmlDeviceGetHandleByIndex(1), 0),
        "utilisation": lambda: n.nvmlDeviceGetUtilizationRates(h),
        "PCIe width now": lambda: n.nvmlDeviceGetCurrPcieLinkWidth(h),
        "MIG mode": lambda: n.nvmlDeviceGetMigMode(h),
    }
    for what, fn in rows.items():
        print(f"  {what:<44} {timeit(fn)}")
    n.nvmlShutdown()


def counters(seconds: float) -> None:
    import pynvml as n

    n.nvmlInit()

    def read():
        out = {}
        for i in range(n.nvmlDeviceGetCount()):
            h = n.nvmlDeviceGetHandleByIndex(i)
            for l in range(36):
                try:
                    n.nvmlDeviceGetNvLinkState(h, l)
                except n.NVMLError:
                    break
                row = {}
                for name, c in (("replay", 0), ("recovery", 1), ("crc_flit", 2), ("crc_data", 3)):
                    try:
                        row[name] = n.nvmlDeviceGetNvLinkErrorCounter(h, l, c)
                    except n.NVMLError as e:
                        row[name] = str(e)
                for f, name in ((161, "f161"), (162, "f162"), (163, "f163")):
                    v = n.nvmlDeviceGetFieldValues(h, [(f, l)])[0]
                    row[name] = v.value.ullVal if v.nvmlReturn == 0 else f"ret {v.nvmlReturn}"
                out[(i, l)] = row
        return out

    a = read()
    time.sleep(seconds)
    b = read()
    nonzero = {k: v for k, v in b.items() if any(isinstance(x, int) and x for x in v.values())}
    print(f"links with a nonzero counter: {len(nonzero)} of {len(b)}")
    for k, v in list(nonzero.items())[:40]:
        d = {name: (v[name] - a[k][name]) if isinstance(v[name], int) and isinstance(a[k][name], int) else "-" for name in v}
        print(f"  GPU{k[0]} link {k[1]:2d}: {v}   moved in {seconds:g} s: {d}")
    same = [k for k, v in b.items() if isinstance(v["f163"], int) and isinstance(v["crc_flit"], int)
            and isinstance(v["crc_data"], int)]
    for label, f in (("flit+data", lambda v: v["crc_flit"] + v["crc_data"]), ("flit", lambda v: v["crc_flit"]),
                     ("data", lambda v: v["crc_data"])):
        print(f"field 163 == {label} on {sum(1 for k in same if b[k]['f163'] == f(b[k]))} of {len(same)} links")
    for f, name in (("f161", "replay"), ("f162", "recovery")):
        print(f"field {f[1:]} == {name} by function on {sum(1 for k, v in b.items() if v[f] == v[name])} of {len(b)} links")
    n.nvmlShutdown()


def parallel() -> None:
    import pynvml as n

    n.nvmlInit()
    hs = [n.nvmlDeviceGetHandleByIndex(i) for i in range(n.nvmlDeviceGetCount())]
    if len(hs) < 2:
        print("one GPU: nothing to run in parallel")
        return

    def work(h):
        for l in range(18):
            n.nvmlDeviceGetNvLinkErrorCounter(h, l, 2)
            n.nvmlDeviceGetNvLinkErrorCounter(h, l, 3)

    for rnd in range(3):
        t0 = time.perf_counter()
        for h in hs[:2]:
            work(h)
        serial = time.perf_counter() - t0
        ts = [threading.Thread(target=work, args=(h,)) for h in hs[:2]]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        par = time.perf_counter() - t0
        print(f"round {rnd + 1}: 2 x 36 crc counter calls: one after the other {serial * 1e3:.1f} ms, "
              f"two threads (one a GPU) {par * 1e3:.1f} ms")
    n.nvmlShutdown()


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "costs"
    if what == "costs":
        costs()
    elif what == "fields":
        fields()
    elif what == "counters":
        counters(float(sys.argv[2]) if len(sys.argv) > 2 else 10.0)
    elif what == "parallel":
        parallel()
    else:
        sys.exit(__doc__)
