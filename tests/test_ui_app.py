"""Pilot tests of the dashboard: the flows a person walks, with demos, a fake live source and a fake copy-test runner."""

from __future__ import annotations

import copy
import threading
import time

import pytest
from textual.worker import WorkerCancelled

from p2ptop.demos import DEMOS, load_demo
from p2ptop.model import BenchResult, Measurement
from p2ptop.sources import SourceUnavailable
from p2ptop.ui.app import P2PTopApp
from p2ptop.ui.screens.help import HelpScreen
from p2ptop.ui.widgets.fabric_view import FabricView
from p2ptop.ui.widgets.pair_matrix import PairMatrix


async def settle(app, pilot):
    """Let workers finish and their messages be handled."""
    for _ in range(3):
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            pass  # a read replaced by a newer one (exclusive workers)
        await pilot.pause()


async def until(pilot, condition, tries: int = 100, step: float = 0.02) -> None:
    """Pause until ``condition()`` holds, at most ``tries`` x ``step`` seconds (the test's assertions say what failed)."""
    for _ in range(tries):
        await pilot.pause(step)
        if condition():
            return


def screen_text(app) -> str:
    return app.export_text()


class SequenceReader:
    """A fake live source: hands out snapshots (or raises) in order, then repeats the last."""

    def __init__(self, items):
        self.items = list(items)
        self.calls = 0
        self.active = 0
        self.max_active = 0
        self.lock = threading.Lock()

    def __call__(self):
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            item = self.items[min(self.calls, len(self.items) - 1)]
            self.calls += 1
        try:
            time.sleep(0.01)
            if isinstance(item, Exception):
                raise item
            snap = copy.deepcopy(item)
            snap.source.kind = "nvml"
            return snap
        finally:
            with self.lock:
                self.active -= 1


@pytest.mark.parametrize("demo", list(DEMOS))
async def test_each_demo_opens_with_header_and_matrix(demo):
    app = P2PTopApp(demo=demo)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        snap = app.state.snapshot
        text = screen_text(app)
        assert f"DEMO {demo} (simulated)" in text
        assert f"{len(snap.gpus)} GPU" in text
        assert f"driver {snap.driver_version}" in text
        assert f"CUDA {snap.cuda_driver_version}" in text
        assert app.matrix.virtual_size.height == len(snap.gpus) + 1
        a, b = app.pair
        assert f"GPU{a} → GPU{b}" in text
        # it opens on the first pair in the worst state, so a problem shows at once
        assert app.pair == app.state.worst_pair()
        assert app.pair == {"pcie-4gpu-iommu": (0, 2), "nvlink-degraded": (0, 3)}.get(demo, (0, 1))


async def test_matrix_moves_and_highlight_never_starts_work():
    bench = FakeBench()
    app = P2PTopApp(demo="dgx-h100", bench=bench)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        app.matrix.focus()
        await pilot.press("down", "down", "right", "right", "right")
        await settle(app, pilot)
        assert app.pair == (2, 4)
        assert "Pair GPU2 → GPU4" in screen_text(app)
        assert bench.calls == []  # moving never launches a copy test
        await pilot.press("t")
        await settle(app, pilot)
        assert app.pair == (4, 2)


async def test_cycle_cell_modes():
    app = P2PTopApp(demo="pcie-4gpu-iommu")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        assert "⊘SYS" in screen_text(app)  # cross-socket pairs refused, with the symbol as well as colour
        await pilot.press("c")
        assert app.matrix.mode == "glance"
        await pilot.press("c")
        assert app.matrix.mode == "p2p"
        await pilot.pause()
        text = screen_text(app)
        assert "Pairs: P2P capabilities" in text and "rw··p" in text and "·····" in text
        await pilot.press("c", "c", "c", "c")  # bw, expected, nccl, back to path
        assert app.matrix.mode == "path"


async def test_pair_panel_shows_nvml_reasons_and_findings():
    app = P2PTopApp(demo="pcie-4gpu-iommu")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        app.matrix.select_pair(0, 2)
        await settle(app, pilot)
        text = screen_text(app)
        assert "read ⊘ chipset not supported" in text
        assert "P2P not available" in text  # the pair's finding


