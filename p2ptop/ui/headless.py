"""The main screen rendered without a terminal: ``render_screen`` gives (SVG, plain text).

Used by ``p2ptop report`` for the bundle's screenshot. No live polling: the snapshot is shown as given.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Iterable

from textual.worker import WorkerCancelled

from ..model import Snapshot

#: how long to wait for the knowledge base and the first matches before taking the picture
SETTLE_SECONDS = 10.0


async def render_screen_async(snapshot: Snapshot, width: int = 200, height: int = 50,
                              kb_dirs: Iterable[str] = ()) -> tuple[str, str]:
    from .app import P2PTopApp

    app = P2PTopApp(snapshot=snapshot, kb_dirs=kb_dirs, poll=False)
    async with app.run_test(size=(width, height)) as pilot:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, app.kb_loaded.wait, SETTLE_SECONDS)
        for _ in range(3):  # the snapshot's analysis, then the knowledge-base matches it asks for
            try:
                await app.workers.wait_for_complete()
            except WorkerCancelled:
                pass
            await pilot.pause()
        return app.export_screenshot(), app.export_text()


def render_screen(snapshot: Snapshot, width: int = 200, height: int = 50, kb_dirs: Iterable[str] = ()) -> tuple[str, str]:
    """(SVG, plain text) of the dashboard's main screen for a snapshot, rendered headless."""
    coro_args = (snapshot, width, height, tuple(kb_dirs))
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(render_screen_async(*coro_args))
    # called from inside an event loop (a test, a notebook): render on a thread with its own loop
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = asyncio.run(render_screen_async(*coro_args))
        except BaseException as e:  # noqa: BLE001 - handed back to the caller below
            out["error"] = e

    t = threading.Thread(target=run, name="p2ptop-headless")
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]
