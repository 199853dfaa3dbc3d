"""The dashboard's sources and polling: opening a source (live, demo, replay, a snapshot), the read worker,
arming the next poll (never two at once), and what a new state or a failed read does to the screen.

The live path itself (what to read when, NVML events, the change log) is p2ptop.live; this module only
hands its polls to the views. NVML events arrive between polls and go straight to the events log."""

from __future__ import annotations

import datetime as _dt
import time
from functools import partial
from typing import Any, Callable, Optional

from rich.text import Text

from ..model import Snapshot, SnapshotError
from .look import clean
from .messages import ChangeArrived, ReadFailed, StateReady

Reader = Callable[[], Any]  # returns a Snapshot, or a p2ptop.live.Poll
INFO_EVENT_SECONDS = 60.0  # a routine change of one GPU is logged at most this often
#: a refresh of routine changes only redraws the pair panel at most this often (its counters lag by as much)
ROUTINE_REDRAW_SECONDS = 10.0


def local_time(iso: Optional[str] = None) -> str:
    if iso:
        try:
            return _dt.datetime.fromisoformat(iso).astimezone().strftime("%H:%M:%S")
        except ValueError:
            pass
    return _dt.datetime.now().strftime("%H:%M:%S")


class LiveReader:
    """Live NVML for the dashboard's polls, through the live path (p2ptop.live.LiveSource): static and
    dynamic parts apart, NVML events posted to the app as they arrive."""

    def __init__(self, on_change: Optional[Callable[[Any], None]] = None, **source_options: Any) -> None:
        from ..live import LiveSource

        self.source = LiveSource(on_change=on_change, **source_options)

    def __call__(self) -> Any:
        return self.source.poll()

    def close(self) -> None:
        self.source.close()