async def test_select_pair_by_clicks_in_the_fabric():
    app = P2PTopApp(demo="dgx-h100")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        fab = app.fabric
        y3 = next(i for i, line in enumerate(fab.lines) if line.gpu == 3)
        y6 = next(i for i, line in enumerate(fab.lines) if line.gpu == 6)
        assert await pilot.click(fab, offset=(12, y3 + 1))  # +1: the border
        await pilot.pause()
        assert fab.pending == 3
        assert await pilot.click(fab, offset=(12, y6 + 1))
        await settle(app, pilot)
        assert app.pair == (3, 6)
        assert app.matrix.pair_at_cursor() == (3, 6)


async def test_select_pair_by_keys_in_the_fabric():
    app = P2PTopApp(demo="dgx-h100")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        await pilot.press("f", "down", "space", "down", "down", "enter")
        await settle(app, pilot)
        assert app.pair == (1, 3)


async def test_matrix_click_highlights_then_second_click_acts():
    bench = FakeBench()
    app = P2PTopApp(demo="dgx-h100", bench=bench)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        from p2ptop.ui.widgets.pair_matrix import CELL_W, LABEL_W

        offset = (LABEL_W + 5 * CELL_W + 2 + 1, 2 + 1 + 1)  # column GPU5, row GPU2; +1 for the border
        assert await pilot.click(app.matrix, offset=offset)
        await settle(app, pilot)
        assert app.pair == (2, 5)
        assert bench.calls == []
        assert await pilot.click(app.matrix, offset=offset)
        await settle(app, pilot)
        assert bench.calls == [("pair", 2, 5)]


async def test_help_lists_every_key():
    app = P2PTopApp(demo="dgx-h100")
    async with app.run_test(size=(200, 70)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for b in P2PTopApp.BINDINGS + PairMatrix.BINDINGS + FabricView.BINDINGS:
            assert b.description.lower() in text.lower()
            assert app.get_key_display(b.__class__(b.key.split(",")[0], b.action)) in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_resize_to_80x24_folds_panes():
    app = P2PTopApp(demo="nvl72")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        assert app.fabric.display and app.events.display
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert app.layout_name() == "narrow"
        assert not app.fabric.display and app.matrix.display
        text = screen_text(app)
        assert "nvl72" in text and "GPU0 → GPU1" in text
        await pilot.press("f")
        await pilot.pause()
        assert app.fabric.display and not app.matrix.display
        assert "72 GPUs" in screen_text(app)
        await pilot.resize_terminal(130, 40)
        await pilot.pause()
        assert app.layout_name() == "medium"
        assert app.fabric.display and not app.matrix.display and app.panel.display  # f was the last pane chosen
        await pilot.press("m")
        await pilot.pause()
        assert not app.fabric.display and app.matrix.display and app.events.display
        await pilot.resize_terminal(200, 60)
        await pilot.pause()
        assert app.fabric.display and app.matrix.display and app.events.display


async def test_zoom_fills_the_screen_with_the_matrix():
    app = P2PTopApp(demo="nvl72")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        app.matrix.focus()
        await pilot.press("c", "z")
        await pilot.pause()
        assert app.screen.maximized is app.matrix
        assert app.matrix.size.width >= 7 + 72 * 2  # every column at a glance
        await pilot.press("z")
        await pilot.pause()
        assert app.screen.maximized is None


async def test_nvl72_matrix_cursor_scrolls_into_view():
    app = P2PTopApp(demo="nvl72")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.matrix.focus()
        await pilot.press("end")
        await settle(app, pilot)
        assert app.pair == (71, 70)
        assert app.matrix.scroll_y > 0 and app.matrix.scroll_x > 0
        assert "GPU71" in screen_text(app)


async def test_live_link_going_down_is_marked_and_logged():
    healthy = load_demo("dgx-h100")
    broken = copy.deepcopy(healthy)
    broken.gpus[3].nvlinks[4].state = "inactive"
    broken.gpus[3].nvlinks[5].counters["crc_flit"] = 7
    reader = SequenceReader([healthy, healthy, broken])
    app = P2PTopApp(reader=reader, interval=0.05)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: reader.calls >= 4)
        await settle(app, pilot)
        assert reader.max_active == 1  # polls never overlap
        text = screen_text(app)
        assert "LIVE" in text
        assert app.state.gpu_state[3] == "degraded"
        assert app.state.recently_changed(3)
        assert "GPU3 NVLink 4 went down" in text
        assert "crc_flit errors +7" in text
        line = next(line for line in app.fabric.lines if line.gpu == 3)
        assert "⚡" in line.text.plain and "▲" in line.text.plain
        assert "GPU3⚡" in text  # the matrix row is marked too


