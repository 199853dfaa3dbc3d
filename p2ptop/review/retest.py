"""Run the test that failed again, the same way: the copy test of the same ordered pair, the host-link
test of the same GPU, or the NCCL run with the workaround's variables set; a pasted log is re-read."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Callable, Optional

from ..model import BenchResult, Snapshot
from .store import Review

Reader = Callable[[], Snapshot]


def _pair(review: Review) -> tuple[int, int]:
    kind, _, rest = review.subject.partition(":")
    if kind == "gpu":
        return int(rest), int(rest)
    if kind == "pair":
        a, b = rest.split("-")
        return int(a), int(b)
    raise ValueError(f"review {review.id} is about {review.subject}, which has no test to re-run")


def _unavailable(a: int, b: int, why: str) -> BenchResult:
    return BenchResult(a=a, b=b, status="unavailable", errors=[why])


def retest(review: Review, item: Optional[dict[str, Any]], read: Reader, *,
           cancel: Optional[threading.Event] = None, on_event: Any = None,
           log_text: Optional[str] = None) -> dict[str, Any]:
    """The after state: {"result": ..., "snapshot": ...} (or {"log": ...}). Blocking; call from a thread.
    Never raises for a test that cannot run: the result says why."""
    if review.test == "log":
        return {"log": (log_text or "")[-20000:]}
    snapshot = read()
    a, b = _pair(review)
    env = dict((item or {}).get("env") or {})
    if review.test == "nccl":
        result = _nccl(snapshot, a, b, env, cancel)
    else:
        from ..bench import runner

        result = runner.run_pair(snapshot, a, b, options=None, on_event=on_event, cancel=cancel)
    result.params = dict(result.params or {}, test=review.test)
    snapshot.bench = [r for r in snapshot.bench if (r.a, r.b) != (a, b)] + [result]
    return {"result": dataclasses.asdict(result), "snapshot": snapshot.to_dict()}


def _nccl(snapshot: Snapshot, a: int, b: int, env: dict[str, str], cancel: Optional[threading.Event]) -> BenchResult:
    """The NCCL run of the pair with the workaround's variables set (value '' = removed)."""
    try:
        from .. import nccl
    except ImportError as e:
        return _unavailable(a, b, f"NCCL runs are not available in this p2ptop ({e})")
    run = getattr(nccl, "run_pair_result", None)
    if run is None:
        return _unavailable(a, b, "this p2ptop's NCCL package cannot re-run a pair yet")
    return run(snapshot, a, b, env=env, cancel=cancel)
