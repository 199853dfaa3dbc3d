"""One host of a fleet in the full dashboard: the dashboard as it is, with Esc going back to the fleet
(Esc still cancels a running copy test first)."""

from __future__ import annotations

from textual.binding import Binding

from .app import P2PTopApp


class HostDashboard(P2PTopApp):
    BINDINGS = [Binding("escape", "back_to_fleet", "Back to fleet", tooltip="Back to the fleet (cancels a running copy test first)")]

    def action_back_to_fleet(self) -> None:
        cancel = getattr(self, "_bench_cancel", None)
        if cancel is not None and not cancel.is_set():
            self.action_cancel()
            return
        self.exit(0)