async def test_nvml_failing_mid_run_keeps_the_last_picture():
    healthy = load_demo("dgx-h100")
    reader = SequenceReader([healthy, RuntimeError("NVML_ERROR_GPU_IS_LOST")])
    app = P2PTopApp(reader=reader, interval=0.05)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: reader.calls >= 3 and app.banner.display)
        text = screen_text(app)
        assert "NVML read failed" in text and "GPU_IS_LOST" in text
        assert app.state is not None and len(app.state.indices) == 8  # still showing the last snapshot
        reader.items.append(healthy)  # NVML comes back
        await until(pilot, lambda: not app.banner.display)
        assert not app.banner.display
        assert "NVML answers again" in screen_text(app)


async def test_gpu_lost_is_shown():
    healthy = load_demo("dgx-h100")
    lost = copy.deepcopy(healthy)
    lost.gpus[2].na["name"] = "GPU is lost"
    reader = SequenceReader([healthy, lost])
    app = P2PTopApp(reader=reader, interval=0.05)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: app.state is not None and app.state.gpu_state.get(2) == "lost")
        await settle(app, pilot)
        assert app.state.gpu_state[2] == "lost"
        assert "GPU2 lost" in screen_text(app)


async def test_live_nvml_reader_with_gpus_lost_and_nvml_failing(h200_capture, tmp_path):
    """The live path (p2ptop.live, NVML kept open between polls) answering from the H200 capture, with faults injected."""
    from p2ptop.sources.capture import FakeNvml
    from p2ptop.ui.poller import LiveReader

    fake = FakeNvml(h200_capture)
    reader = LiveReader(nvml=fake, sysfs_root=str(tmp_path), host_facts=False)
    app = P2PTopApp(reader=reader, interval=0.05)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: app.state is not None)
        assert "LIVE" in screen_text(app) and "NVIDIA H200" in screen_text(app)
        fake.lost_gpus.update({0, 1})
        await until(pilot, lambda: app.state.gpu_state.get(0) == "lost")
        await settle(app, pilot)
        assert app.state.gpu_state == {0: "lost", 1: "lost"}
        text = screen_text(app)
        assert "GPU0 lost" in text and "✖" in text
        fake.lost_gpus.clear()
        fake.faults["nvmlDeviceGetCount"] = "UNKNOWN"
        await until(pilot, lambda: "NVML gpus failing" in screen_text(app))
        text = screen_text(app)
        assert "NVML gpus failing" in text and "No GPUs in this snapshot: NVML said" in text


async def test_xid_event_shows_in_the_events_log_within_a_second(h200_capture, tmp_path):
    """An NVML event between polls (interval 1 h here) goes straight to the events log."""
    from p2ptop.sources.capture import FakeNvml
    from p2ptop.ui.poller import LiveReader

    fake = FakeNvml(h200_capture, event_types=0xFF9F)  # the types the lent H100 reported
    app = P2PTopApp(reader=LiveReader(nvml=fake, sysfs_root=str(tmp_path), host_facts=False), interval=3600)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: app.state is not None)
        await settle(app, pilot)
        assert "Xid" not in screen_text(app)
        assert fake.inject_event(0, 0x8, 79) == 1
        t0 = time.monotonic()
        while "GPU0 Xid 79: GPU has fallen off the bus" not in screen_text(app):
            assert time.monotonic() - t0 < 1.0, "the Xid did not show within a second"
            await pilot.pause(0.02)


