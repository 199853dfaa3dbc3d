"""SVG snapshot tests of the main screen (pytest-textual-snapshot). Update with --snapshot-update after a
deliberate change, and look at the SVGs in tests/__snapshots__/ before committing them."""

from __future__ import annotations

import pytest
from textual.worker import WorkerCancelled

from p2ptop.ui.app import P2PTopApp


async def _settled(pilot) -> None:
    app = pilot.app
    for _ in range(4):
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            pass
        await pilot.pause()
    app.kb_loaded.wait(10)
    for _ in range(2):
        await app.workers.wait_for_complete()
        await pilot.pause()
    app.events.clear()  # its lines carry the wall-clock time
    app.clear_notifications()
    await pilot.pause()


@pytest.mark.parametrize("demo,size", [
    ("dgx-h100", (200, 50)),
    ("pcie-4gpu-iommu", (200, 50)),
    ("nvl72", (200, 50)),
    ("pcie-4gpu-iommu", (80, 24)),
    ("nvl72", (80, 24)),  # the header stays one line at 72 GPUs
])
def test_main_screen(snap_compare, demo, size):
    assert snap_compare(P2PTopApp(demo=demo), terminal_size=size, run_before=_settled)


def test_nvl72_glance(snap_compare):
    async def glance(pilot):
        await _settled(pilot)
        pilot.app._set_mode("glance")
        await pilot.pause()

    assert snap_compare(P2PTopApp(demo="nvl72"), terminal_size=(200, 50), run_before=glance)
