"""Bus bandwidth exactly as nccl-tests computes it (src/common.cu, src/all_reduce.cu, src/sendrecv.cu).

nccl-tests times ``iters`` operations back to back (host timer around the launches and a stream
synchronize), divides by ``iters``, averages the ranks' times (its default ``-a 1``), then:

- algbw = bytes / 1e9 / seconds (GB/s, decimal)
- all_reduce busbw = algbw * 2 (n - 1) / n  (``AllReduceGetBw``: each byte crosses n-1 links twice over n ranks)
- sendrecv busbw = algbw * 1  (``SendRecvGetBw``)

``bytes`` is the size nccl-tests prints in its first column (count x type size, float32 here).
"""

from __future__ import annotations

from typing import Iterable

OPS = ("sendrecv", "all_reduce")
TYPE_SIZE = 4  # float32, nccl-tests' default type

#: nccl-tests' size geometry: -b 8 -e 1G -f 2 (the h200 capture used -f 4: every 4th of these)
MIN_BYTES = 8
MAX_BYTES = 1 << 30


def sizes(min_bytes: int = MIN_BYTES, max_bytes: int = MAX_BYTES, factor: int = 2) -> list[int]:
    """The sizes nccl-tests runs for -b/-e/-f: min, min*f, ... while <= max (whole float32 elements)."""
    if min_bytes < TYPE_SIZE or factor < 2 or max_bytes < min_bytes:
        raise ValueError("need 4 <= min_bytes <= max_bytes and factor >= 2")
    out, size = [], min_bytes
    while size <= max_bytes:
        out.append(size - size % TYPE_SIZE)
        size *= factor
    return out


def bus_factor(op: str, nranks: int) -> float:
    if nranks < 1:
        raise ValueError("nranks must be at least 1")
    if op == "all_reduce":
        return 2.0 * (nranks - 1) / nranks
    if op == "sendrecv":
        return 1.0
    raise ValueError(f"unknown operation {op!r}; choose from {', '.join(OPS)}")


def algbw(nbytes: int, seconds: float) -> float:
    """GB/s (1e9 bytes per second), nccl-tests' algbw."""
    return nbytes / 1.0e9 / seconds


def busbw(op: str, nbytes: int, seconds: float, nranks: int) -> float:
    return algbw(nbytes, seconds) * bus_factor(op, nranks)


def average_seconds(per_rank: Iterable[float]) -> float:
    """nccl-tests' default (-a 1): the ranks' times averaged."""
    vals = list(per_rank)
    if not vals:
        raise ValueError("no rank times")
    return sum(vals) / len(vals)


def row(op: str, nbytes: int, per_rank_seconds: Iterable[float], nranks: int) -> dict:
    """One line of an nccl-tests table: size, count, time (us), algbw, busbw (GB/s)."""
    sec = average_seconds(per_rank_seconds)
    return {"op": op, "bytes": nbytes, "count": nbytes // TYPE_SIZE, "time_us": round(sec * 1e6, 2),
            "algbw": round(algbw(nbytes, sec), 2), "busbw": round(busbw(op, nbytes, sec, nranks), 2)}
