"""How fast the NCCL log reader reads a 100 MB log (target: <= 5 s).

The log is built by repeating the real H200 NCCL 2.28 capture (../shared/captures) or, where it
is absent, the fixture excerpts, with WARN lines and env lines mixed in, so the mix of lines is
NCCL's own. Prints the size, the time and the rate.

    python benchmarks/bench_nccl_log.py [MB]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2ptop.nccl import read_nccl_log  # noqa: E402


def sample() -> str:
    cap = ROOT.parent / "shared" / "captures" / "h200x2-nvswitch-vm" / "nccl-2.28-allreduce-default.log"
    parts = [cap.read_text()] if cap.exists() else []
    parts += [p.read_text() for p in sorted((ROOT / "tests" / "fixtures" / "nccl_logs").glob("*.log"))]
    return "\n".join(parts)


def main() -> None:
    mb = float(sys.argv[1]) if len(sys.argv) > 1 else 100.0
    base = sample()
    text = base * max(1, int(mb * 1e6 / len(base)))
    c0 = time.process_time()
    t0 = time.perf_counter()
    log = read_nccl_log(text)
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    print(f"read_nccl_log: {len(text) / 1e6:.1f} MB, {log.lines_total} lines, {len(log.channels)} channels, "
          f"{len(log.messages)} messages in {dt:.2f} s wall, {cpu:.2f} s CPU ({len(text) / 1e6 / cpu:.0f} MB/s of CPU; "
          f"target <= 5 s for 100 MB)")


if __name__ == "__main__":
    main()
