"""The dashboard's export (x): the screen as SVG and text, written into a ticket bundle by a worker."""

from __future__ import annotations

import io
from functools import partial

from rich.console import Console

from ..model import Snapshot
from .look import clean
from .messages import ExportDone


class ExportActions:
    """Mixed into P2PTopApp: export action, worker and handler."""

    def export_text(self) -> str:
        """The current screen as plain text (the companion of export_screenshot's SVG)."""
        width, height = self.size
        console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                          color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
        console.print(self.screen._compositor.render_update(full=True, screen_stack=self._background_screens))
        return console.export_text(styles=False)

    def action_export(self) -> None:
        if self.state is None:
            self.notify("Nothing to export yet.", timeout=3)
            return
        svg, text = self.export_screenshot(), self.export_text()
        self.notify("Exporting…", timeout=2)
        self.run_worker(partial(self._export_worker, self.state.snapshot, svg, text), thread=True, group="export",
                        name="export bundle")

    def _export_worker(self, snap: Snapshot, svg: str, text: str) -> None:
        try:
            from ..export.bundle import write_bundle
        except ImportError as e:
            self.post_message(ExportDone(None, f"export is not available in this p2ptop ({e})"))
            return
        try:
            path = write_bundle(snap, self.export_dir, svg=svg, text=text)
        except Exception as e:  # noqa: BLE001 - the bundle writer's message says what went wrong
            self.post_message(ExportDone(None, f"{type(e).__name__}: {e}" if not str(e) else str(e)))
            return
        self.post_message(ExportDone(str(path)))

    def on_export_done(self, message: ExportDone) -> None:
        if message.error:
            self.notify(f"Export failed: {clean(message.error)}", severity="error", timeout=10)
            self.events.add(f"Export failed: {message.error}", "problem")
        else:
            self.notify(f"Exported to {clean(message.path)}", title="Bundle written", timeout=8)
            self.events.add(f"Bundle written: {message.path}", "info")