class Poller:
    """Mixed into P2PTopApp: sources, the read worker, polling and its messages."""

    def open_source(self, *, snapshot: Optional[Snapshot] = None, demo: Optional[str] = None,
                    replay: Optional[str] = None, reader: Optional[Reader] = None) -> None:
        """Switch to a source; results of a previous source are dropped when they arrive."""
        self._token += 1
        if self._poll_timer is not None:
            self._poll_timer.stop()
            self._poll_timer = None
        self._poll_failing = False
        self.live = snapshot is None and not demo and not replay
        if self.state is not None:
            self.bench_results.clear()
        if snapshot is not None:
            read: Reader = lambda: snapshot  # noqa: E731
        elif demo or replay:
            from ..sources import open_snapshot

            read = partial(open_snapshot, demo=demo, replay=replay)
        else:
            if reader is None:
                reader = LiveReader()
            if isinstance(reader, LiveReader) and reader.source.on_change is None:
                reader.source.on_change = lambda change: self.post_message(ChangeArrived(change))
            self._reader = reader
            read = reader
        self._read(read, first=True)

    def _read(self, read: Reader, first: bool) -> None:
        previous = None if first else self.state
        self.run_worker(partial(self._read_worker, read, self._token, previous, first),
                        thread=True, group="read", exclusive=True, name="read snapshot")

    def _read_worker(self, read: Reader, token: int, previous: Any, first: bool) -> None:
        from ..sources import SourceUnavailable
        from .state import DashboardState  # here, off the UI thread: the first frame does not wait for it

        try:
            snap = read()
            # a live poll brings its changes (p2ptop.live.Poll), unless it had nothing to compare with
            changes = snap.changes if getattr(snap, "compared", False) else None
            snap = getattr(snap, "snapshot", snap)
        except SourceUnavailable as e:
            self.post_message(ReadFailed(str(e), token, first, no_driver=True))
            return
        except SnapshotError as e:
            self.post_message(ReadFailed(str(e), token, first))
            return
        except Exception as e:  # noqa: BLE001 - any failure of a read is shown, never a crash
            self.post_message(ReadFailed(f"{type(e).__name__}: {e}", token, first))
            return
        try:
            state = DashboardState(snap, previous, changes=changes if previous is not None else None)
        except Exception as e:  # noqa: BLE001
            self.post_message(ReadFailed(f"could not analyse the snapshot: {type(e).__name__}: {e}", token, first))
            return
        self.post_message(StateReady(state, token))

    def _arm_poll(self) -> None:
        if self.live and self._poll_enabled:
            self._poll_timer = self.set_timer(self.interval, self._poll)

    def _poll(self) -> None:
        self._poll_timer = None
        if self.live and self._reader is not None:
            self._read(self._reader, first=False)

    def action_poll_now(self) -> None:
        if not self.live:
            self.notify("Not a live source: nothing to refresh.", timeout=3)
            return
        if self._poll_timer is not None:  # a poll in flight arms its own successor; never two at once
            self._poll_timer.stop()
            self._poll()

    def on_state_ready(self, message: StateReady) -> None:
        if message.token != self._token:
            return
        state = message.state
        if self.kb is None and self.kb_error is None and not self._kb_started:
            # the knowledge base loads once the first picture is up, so as not to slow it down
            self._kb_started = True
            self.run_worker(self._kb_worker, thread=True, group="kb", name="load knowledge base")
        state.snapshot.bench = list(self.bench_results.values())  # results survive live refreshes
        was = self.state
        self.state = state
        if self._poll_failing:
            self._poll_failing = False
            self.set_banner(None)
            self.events.add("NVML answers again", "info")
        now = time.monotonic()
        for change in state.changes:
            self._log_change(change, now)
        new_source = (was is None or was.snapshot.source.kind != state.snapshot.source.kind
                      or was.snapshot.source.detail != state.snapshot.source.detail)
        if new_source:
            self.events.add(f"Showing {state.snapshot.source.label} ({len(state.indices)} GPUs)", "info")
        from .state import routine_refresh  # imported already by the read's worker

        idle = was is not None and state.unchanged and state.marked() == was.marked()
        if idle or (was is not None and routine_refresh(was, state)):
            # an idle live refresh: nothing to redraw but the time in the header; one of routine changes only
            # (corrected CRC errors at a harmless rate...): the same findings and marks, so the panes and the
            # matches stand and the pair panel shows the new counters, at most every ROUTINE_REDRAW_SECONDS
            # (2 H200s on 2026-11-27: data CRC counters rising on every link made every refresh a full redraw)
            self.fabric.state = self.matrix.state = state
            self.header.show(state.snapshot, local_time(state.snapshot.source.taken_at))
            if not idle and self.pair is not None and now - self._routine_drawn >= ROUTINE_REDRAW_SECONDS:
                self._routine_drawn = now
                self._show_pair(*self.pair, rematch=False, routine=True)
        else:
            self._render_state()
        if new_source and state.worst_pair():
            self.matrix.select_pair(*state.worst_pair())  # open on the worst pair: a problem shows at once
        self._arm_poll()

    def on_read_failed(self, message: ReadFailed) -> None:
        if message.token != self._token:
            return
        what = "No usable NVIDIA driver here" if message.no_driver else "Could not read the snapshot"
        if message.first and self.state is None:  # nothing on screen yet: fall back to a demo, and say so
            from ..demos import DEFAULT_DEMO, DEMOS

            reason = clean(message.reason).rstrip(".") + "."
            choose = "" if "--demo" in reason else " Choose another with --demo NAME or --replay FILE."
            self.set_banner(
                Text(f"{what}: {reason}{choose}\nShowing the {DEFAULT_DEMO} demo (simulated) instead. "
                     f"Demos: {', '.join(DEMOS)}; ctrl+p switches the source."),
                "warning" if message.no_driver else "error")
            self.events.add(f"{what}: {message.reason}", "problem")
            self.open_source(demo=DEFAULT_DEMO)
            return
        if message.first:  # a switch of source failed: keep what is shown
            self.live = False
            self.set_banner(Text(f"{what}: {clean(message.reason)}\nStill showing "
                                 f"{clean(self.state.snapshot.source.label)}."), "error")
            self.events.add(f"{what}: {message.reason}", "problem")
            return
        # a live poll failed mid-run: keep the last picture, say so, keep polling
        taken = self.state.snapshot.source.taken_at if self.state else None
        self.set_banner(Text(f"NVML read failed at {local_time()}: {clean(message.reason)}\nShowing the last snapshot "
                             f"(taken {local_time(taken)}); retrying every {self.interval:g} s."), "error")
        if not self._poll_failing:
            self.events.add(f"NVML read failed: {message.reason}", "problem")
        self._poll_failing = True
        self._arm_poll()

    def _log_change(self, change: Any, now: float) -> None:
        if change.severity == "info":
            # routine changes (CRC errors at a harmless rate, clock changes...): once a minute per GPU and kind
            key = (change.kind, change.subject)
            if now - self._info_logged_at.get(key, -INFO_EVENT_SECONDS) < INFO_EVENT_SECONDS:
                return
            self._info_logged_at[key] = now
        self.events.add(change.text, change.severity, local_time(change.at))

    def on_change_arrived(self, message: ChangeArrived) -> None:
        """An NVML event (Xid, ECC...) between polls: logged at once."""
        if self.live:
            self._log_change(message.change, time.monotonic())

    def set_banner(self, text: Optional[Text], kind: str = "warning") -> None:
        if text is None:
            self.banner.display = False
            return
        self.banner.update(text)
        self.banner.set_classes(f"-{kind}")
        self.banner.display = True
