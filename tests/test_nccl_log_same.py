"""The fast NCCL log reader (p2ptop/nccl/log.py) gives exactly what the reader before the speed-up gave
(tests/nccl_log_reference.py): the same ``to_dict()`` on every NCCL log among the fixtures, the captures, the
evaluation corpus's texts, and on large generated logs that mix them with the lines the line cache must not get
wrong (a host named "nccl...", repeated version and rank lines, CRLF, lines that are not NCCL's)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from p2ptop.nccl.log import read_nccl_log
from tests.nccl_log_reference import read_nccl_log as reference_read

ROOT = Path(__file__).resolve().parent.parent


def _texts() -> list[tuple[str, str]]:
    out = []
    for p in sorted((ROOT / "tests" / "fixtures").rglob("*")):
        if p.is_file() and p.suffix in (".log", ".txt"):
            t = p.read_text(errors="replace")
            if "NCCL" in t:
                out.append((str(p.relative_to(ROOT)), t))
    for p in sorted((ROOT / "benchmarks" / "corpus").rglob("*.json")):
        d = json.loads(p.read_text())
        t = d.get("text") if isinstance(d, dict) else None
        if isinstance(t, str) and "NCCL" in t:
            out.append((str(p.relative_to(ROOT)), t))
    return out


TEXTS = _texts()

#: Lines that stress the cache: the same text under hosts with and without "nccl" in their name, after a
#: framework's prefix, as INFO and WARN and ABORT, state lines (version, driver, ranks) repeated.
TRICKY = """\
gpu-a:100:200 [0] NCCL INFO GPU/0-1a000 :GPU/0-1a000 (0/5000.0/LOC) GPU/0-1b000 (1/240.0/NVL) NVS/0-0 (1/240.0/NVL) CPU/0-0 (1/24.0/PHB)
nccl-node1:100:200 [0] NCCL INFO GPU/0-1a000 :GPU/0-1a000 (0/5000.0/LOC) GPU/0-1b000 (1/240.0/NVL) NVS/0-0 (1/240.0/NVL) CPU/0-0 (1/24.0/PHB)
gpu-a:100:200 [0] NCCL INFO GPU/1B000 :GPU/1A000 (2/24.000000/PHB) GPU/1B000 (0/5000.000000/LOC)
gpu-a:100:200 [0] NCCL INFO + PCI[24.0] - GPU/0-1a000 (0)
gpu-a:100:200 [0] NCCL INFO               + NVL[240.0] - NVS/0-0
gpu-a:100:200 [0] NCCL INFO               + NVL[240.0] - GPU/0-1b000
gpu-a:100:200 [0] NCCL INFO GPU/0-1a000 (0)
nccl-node1:100:200 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
gpu-a:100:200 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
nccl-node1:100:200 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 commId 0x11 - Init START
gpu-a:100:200 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 commId 0x11 - Init START
gpu-a:100:200 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 commId 0x22 - Init START
gpu-a:100:200 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 - Destroy COMPLETE
gpu-a:101:200 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 commId 0x11 - Init START
gpu-a:101:200 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 commId 0x11 - Init START
gpu-a:101:200 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 commId 0x33 - Init START
gpu-b:100:200 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 commId 0x11 - Init START
gpu-b:100:200 [0] NCCL INFO NCCL version 2.18.1+cuda12.1
gpu-a:100:201 [0] NCCL INFO NCCL version 2.18.1+cuda12.1
gpu-a:100:201 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
gpu-a:100:201 [0] NCCL INFO cudaDriverVersion 12040
Check P2P Type isAllDirectP2p 0 directMode 0 isAllCudaP2p 1
Channel 00 : 0[0] -> 1[1] via SHM/direct/direct
  Channel 01/0 : 1[1] -> 0[0] via SHM/direct/direct
gpu-a:100:201 [0] NCCL INFO Check P2P Type isAllDirectP2p 0 directMode 1 isAllCudaP2p 1
gpu-a:100:201 [0] NCCL INFO misc/socket.cc:50 -> 2
nccl-node1:100:201 [0] NCCL INFO misc/socket.cc:50 -> 2
gpu-a:100:201 [0] misc/socket.cc:50 NCCL WARN Call to connect returned Connection refused ncclRemoteError\r
nccl-node1:100:201 [0] misc/socket.cc:50 NCCL WARN Call to connect returned Connection refused ncclRemoteError
gpu-a:100:201 [0] transport/p2p.cc:275 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'
gpu-b:7:8 [1] transport/p2p.cc:275 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'
gpu-a:100:201 [0] NCCL ABORT unhandled system error
gpu-a:100:201 [0] NCCL ABORTncclSystemError
gpu-a:100:201 [0] NCCL ABORT ncclSystemError
RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8
RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8
[rank0]: gpu-a:100:200 [0] NCCL INFO Channel 01/0 : 1[1] -> 0[0] via SHM/direct/direct
[rank0]: gpu-a:100:200 [0] NCCL INFO Channel 01/0 : 1[1] -> 0[0] via SHM/direct/direct
gpu-a:100:200 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC
gpu-c:100:200 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC
gpu-a:100:200 [0] NCCL INFO P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case
gpu-c:100:200 [0] NCCL INFO Could not enable P2P between dev 1(=1b000) and dev 0(=1a000)
gpu-c:100:200 [0] NCCL INFO Using network Socket
gpu-c:100:200 [0] NCCL INFO NET/IB : No device found.
NCCL INFO Channel 00 : 0[3000] -> 1[4000] via P2P/IPC
gpu-c:100:200 [0] NCCL INFO Ring 00 : 3 -> 0 [receive] via NET/IB/0
gpu-c:100:200 [0] NCCL INFO Ring 00 : 3 -> 0 [receive] via NET/IB/0
gpu-d:100:200 [0] NCCL INFO Channel 00 : 0 -> 1 via NET/Socket/0
NCCL INFO Channel 00 : 0[3000] -> 1[4000] via P2P/IPC
"""


def _same(text: str) -> None:
    assert read_nccl_log(text).to_dict() == reference_read(text).to_dict()


def test_there_are_logs_to_compare():
    assert len(TEXTS) >= 10


@pytest.mark.parametrize("name,text", TEXTS, ids=[n for n, _ in TEXTS])
def test_same_as_reference(name, text):
    _same(text)


def test_same_on_tricky_lines():
    _same(TRICKY)
    _same(TRICKY * 3)


def test_same_on_a_large_mixed_log():
    """All the logs and the tricky lines, repeated and shuffled (seeded), about 4 MB: every cached line
    is replayed under other hosts and after state lines."""
    lines = [ln for _, t in TEXTS for ln in t.split("\n")] + TRICKY.split("\n")
    rng = random.Random(17)
    big = []
    while sum(map(len, big)) < 4_000_000:
        chunk = lines[:]
        rng.shuffle(chunk)
        big += chunk
    _same("\n".join(big))
    _same("\n".join(lines) * 20)


def test_gc_state_is_kept():
    import gc

    gc.disable()
    try:
        read_nccl_log(TRICKY)
        assert not gc.isenabled()
    finally:
        gc.enable()
    read_nccl_log(TRICKY)
    assert gc.isenabled()
