"""How fast `p2ptop nccl --log FILE` reads a 100 MB NCCL log end to end (target: <= 5 s).

Writes a log of about MB megabytes (default 100) built from the real H200 NCCL 2.28 capture
(../shared/captures) and the public-log fixtures, then times what the command does with it: read the
file, read_nccl_log, the per-pair table and the findings. Prints the size and the seconds of each step, and the CPU time of the whole (on a loaded machine the
wall time mostly measures the other processes).

    python benchmarks/bench_nccl_cli_log.py [MB]                 # time the steps in this process
    python benchmarks/bench_nccl_cli_log.py [MB] --write PATH    # only write the log (to time the real command on it)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2ptop.commands.common import read_input  # noqa: E402
from p2ptop.commands.nccl import LOG_LIMIT  # noqa: E402
from p2ptop.nccl.findings import table_findings  # noqa: E402
from p2ptop.nccl.log import read_nccl_log  # noqa: E402
from p2ptop.nccl.table import table_from_log  # noqa: E402


def build(mb: float, path: str) -> list[str]:
    """Write about ``mb`` MB of NCCL log to ``path``; returns the names of the logs it repeats."""
    cap = ROOT.parent / "shared" / "captures" / "h200x2-nvswitch-vm" / "nccl-2.28-allreduce-default.log"
    sources = ([cap] if cap.exists() else []) + sorted((ROOT / "tests" / "fixtures" / "nccl_logs").glob("*.log"))
    base = "\n".join(p.read_text() for p in sources) + "\n"
    with open(path, "w") as f:
        f.write(base * max(1, int(mb * 1e6 / len(base))))
    return [p.name for p in sources]


def main() -> None:
    args = sys.argv[1:]
    mb = float(args[0]) if args and not args[0].startswith("--") else 100.0
    if "--write" in args:
        path = args[args.index("--write") + 1]
        names = build(mb, path)
        print(f"wrote {path}: {os.path.getsize(path) / 1e6:.1f} MB, the NCCL logs {', '.join(names)} repeated")
        return
    fd, path = tempfile.mkstemp(suffix=".log")
    os.close(fd)
    names = build(mb, path)
    print(f"log built from: {', '.join(names)}")
    try:
        size = os.path.getsize(path)
        c0 = time.process_time()
        t0 = time.perf_counter()
        text, err = read_input(path, LOG_LIMIT)
        t1 = time.perf_counter()
        log = read_nccl_log(text)
        t2 = time.perf_counter()
        table = table_from_log(log)
        t3 = time.perf_counter()
        findings = table_findings(table, None, same_host=False, origin="log")
        t4 = time.perf_counter()
        c4 = time.process_time()
    finally:
        os.unlink(path)
    print(f"nccl --log: {size / 1e6:.1f} MB, {log.lines_total} lines, {len(log.channels)} channels, {len(table['pairs'])} pairs, "
          f"{len(findings)} findings")
    print(f"  read {t1 - t0:.2f} s, parse {t2 - t1:.2f} s, table {t3 - t2:.2f} s, findings {t4 - t3:.3f} s; total {t4 - t0:.2f} s wall, {c4 - c0:.2f} s CPU (target <= 5 s)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  load average {load:.1f} on {os.cpu_count()} CPUs: on a shared machine the CPU time is the figure that compares")


if __name__ == "__main__":
    main()
