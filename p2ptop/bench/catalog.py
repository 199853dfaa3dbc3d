"""The names of the copy tests and of the figures they give (shared by worker, runner, judge, UI).

Direction convention: for the ordered pair A->B, data moves from GPU A to GPU B.
"""

from __future__ import annotations

#: Selectable tests, in the order the worker runs them.
TESTS: dict[str, str] = {
    "ce": "copy-engine copy with peer access (cudaMemcpyPeerAsync), A->B and B->A",
    "bidirectional": "copy-engine copies A->B and B->A at the same time",
    "sm": "SM copy kernels on B reading A's memory, and on A writing B's memory, through peer pointers",
    "latency": "small copies back to back, and a kernel on B doing dependent reads of A's memory",
    "host_staged": "the same copy with peer access off (staged through host memory)",
    "integrity": "a pattern written on A, copied to B, checked on B",
}

#: Measurement name -> (unit, short label, what it is).
MEASUREMENTS: dict[str, tuple[str, str, str]] = {
    "ce_one_way": ("GB/s", "CE A->B", "copy engine, A->B, peer access on"),
    "ce_reverse": ("GB/s", "CE B->A", "copy engine, B->A, peer access on"),
    "ce_bidirectional": ("GB/s", "CE both", "copy engines both ways at once, total of the two directions"),
    "sm_read": ("GB/s", "SM read", "kernel on B reads A's memory (data A->B)"),
    "sm_write": ("GB/s", "SM write", "kernel on A writes B's memory (data A->B)"),
    "latency_copy_us": ("us", "copy lat", "one small (4-byte) cudaMemcpyPeerAsync, A->B, back to back"),
    "latency_kernel_us": ("us", "read lat", "one dependent 8-byte read of A's memory by a kernel on B (pointer chase)"),
    "host_staged": ("GB/s", "no P2P", "copy A->B with peer access off (staged through host memory)"),
}

#: Which test gives which measurements.
TEST_MEASUREMENTS: dict[str, tuple[str, ...]] = {
    "ce": ("ce_one_way", "ce_reverse"),
    "bidirectional": ("ce_bidirectional",),
    "sm": ("sm_read", "sm_write"),
    "latency": ("latency_copy_us", "latency_kernel_us"),
    "host_staged": ("host_staged",),
    "integrity": (),
}

STATUSES = ("ok", "failed", "timeout", "crashed", "cancelled", "unavailable")
VERDICTS = ("healthy", "slow", "failing")
