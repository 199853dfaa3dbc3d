"""The dashboard's copy tests: starting them (r, R, Enter), their progress in the matrix and the pair
panel, their results in the events log, cancelling (Esc). A worker thread runs the copy-test runner
(p2ptop.bench.runner) and posts messages; the handlers here own what is shown."""

from __future__ import annotations

import threading
from functools import partial
from typing import Any, Optional

from ..model import BenchResult, Snapshot
from .look import clean
from .messages import BenchFinished, BenchProgress

INSTALL_HINT = ("Copy tests need CuPy and a GPU: pip install 'p2ptop[cuda12]' (CUDA 12 driver) "
                "or 'p2ptop[cuda13]' (CUDA 13 driver).")


class CopyTests:
    """Mixed into P2PTopApp: its copy-test actions and handlers."""

    def _bench(self) -> Any:
        if self._bench_api is None:
            try:
                from ..bench import runner
            except ImportError as e:
                self.notify(f"Copy tests are not available in this p2ptop ({e}).", severity="error", timeout=8)
                return None
            self._bench_api = runner
        return self._bench_api

    def action_run_pair(self) -> None:
        pair = self.matrix.pair_at_cursor()
        if pair:
            self._start_bench(pair)

    def action_run_all(self) -> None:
        self._start_bench(None)

    def _start_bench(self, pair: Optional[tuple[int, int]]) -> None:
        if self.state is None:
            return
        if self._bench_cancel is not None:
            self.notify("A copy test is running: Esc cancels it.", severity="warning", timeout=4)
            return
        api = self._bench()
        if api is None:
            return
        snap = self.state.snapshot
        try:
            ok, why = api.bench_available(snap)
        except Exception as e:  # noqa: BLE001
            ok, why = False, f"{type(e).__name__}: {e}"
        if not ok:
            text = clean(why)
            if "cuda12" not in text and "cuda13" not in text:
                text = f"{text} {INSTALL_HINT}"
            self.notify(text, title="Copy tests unavailable", severity="error", timeout=12)
            self.events.add(f"Copy tests unavailable: {text}", "warning")
            return
        cancel = threading.Event()
        self._bench_cancel = cancel
        what = f"GPU{pair[0]} → GPU{pair[1]}" if pair else "every pair"
        self.events.add(f"Copy test started: {what}", "info")
        if pair:
            self.matrix.set_running(pair, 0.0)
            self._progress[pair] = {"fraction": 0.0, "step": "starting"}
            if self.pair == pair:
                self._show_pair(*pair, rematch=False)
        self.run_worker(partial(self._bench_worker, api, snap, pair, cancel), thread=True, group="bench", name="copy test")

    def _bench_worker(self, api: Any, snap: Snapshot, pair: Optional[tuple[int, int]], cancel: threading.Event) -> None:
        def on_event(event: dict) -> None:
            self.post_message(BenchProgress(dict(event)))

        try:
            if pair is not None:
                results = [api.run_pair(snap, pair[0], pair[1], options=None, on_event=on_event, cancel=cancel)]
            else:
                pairs = api.all_pairs(snap, host_links=True) if hasattr(api, "all_pairs") else None  # host links too
                results = list(api.run_all(snap, pairs, options=None, on_event=on_event, cancel=cancel))
        except Exception as e:  # noqa: BLE001 - the runner should not raise; if it does, say so
            self.post_message(BenchFinished([], f"{type(e).__name__}: {e}"))
            return
        self.post_message(BenchFinished([r for r in results if r is not None]))

    def on_bench_progress(self, message: BenchProgress) -> None:
        ev = message.event
        try:
            pair = (int(ev["a"]), int(ev["b"]))
        except (KeyError, TypeError, ValueError):
            return
        if ev.get("pairs"):
            self.matrix.border_subtitle = f"copy tests {ev.get('pairs_done', 0)}/{ev['pairs']} (Esc cancels)"
        if ev.get("type") == "result" and isinstance(ev.get("result"), BenchResult):
            self._progress.pop(pair, None)
            self.matrix.set_running(pair, None)
            self._store_result(ev["result"])
            if self.pair == pair:
                self._show_pair(*pair)
            return
        if ev.get("type") != "progress":
            return
        for other in [p for p in self._progress if p != pair]:  # run_all goes pair by pair
            self._progress.pop(other)
            self.matrix.set_running(other, None)
        frac = ev.get("fraction")
        frac = float(frac) if isinstance(frac, (int, float)) else 0.0
        self._progress[pair] = ev
        self.matrix.set_running(pair, max(0.0, min(frac, 1.0)))
        if self.pair == pair:
            self._show_pair(*pair, rematch=False)

    def _store_result(self, r: BenchResult) -> None:
        self.bench_results[(r.a, r.b)] = r
        if self.state is not None:
            self.state.snapshot.bench = list(self.bench_results.values())
        self.matrix.refresh_pair(r.a, r.b)

    def on_bench_finished(self, message: BenchFinished) -> None:
        self._bench_cancel = None
        self.matrix.border_subtitle = ""
        for pair in list(self._progress):
            self._progress.pop(pair)
            self.matrix.set_running(pair, None)
        if message.error:
            self.notify(f"Copy test failed to run: {clean(message.error)}", severity="error", timeout=8)
            self.events.add(f"Copy test failed to run: {message.error}", "problem")
        text = ""
        many = len(message.results) > 1
        outcomes: dict[str, int] = {}
        for r in message.results:
            self._store_result(r)
            share = self.state.share(r) if self.state else None
            text = f"Copy test GPU{r.a} → GPU{r.b}: {r.status}" + (f", {r.verdict}" if r.verdict else "")
            if share is not None:
                text += f", {share * 100:.0f}% of expected"
            if r.simulated:
                text += " (simulated)"
            sev = ("problem" if r.verdict == "failing" or r.status not in ("ok", "cancelled", "interrupted", "busy", "locked")
                   else "warning" if r.verdict in ("slow", "contended", "interrupted") or r.status in ("cancelled", "locked") else "info")
            outcome = r.verdict if r.status == "ok" and r.verdict else r.status
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if not many or sev != "info":  # after a run of every pair, only what is not healthy is listed
                self.events.add(text, sev)
        if many:
            text = f"{len(message.results)} pairs tested: " + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
            self.events.add(text, "info")
        if message.results:
            self.notify(clean(text), timeout=5)
        self.matrix.refresh_cells()
        if self.pair:
            self._show_pair(*self.pair)

    def action_cancel(self) -> None:
        nccl = getattr(self, "nccl", None)
        if nccl is not None:
            nccl.cancel()
        if self._bench_cancel is not None and not self._bench_cancel.is_set():
            self._bench_cancel.set()
            self.notify("Cancelling the copy test…", timeout=3)
