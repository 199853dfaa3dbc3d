"""How fast `p2ptop import` turns a 16-GPU paste into a snapshot (target: under 1 s).

Prints the in-process time of snapshot_from_text on the DGX-2 paste (16 GPUs, 10 NIC columns;
tests/fixtures/pastes/topo-m-dgx2-16gpu.txt) plus the same paste with 16x16 topo -p2p matrices
for the five capabilities, and the wall time of the whole command (`python -m p2ptop import`,
interpreter start included).

    python benchmarks/bench_import.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2ptop.evidence.snapshot import snapshot_from_text  # noqa: E402


def p2p_matrix(cap: str, n: int = 16) -> str:
    head = " \t" + "\t".join(f"GPU{i}" for i in range(n)) + "\t"
    rows = [f" GPU{a}\t" + "\t".join("X" if a == b else "OK" for b in range(n)) + "\t" for a in range(n)]
    return f"$ nvidia-smi topo -p2p {cap}\n" + "\n".join([head, *rows]) + "\n"


def main() -> None:
    topo = (ROOT / "tests" / "fixtures" / "pastes" / "topo-m-dgx2-16gpu.txt").read_text()
    full = topo + "\n" + "\n".join(p2p_matrix(c) for c in "rwnap")
    for name, text in (("topo -m", topo), ("topo -m + 5 x topo -p2p", full)):
        t0 = time.perf_counter()
        snap = snapshot_from_text(text, "bench")
        dt = time.perf_counter() - t0
        print(f"snapshot_from_text ({name}): {len(snap.gpus)} GPUs, {len(snap.pairs)} pairs in {dt * 1000:.0f} ms")
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "paste.txt"
        src.write_text(full)
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "p2ptop", "import", str(src), "-o", str(Path(d) / "s.json")],
                           cwd=ROOT, capture_output=True, text=True)
        dt = time.perf_counter() - t0
        print(f"p2ptop import (whole command, interpreter start included): exit {r.returncode} in {dt * 1000:.0f} ms")


if __name__ == "__main__":
    main()
