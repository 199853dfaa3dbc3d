"""How fast read_text reads a 20 MB paste (target: well under 5 s).

The paste mixes what people paste: the real NCCL 2.28 log of the H200 host repeated (../shared, or
the fixture excerpts), with a topo -m, nvidia-smi -q XML, a traceback and a paragraph of prose
once each. Prints size, time and the formats recognised.

    python benchmarks/bench_evidence.py [MB]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2ptop.evidence import read_text  # noqa: E402


def main() -> None:
    mb = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    cap = ROOT.parent / "shared" / "captures" / "h200x2-nvswitch-vm" / "nccl-2.28-allreduce-default.log"
    logs = [cap.read_text()] if cap.exists() else []
    logs += [p.read_text() for p in sorted((ROOT / "tests" / "fixtures" / "nccl_logs").glob("*.log"))]
    log = "\n".join(logs)
    fx = ROOT / "tests" / "fixtures"
    head = "\n".join([
        (fx / "captures" / "h200x2-nvswitch-vm" / "nvidia-smi-topo-m.txt").read_text(),
        (fx / "captures" / "h200x2-nvswitch-vm" / "nvidia-smi-q.xml").read_text(),
        (fx / "kb" / "logs" / "easyr1-579-shm-217.log").read_text(),
        (fx / "pastes" / "prose-en-nccl-631-freeze.txt").read_text(),
    ])
    text = head + "\n" + log * max(1, int((mb * 1e6 - len(head)) / len(log)))
    t0 = time.perf_counter()
    ev = read_text(text)
    dt = time.perf_counter() - t0
    print(f"read_text: {len(text) / 1e6:.1f} MB, {ev.lines} lines, {len(ev.findings)} findings, "
          f"kinds {','.join(ev.kinds)} in {dt:.2f} s")


if __name__ == "__main__":
    main()
