"""The dashboard on a busy node: host links on the matrix diagonal, contended pairs marked and explained."""

from __future__ import annotations

import copy
import pathlib

from p2ptop.demos import load_demo
from p2ptop.model import BenchResult, BusyProcess, Contention, Measurement
from p2ptop.sources.capture import Capture, FakeNvml
from p2ptop.sources.nvml import read_snapshot
from p2ptop.ui.app import P2PTopApp

H100 = pathlib.Path(__file__).parent / "fixtures" / "captures" / "h100x1-vm"


async def settle(app, pilot):
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


class Bench:
    """The runner's interface, answering with a given result per pair."""

    def __init__(self, results):
        self.results = results
        self.calls = []

    def bench_available(self, snapshot):
        return True, ""

    def run_pair(self, snapshot, a, b, options=None, on_event=None, cancel=None):
        self.calls.append((a, b))
        return self.results[(a, b)]

    def run_all(self, snapshot, pairs=None, options=None, on_event=None, cancel=None):
        return [self.results[p] for p in self.results]


def host_result():
    return BenchResult(0, 0, status="ok", verdict="healthy", simulated=True, integrity="ok",
                       measurements=[Measurement("h2d", 52.9, expected=63.0, verdict="healthy"),
                                     Measurement("d2h", 51.0, expected=63.0, verdict="healthy")],
                       params={"share": 0.84, "link": {"idle_gen": 1, "idle_width": 16, "load_gen": 5, "load_width": 16,
                                                       "gen_max": 5, "width_max": 16, "load_samples": 9}})


async def test_one_gpu_host_opens_on_its_host_link_and_measures_it():
    snap = read_snapshot(FakeNvml(Capture.load(str(H100))), sysfs_root="/nonexistent")
    bench = Bench({(0, 0): host_result()})
    app = P2PTopApp(reader=lambda: copy.deepcopy(snap), bench=bench)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        assert app.matrix.pair_at_cursor() == (0, 0)
        text = app.export_text()
        assert "GPU0 ⇄ host memory" in text and "measures this GPU's link to the host" in text
        app.matrix.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert bench.calls == [(0, 0)]
        text = app.export_text()
        assert "✔host" in text  # the diagonal cell
        assert "h2d" in text and "52.9" in text and "idle GPU saving power" in text


async def test_contended_pair_has_its_own_symbol_and_says_why():
    r = BenchResult(0, 1, status="ok", verdict="contended", simulated=True,
                    measurements=[Measurement("ce_one_way", 225.0, expected=450.0, verdict="contended")],
                    contention=Contention(checked=True, busy=True, processes=[BusyProcess(0, 4242, "python train.py", 874, "before")],
                                          reasons=["GPU0: another compute process python train.py (pid 4242, 874 MiB), seen before the test",
                                                   "GPU0: 100% utilised before the test (by others)"]))
    bench = Bench({(0, 1): r})
    app = P2PTopApp(demo="dgx-h100", bench=bench)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        app.matrix.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        text = app.export_text()
        assert "≈NV18" in text  # the matrix cell: contended, not ▲ slow
        assert "contended: measured while the GPUs were busy" in text
        assert "python train.py (pid 4242," in text and "100% utilised before the test" in text
        assert app.state.pair_state(0, 1, r) == "contended"


async def test_interrupted_result_is_not_failing():
    r = BenchResult(0, 1, status="interrupted", verdict="interrupted", params={"signal": "SIGKILL"},
                    measurements=[Measurement("ce_one_way", 390.0, expected=450.0, verdict="healthy")])
    app = P2PTopApp(demo="dgx-h100", bench=Bench({(0, 1): r}))
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        app.matrix.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.state.pair_state(0, 1, r) != "failing"
        assert "interrupted by SIGKILL: not a fault of the link" in app.export_text()
