"""The dashboard's first frame: what it imports before painting (checked in a fresh interpreter, live, at
the first-frame marker) and that the terminal reporting the same size again lays nothing out again."""

from __future__ import annotations

import json
import subprocess
import sys

from textual import events
from textual.geometry import Size

from p2ptop.ui.app import P2PTopApp

#: nothing the first frame shows needs these: the knowledge base, the graph, NVML, host facts, the copy-test
#: runner and its judge, the help screen, the analysis of a snapshot. They are imported in the read worker,
#: the KB worker or on first use.
NOT_BEFORE_FIRST_FRAME = (
    "networkx", "pynvml", "jsonschema", "cupy", "p2ptop.knowledge", "p2ptop.kb", "p2ptop.host",
    "p2ptop.sources.nvml", "p2ptop.bench", "p2ptop.ui.screens.help", "p2ptop.ui.review_screen",
    # the analysis of a snapshot: built by the read worker (p2ptop.ui.poller), off the UI thread
    "p2ptop.ui.state", "p2ptop.diagnose", "p2ptop.changes", "p2ptop.live",
)

_PROBE = r"""
import json, os, sys, tempfile
os.environ["P2PTOP_FIRST_FRAME_FILE"] = os.path.join(tempfile.mkdtemp(), "ff")
from p2ptop.ui.app import P2PTopApp
seen = []
painted = P2PTopApp._first_frame_painted
def at_first_frame(self):
    seen.extend(sys.modules)
    painted(self)
    self.exit(0)
P2PTopApp._first_frame_painted = at_first_frame
P2PTopApp().run(headless=True, size=(200, 50))
with open(os.environ["P2PTOP_FIRST_FRAME_FILE"], encoding="utf-8") as f:
    assert float(f.read()) > 0
print(json.dumps(sorted(seen)))
"""


def test_first_frame_imports_none_of_what_it_does_not_show():
    """Live (the default source), at the moment the first-frame marker is written."""
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    mods = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert "p2ptop.ui.app" in mods and "textual.app" in mods  # the probe did see the dashboard's modules
    early = sorted(m for m in mods for h in NOT_BEFORE_FIRST_FRAME if m == h or m.startswith(h + "."))
    assert early == []


async def test_the_same_size_again_lays_nothing_out_again(monkeypatch):
    from p2ptop.demos import load_demo

    app = P2PTopApp(snapshot=load_demo("dgx-h100"), poll=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        # settle first: the start's workers and the layout they ask for (Textual's update timer lays out later) are not
        # what this test counts; on a loaded machine they were still pending when the Resizes below were sent
        await app.workers.wait_for_complete()
        for _ in range(3):
            await pilot.pause(0.05)
        layouts, refreshes = [], []
        apply_layout = app._apply_layout
        monkeypatch.setattr(app, "_apply_layout", lambda: (layouts.append(app.size), apply_layout())[1])
        refresh_layout = app.main_screen._refresh_layout
        monkeypatch.setattr(app.main_screen, "_refresh_layout",
                            lambda *a, **k: (refreshes.append(a), refresh_layout(*a, **k))[1])
        for _ in range(3):  # what the terminal sends at start: its size, again (tmux in-band reports too)
            app.main_screen.post_message(events.Resize(Size(200, 50), Size(200, 50)))
        await pilot.pause()
        assert layouts == [] and refreshes == []
        await pilot.resize_terminal(120, 40)  # a real change still lays out (medium layout)
        await pilot.pause()
        assert layouts and refreshes
        assert app.layout_name() == "medium" and app.main_screen.has_class("-medium")
        await pilot.resize_terminal(200, 50)  # and back
        await pilot.pause()
        assert app.layout_name() == "wide" and not app.main_screen.has_class("-medium")
        assert app.fabric.display and app.matrix.display and app.events.display
