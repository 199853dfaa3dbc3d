"""The dashboard's NCCL view: a job's log opened into the matrix's nccl cells and the pair panel; N on a demo."""

import pathlib

import pytest

from p2ptop.ui.app import P2PTopApp
from p2ptop.ui.nccl_view import short

H200 = pathlib.Path(__file__).resolve().parent.parent.parent / "shared" / "captures" / "h200x2-nvswitch-vm" / "nccl-2.28-allreduce-default.log"


async def settle(app, pilot):
    for _ in range(4):
        await app.workers.wait_for_complete()
        await pilot.pause()


@pytest.mark.skipif(not H200.exists(), reason="the shared H200 capture is not beside the repository")
async def test_a_log_fills_the_nccl_cells_and_the_pair_panel(tmp_path):
    # DERIVED from the real H200 log: channels via SHM under NCCL_P2P_LEVEL=LOC (the fallback the issue saw there)
    lines = H200.read_text().replace("via P2P/CUMEM", "via SHM/direct/direct").splitlines()
    path = tmp_path / "job.log"
    path.write_text("\n".join(lines[:40] + ["vm:1637:1637 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC."] + lines[40:]))
    app = P2PTopApp(demo="h200x2-vm")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        app.nccl.open_log(str(path))
        await settle(app, pilot)
        app._set_mode("nccl")
        await settle(app, pilot)
        assert app.nccl.transport(1, 0) == "SHM"
        assert app.nccl.cell(0, 1) == ("SHM", "bold red")  # NVML says P2P works: a problem
        app.matrix.select_pair(0, 1)
        await settle(app, pilot)
        text = app.export_text()
        assert "SHM" in text and "NCCL" in text and "NCCL_P2P_LEVEL=LOC is below" in text
        assert "healthy  ✖ 1 problem in the findings" in text  # the link's badge is not read as "nothing wrong"
        assert any(f.id == "nccl.transport_fallback" for f in app.pair_findings(0, 1))
        # the knowledge base names the entry that explain and `nccl --log` name for this log (was "no known
        # problem matches": the entry's condition was on the log's text, which the panel did not pass)
        assert app.matches and app.matches[0].entry.id == "nccl/p2p-level-loc-disables-p2p"
        assert app.matches[0].confidence == "likely"
        assert "p2p-level-loc" in app.export_text() or "NCCL_P2P_LEVEL" in app.export_text()


async def test_n_on_a_demo_says_nccl_runs_on_this_machine_only():
    app = P2PTopApp(demo="h200x2-vm")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        before = app.events.count
        await pilot.press("N")
        await settle(app, pilot)
        assert app.events.count == before + 1
        assert "not this machine" in "".join(strip.text for strip in app.events.lines)
        assert app.nccl.rows == {} and app.nccl._cancel is None


async def test_an_unreadable_log_is_said_and_the_app_keeps_running(tmp_path):
    app = P2PTopApp(demo="h200x2-vm")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.nccl.open_log(str(tmp_path / "missing.log"))
        await settle(app, pilot)
        assert app.nccl.rows == {} and app.is_running


def test_short_names_fit_a_cell():
    for t in ("P2P/CUMEM", "P2P/IPC", "P2P/direct pointer", "SHM", "NET/IB", "NET/Socket", "COLLNET/SHARP"):
        assert 1 <= len(short(t)) <= 5


async def test_a_process_environment_from_the_palette(tmp_path):
    import os
    import subprocess
    import sys

    from p2ptop.ui.process_view import ProcessScreen, process_text

    job = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env={**os.environ, "NCCL_P2P_DISABLE": "1"})
    try:
        app = P2PTopApp(demo="h200x2-vm")
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(app, pilot)
            text = process_text(job.pid, app.state.snapshot).plain
            assert "env.NCCL_P2P_DISABLE" in text and "NCCL_P2P_DISABLE is set" in text
            assert "No process" in process_text(999999999, app.state.snapshot).plain
            app.push_screen(ProcessScreen(process_text(job.pid, app.state.snapshot)))
            await pilot.pause()
            assert isinstance(app.screen, ProcessScreen)
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, ProcessScreen)
    finally:
        job.kill()
        job.wait()


async def test_n_runs_nccl_in_the_background_and_fills_the_cells(monkeypatch):
    """A pretend-live 2-GPU host with fake rank workers (SIMULATED logs): N runs, the cells and panel fill."""
    import sys

    from p2ptop.demos import load_demo

    fake = pathlib.Path(__file__).parent / "fake_workers" / "fake_nccl_worker.py"
    monkeypatch.setenv("P2PTOP_NCCL_WORKER", f"{sys.executable} {fake} ok")
    monkeypatch.setenv("FAKE_NCCL_VIA", "P2P/CUMEM/read")
    snap = load_demo("h200x2-vm")
    snap.source.kind = "nvml"
    snap.source.simulated = False
    from p2ptop.nccl import runner

    monkeypatch.setattr(runner.NcclOptions, "__init__", _small_sizes(runner.NcclOptions.__init__))
    app = P2PTopApp(snapshot=snap, poll=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        await pilot.press("N")
        for _ in range(40):
            await settle(app, pilot)
            if app.nccl.rows:
                break
            await pilot.pause(0.2)
        assert app.nccl.transport(0, 1) == "P2P/CUMEM"
        assert app.nccl.cell(1, 0) == ("CUMEM", "green")
        assert app.nccl.runs and app.nccl.runs[0].status == "ok"
        app._set_mode("nccl")
        app.matrix.select_pair(0, 1)
        await settle(app, pilot)
        text = app.export_text()
        assert "CUMEM" in text and "sendrecv busbw" in text


def _small_sizes(init):
    def wrapped(self, *a, **kw):
        init(self, *a, **kw)
        self.sizes = [8, 1 << 20]
    return wrapped