async def test_no_driver_opens_demo_with_banner():
    reader = SequenceReader([SourceUnavailable("NVML could not be initialised: Driver Not Loaded")])
    app = P2PTopApp(reader=reader)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        assert "No usable NVIDIA driver here" in text and "Driver Not Loaded" in text
        assert "--demo NAME" in text and "--replay FILE" in text
        assert app.state.snapshot.source.kind == "demo" and "(simulated)" in text


async def test_unreadable_replay_file_is_explained(tmp_path):
    bad = tmp_path / "snap.json"
    bad.write_text("{ not json")
    app = P2PTopApp(replay=str(bad))
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        assert "Could not read the snapshot" in text and "not valid JSON" in text
        assert app.state is not None  # still running, showing the default demo


async def test_replay_header_names_file_and_time(tmp_path):
    from p2ptop.model import save_snapshot

    path = tmp_path / "mine.json"
    snap = load_demo("h200x2-vm")
    snap.source.taken_at = "2026-11-01T10:00:00+00:00"
    save_snapshot(snap, str(path))
    app = P2PTopApp(replay=str(path))
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        assert "REPLAY simulated" in text and "mine.json" in text and "2026-11-01T10:00:00" in text


async def test_open_snapshot_file_from_the_palette_action(tmp_path):
    from p2ptop.model import save_snapshot

    path = tmp_path / "other.json"
    save_snapshot(load_demo("rtx4090-2gpu"), str(path))
    app = P2PTopApp(demo="dgx-h100")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        from textual.widgets import Input

        app._ask_replay()
        await pilot.pause()
        app.screen.query_one(Input).value = str(path)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.state.snapshot.source.kind == "replay"
        assert "other.json" in screen_text(app)
        app._ask_replay()
        await pilot.pause()
        app.screen.query_one(Input).value = str(tmp_path / "missing.json")
        await pilot.press("enter")
        await settle(app, pilot)
        text = screen_text(app)
        assert "no such file" in text and "Still showing" in text
        assert app.state.snapshot.source.detail == "other.json"


async def test_untrusted_text_is_never_markup():
    snap = load_demo("h200x2-vm")
    snap.gpus[0].name = "[bold red]EVIL[/] \x1b[31mX"
    app = P2PTopApp(snapshot=snap)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        assert "[bold red]EVIL[/]" in text
        assert "\x1b[31m" not in text


# --- copy tests through a fake runner ---------------------------------------------------------------


class FakeBench:
    """The runner's interface; each pair takes `steps` progress events unless cancelled."""

    def __init__(self, available=(True, ""), steps=5, delay=0.0, gate=None):
        self.available = available
        self.steps = steps
        self.delay = delay
        self.gate = gate
        self.calls = []
        self.cancelled = False

    def bench_available(self, snapshot):
        return self.available

    def _one(self, a, b, on_event, cancel):
        for i in range(self.steps):
            if self.gate is not None:
                self.gate.wait(5)
            if cancel.is_set():
                self.cancelled = True
                return BenchResult(a, b, status="cancelled")
            on_event({"type": "progress", "a": a, "b": b, "step": "ce_one_way", "fraction": i / self.steps, "message": "copying"})
            time.sleep(self.delay)
        return BenchResult(a, b, status="ok", verdict="slow", simulated=True,
                           measurements=[Measurement("ce_one_way", 225.0, expected=450.0, verdict="slow")])

    def run_pair(self, snapshot, a, b, options=None, on_event=None, cancel=None):
        self.calls.append(("pair", a, b))
        return self._one(a, b, on_event, cancel)

    def run_all(self, snapshot, pairs=None, options=None, on_event=None, cancel=None):
        self.calls.append(("all",))
        out = []
        for a in snapshot.gpu_indices:
            for b in snapshot.gpu_indices:
                if a != b:
                    out.append(self._one(a, b, on_event, cancel))
        return out


