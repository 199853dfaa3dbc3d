"""Messages that workers post to the app. Workers never touch widgets; the handlers own UI state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from textual.message import Message

if TYPE_CHECKING:
    from .state import DashboardState


class PairMessage(Message):
    """A widget names a pair (A, B): the widgets' own messages (highlighted, selected, chosen) subclass it."""

    def __init__(self, a: int, b: int) -> None:
        super().__init__()
        self.a, self.b = a, b


class StateReady(Message):
    """A snapshot was read and prepared for the views."""

    def __init__(self, state: "DashboardState", token: int) -> None:
        super().__init__()
        self.state = state
        self.token = token  # which source it belongs to; stale ones are dropped


class ReadFailed(Message):
    """Reading a snapshot failed; ``first`` when nothing from this source has been shown yet."""

    def __init__(self, reason: str, token: int, first: bool, no_driver: bool = False) -> None:
        super().__init__()
        self.reason = reason
        self.token = token
        self.first = first
        self.no_driver = no_driver


class BenchProgress(Message):
    def __init__(self, event: dict[str, Any]) -> None:
        super().__init__()
        self.event = event


class BenchFinished(Message):
    def __init__(self, results: list[Any], error: Optional[str] = None) -> None:
        super().__init__()
        self.results = results
        self.error = error


class KbLoaded(Message):
    def __init__(self, kb: Any, error: Optional[str] = None) -> None:
        super().__init__()
        self.kb = kb
        self.error = error


class MatchesReady(Message):
    def __init__(self, pair: tuple[int, int], matches: list[Any], error: Optional[str] = None) -> None:
        super().__init__()
        self.pair = pair
        self.matches = matches
        self.error = error


class ExportDone(Message):
    def __init__(self, path: Optional[str], error: Optional[str] = None) -> None:
        super().__init__()
        self.path = path
        self.error = error


class ChangeArrived(Message):
    """A change that arrived between polls (an NVML event: Xid, ECC, clocks), for the events log."""

    def __init__(self, change: Any) -> None:
        super().__init__()
        self.change = change
