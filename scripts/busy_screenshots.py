"""Screenshots of issue 18's views (SIMULATED results, labelled so on screen): a one-GPU host on its host link,
and a contended pair, at 80 x 24 and 200 x 50.  python scripts/busy_screenshots.py [OUTDIR]"""

from __future__ import annotations

import asyncio
import copy
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from p2ptop.bench.judge import judge  # noqa: E402
from p2ptop.bench.simulate import simulate_host  # noqa: E402
from p2ptop.fabric import Fabric  # noqa: E402
from p2ptop.model import BenchResult, BusyProcess, Contention, Measurement  # noqa: E402
from p2ptop.model import load_snapshot  # noqa: E402
from p2ptop.ui.app import P2PTopApp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
H100 = os.path.join(HERE, "..", "tests", "fixtures", "captures", "h100x1-vm")


class Bench:
    def __init__(self, results):
        self.results = results

    def bench_available(self, snapshot):
        return True, ""

    def run_pair(self, snapshot, a, b, options=None, on_event=None, cancel=None):
        return self.results[(a, b)]


async def shoot(app, size, path):
    async with app.run_test(size=size) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        app.matrix.focus()
        await pilot.press("enter")
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause(0.2)
        app.save_screenshot(os.path.basename(path), os.path.dirname(path))
    print("wrote", path)


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "screenshots")
    from p2ptop.sources.capture import Capture, FakeNvml
    from p2ptop.sources.nvml import read_snapshot

    one = read_snapshot(FakeNvml(Capture.load(H100)), sysfs_root="/nonexistent")
    host = simulate_host(one, 0, {"h2d", "d2h", "host_integrity"})
    host.params["link"] = {"idle_gen": 1, "idle_width": 16, "load_gen": 5, "load_width": 16, "gen_max": 5, "width_max": 16,
                           "load_samples": 12, "replay_before": 2, "replay_after": 2}
    judge(host, Fabric(one))
    from p2ptop.demos import load_demo

    dgx = load_demo("dgx-h100")
    busy = BenchResult(0, 1, simulated=True, measurements=[Measurement("ce_one_way", 225.0), Measurement("sm_write", 171.0)],
                       contention=Contention(checked=True, busy=True,
                                             processes=[BusyProcess(0, 4242, "python train.py --nccl", 61234, "before")],
                                             reasons=["GPU0: another compute process python train.py --nccl (pid 4242, 61234 MiB), seen before the test",
                                                      "GPU0: 100% utilised before the test (by others)",
                                                      "GPU1: NVLink in traffic 151.2 GB/s before the test (not the test's)"]))
    judge(busy, Fabric(dgx))
    for w, h in ((80, 24), (200, 50)):
        asyncio.run(shoot(P2PTopApp(reader=lambda: copy.deepcopy(one), bench=Bench({(0, 0): host})), (w, h),
                          os.path.join(out, f"host-link-h100-{w}x{h}.svg")))
        asyncio.run(shoot(P2PTopApp(demo="dgx-h100", bench=Bench({(0, 1): busy})), (w, h),
                          os.path.join(out, f"contended-dgx-h100-{w}x{h}.svg")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