async def test_copy_test_from_matrix_shows_progress_and_fills_cell():
    gate = threading.Event()
    bench = FakeBench(steps=3, gate=gate)
    app = P2PTopApp(demo="dgx-h100", bench=bench)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        app.matrix.focus()
        await pilot.press("right", "enter")  # cursor starts on (0, 1): now (0, 2)
        await pilot.pause(0.05)
        assert bench.calls == [("pair", 0, 2)]
        assert (0, 2) in app.matrix.running
        assert "▶" in screen_text(app)  # progress shown on the cell and in the panel
        gate.set()
        await settle(app, pilot)
        assert (0, 2) not in app.matrix.running
        assert app.bench_results[(0, 2)].status == "ok"
        assert app.state.snapshot.bench  # results go into the snapshot (export, report)
        app._set_mode("bw")  # bandwidth share
        await pilot.pause()
        text = screen_text(app)
        assert "▲ 50%" in text
        assert "SIMULATED" in text


async def test_copy_test_can_be_cancelled():
    gate = threading.Event()
    bench = FakeBench(steps=50, gate=gate)
    app = P2PTopApp(demo="dgx-h100", bench=bench)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        app.matrix.focus()
        await pilot.press("enter")
        await pilot.pause(0.05)
        await pilot.press("escape")
        gate.set()
        await settle(app, pilot)
        assert bench.cancelled
        assert app.bench_results[(0, 1)].status == "cancelled"
        assert app.matrix.running == {}


async def test_copy_tests_survive_live_refresh():
    snap = load_demo("dgx-h100")
    reader = SequenceReader([snap])
    bench = FakeBench(steps=1)
    app = P2PTopApp(reader=reader, interval=0.05, bench=bench)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        app.matrix.focus()
        await pilot.press("enter")
        calls = reader.calls
        await until(pilot, lambda: reader.calls >= calls + 3 and (0, 1) in app.bench_results)
        await settle(app, pilot)
        assert (0, 1) in app.bench_results
        assert app.state.snapshot.bench and app.state.snapshot.bench[0].a == 0


async def test_run_all_and_unavailable_bench_explains():
    bench = FakeBench(available=(False, "CuPy is not installed"))
    app = P2PTopApp(demo="h200x2-vm", bench=bench)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        await pilot.press("R")
        await settle(app, pilot)
        assert bench.calls == []
        text = screen_text(app)
        assert "cuda12" in text and "CuPy is not installed" in text
        bench.available = (True, "")
        await pilot.press("R")
        await settle(app, pilot)
        assert bench.calls == [("all",)]
        assert set(app.bench_results) == {(0, 1), (1, 0)}
        assert "2 pairs tested: 2 slow" in screen_text(app)


async def test_real_runner_simulates_demo_pairs():
    """The copy-test runner's own simulation for demos, end to end through the dashboard."""
    pytest.importorskip("p2ptop.bench.runner")
    app = P2PTopApp(demo="h200x2-vm")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        app.matrix.focus()
        await pilot.press("enter")
        for _ in range(200):
            await pilot.pause(0.05)
            if (0, 1) in app.bench_results:
                break
        await settle(app, pilot)
        r = app.bench_results[(0, 1)]
        assert r.simulated and r.status == "ok"


