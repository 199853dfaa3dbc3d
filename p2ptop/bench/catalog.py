"""The names of the copy tests and of the figures they give (shared by worker, runner, judge, UI).

Direction convention: for the ordered pair A->B, data moves from GPU A to GPU B. A "pair" A->A is
GPU A's own link to the host: host->device (h2d) and device->host (d2h) copies from pinned memory.
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

#: Tests of one GPU's host link (``p2ptop bench GPU``), in the order the worker runs them. nvbandwidth's
#: host_to_device_memcpy_ce / device_to_host_memcpy_ce method: cudaMemcpyAsync between cudaHostAlloc'd
#: memory and the GPU on a copy engine, the stream held by a spin kernel, timed by CUDA events.
HOST_TESTS: dict[str, str] = {
    "h2d": "copy engine, pinned host memory -> GPU",
    "d2h": "copy engine, GPU -> pinned host memory",
    "host_bidirectional": "copy engines both ways at once",
    "host_latency": "small copies back to back, each way",
    "host_integrity": "a pattern written on the GPU, copied to the host and back to the GPU, checked there",
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
    "h2d": ("GB/s", "H->D", "pinned host memory -> GPU, copy engine"),
    "d2h": ("GB/s", "D->H", "GPU -> pinned host memory, copy engine"),
    "host_bidirectional": ("GB/s", "H<->D", "host->GPU and GPU->host at once, total of the two directions"),
    "latency_h2d_us": ("us", "H->D lat", "one small (4-byte) cudaMemcpyAsync host->GPU, back to back"),
    "latency_d2h_us": ("us", "D->H lat", "one small (4-byte) cudaMemcpyAsync GPU->host, back to back"),
}

#: Which test gives which measurements.
TEST_MEASUREMENTS: dict[str, tuple[str, ...]] = {
    "ce": ("ce_one_way", "ce_reverse"),
    "bidirectional": ("ce_bidirectional",),
    "sm": ("sm_read", "sm_write"),
    "latency": ("latency_copy_us", "latency_kernel_us"),
    "host_staged": ("host_staged",),
    "integrity": (),
    "h2d": ("h2d",),
    "d2h": ("d2h",),
    "host_bidirectional": ("host_bidirectional",),
    "host_latency": ("latency_h2d_us", "latency_d2h_us"),
    "host_integrity": (),
}

#: ok; failed (a CUDA error), timeout (a hang past the timeout), crashed (the worker died on its own, e.g.
#: SIGSEGV): these come from the GPUs, the link or the worker. cancelled (by the user), interrupted (the
#: worker ended by a signal from outside: SIGKILL, SIGTERM, SIGINT, the OOM killer), busy (not run: the GPUs
#: were in use; --allow-busy measures anyway), locked (not run: another test held a GPU), unavailable.
STATUSES = ("ok", "failed", "timeout", "crashed", "cancelled", "interrupted", "busy", "locked", "unavailable")
VERDICTS = ("healthy", "slow", "failing", "contended", "interrupted")