async def test_export_calls_bundle_writer(tmp_path):
    pytest.importorskip("p2ptop.export.bundle")
    app = P2PTopApp(demo="pcie-4gpu-iommu", export_dir=str(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        await pilot.press("x")
        await settle(app, pilot)
        folders = [p for p in tmp_path.iterdir() if p.is_dir()]
        assert len(folders) == 1
        assert (folders[0] / "screenshot.svg").exists()
        assert "pcie-4gpu-iommu" in (folders[0] / "screenshot.txt").read_text()
        assert "Bundle written" in screen_text(app) or "Exported to" in screen_text(app)


async def test_export_to_unwritable_dir_says_so(tmp_path):
    pytest.importorskip("p2ptop.export.bundle")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    app = P2PTopApp(demo="dgx-h100", export_dir=str(blocker / "bundles"))
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        await pilot.press("x")
        await settle(app, pilot)
        assert "Export failed" in screen_text(app)
        assert app.state is not None


async def test_knowledge_base_matches_listed_and_opened():
    pytest.importorskip("p2ptop.knowledge")
    app = P2PTopApp(demo="nvlink-degraded")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        app.kb_loaded.wait(10)
        app.matrix.select_pair(3, 4)  # GPU3 has NVLinks down
        for _ in range(50):
            await settle(app, pilot)
            if app.matches:
                break
        assert app.matches, "the degraded pair should match knowledge-base entries"
        first = app.matches[0].entry
        assert first.id in screen_text(app)
        await pilot.press("k")
        await pilot.pause()
        from p2ptop.ui.entry_screen import EntryScreen

        assert isinstance(app.screen, EntryScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main_screen


async def test_palette_lists_main_actions():
    app = P2PTopApp(demo="dgx-h100")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for needed in ("Copy test: highlighted pair", "Copy test: every pair", "Export bundle", "Cells: bw",
                       "Source: live NVML", "Source: demo rtx4090-2gpu", "Source: open snapshot file…"):
            assert needed in titles
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"demo rtx4090")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.state.snapshot.source.detail == "rtx4090-2gpu"


async def test_routine_crc_rises_are_logged_once_a_minute_not_every_poll():
    """A real H200 counts a few corrected CRC errors a second on idle links: one line, then quiet."""
    base = load_demo("h200x2-vm")
    seq = []
    for i in range(5):
        s = copy.deepcopy(base)
        s.source.taken_at = f"2026-11-23T09:00:0{2 * i}+00:00"
        s.gpus[0].nvlinks[1].counters["crc_flit"] = 10 * i
        seq.append(s)
    reader = SequenceReader(seq)
    app = P2PTopApp(reader=reader, interval=0.05)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: reader.calls >= 6)
        await settle(app, pilot)
        text = screen_text(app)
        assert text.count("crc_flit errors +10") == 1  # four rises, one line
        assert not app.state.recently_changed(0)  # routine: logged, not marked


async def test_first_frame_is_painted_before_the_first_live_read_returns():
    """A read that takes its time: the dashboard is up at once and says the panes are being read."""
    release = threading.Event()

    def slow_read():
        release.wait(10)
        return load_demo("dgx-h100")

    app = P2PTopApp(reader=slow_read, interval=3600)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause(0.1)
        assert app.state is None
        text = screen_text(app)
        assert "reading…" in text and "Reading live NVML…" in text and "reading live NVML…" in text
        release.set()
        for _ in range(200):
            await pilot.pause(0.02)
            if app.state is not None:
                break
        await settle(app, pilot)
        assert "reading live NVML" not in screen_text(app) and "GPU7" in screen_text(app)


async def test_clock_events_are_not_asked_for_and_routine_changes_are_logged_once_a_minute(h200_capture, tmp_path):
    from p2ptop.sources.capture import FakeNvml
    from p2ptop.ui.poller import LiveReader

    fake = FakeNvml(h200_capture, event_types=0xFF9F)
    app = P2PTopApp(reader=LiveReader(nvml=fake, sysfs_root=str(tmp_path), host_facts=False), interval=3600)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: app.state is not None)
        await settle(app, pilot)
        assert fake.inject_event(0, 0x10) == 0  # clock changes: not registered (no wake-ups, no log lines)
        from p2ptop.live.events import event_change
        from p2ptop.ui.messages import ChangeArrived

        for _ in range(5):  # a routine (info) change, however often it comes: logged once a minute per GPU
            app.post_message(ChangeArrived(event_change(0, 0x10, 0)))
        fake.inject_event(1, 0x2)  # a double-bit ECC error: a problem, always logged
        t0 = time.monotonic()
        while "GPU1 double-bit ECC error" not in screen_text(app):
            assert time.monotonic() - t0 < 2.0
            await pilot.pause(0.02)
        await pilot.pause(0.1)
        assert screen_text(app).count("GPU0 clock change") == 1
