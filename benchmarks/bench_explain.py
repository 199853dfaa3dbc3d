"""How long `p2ptop explain` takes on a large NCCL log (issue 22: under 5 s for 20 MB).

The log is the real healthy NCCL 2.28 log of the two-H200 host (tests/fixtures/captures/
h200x2-nvswitch-vm), repeated to the size asked, with an error line near the end (so the matcher has
something to find and must read the whole text). By default each copy is another run on another node
(its own host name, pids, tids and launcher timestamp), as a log gathered from many runs and nodes is:
a long real log does not repeat its lines character for character, and the readers' caches of lines
and words seen must not make it look cheaper than it is. ``--repeat`` gives the copies unchanged (the
figures of the README's rounds before 2026-11-30). Three runs each, in process and as a command:

    python benchmarks/bench_explain.py [--mb 20] [--runs 3] [--demo h200x2-vm] [--repeat]

It prints the figures; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
LOG = os.path.join(REPO, "tests", "fixtures", "captures", "h200x2-nvswitch-vm", "nccl-2.28-allreduce-default.log")
ERROR = "vm:1637:1650 [0] transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'\n"


#: --symptom-only: a sentence of a hang instead of the error line, so no entry's text matches and the
#: retrieval fallback (knowledge.retrieval) ranks the candidates: the slowest path of an answer
HANG = "the job hangs at the first all-reduce on both GPUs and never finishes\n"


#: what varies between copies of the log (``make_log(varied=True)``): NCCL's "host:pid:tid" prefix, torchrun's timestamp and pid
_NCCL_PREFIX = re.compile(r"^vm:(\d+):(\d+) ", re.M)
_TORCHRUN = re.compile(r"^W1124 00:17:34\.404000 1591 ", re.M)


def _copy(base: str, i: int) -> str:
    """Copy ``i`` of the log as another run on another node: node NNN, pids and tids moved on, its own timestamp."""
    host = f"node{i % 97:03d}"
    text = _NCCL_PREFIX.sub(lambda m: f"{host}:{int(m.group(1)) + 1000 * i}:{int(m.group(2)) + 1000 * i + 7} ", base)
    return _TORCHRUN.sub(f"W1124 {i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{i * 37 % 1000000:06d} {1591 + 1000 * i} ", text)


def make_log(mb: float, line: str = ERROR, varied: bool = True) -> str:
    with open(LOG, encoding="utf-8") as f:
        base = f.read()
    want = mb * 1024 * 1024
    if varied:
        copies: list[str] = []
        size = 0
        while size + len(base) <= want or not copies:  # the copies grow a little with their names: sized as they are
            copies.append(_copy(base, len(copies)))
            size += len(copies[-1])
        text = "".join(copies)
    else:
        text = base * max(1, int(want / len(base)))
    cut = len(text) - len(base) // 2 if line == ERROR else len(text)  # people write their words after a log
    return text[:cut] + line + text[cut:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--demo", default="h200x2-vm", help="host the text joins (a demo); '' for text only")
    ap.add_argument("--no-process", action="store_true", help="skip the timing of `p2ptop explain` as a command")
    ap.add_argument("--repeat", action="store_true", help="the copies of the log unchanged (character for character)")
    ap.add_argument("--symptom-only", action="store_true", help="a hang in words instead of the error line (the retrieval fallback runs)")
    args = ap.parse_args()

    from p2ptop.commands.explain import answer, read_evidence
    from p2ptop.diagnose import findings_for, pair_fact_findings
    from p2ptop.knowledge import load_kb
    from p2ptop.sources import open_snapshot

    text = make_log(args.mb, HANG if args.symptom_only else ERROR, varied=not args.repeat)
    print(f"log: {len(text.encode()) / 1e6:.1f} MB, {text.count(chr(10))} lines (the H200 NCCL 2.28 log "
          + ("repeated unchanged, " if args.repeat else "repeated as runs on 97 nodes, each its own pids, ")
          + ("one sentence of a hang)" if args.symptom_only else "one error line)"))
    kb = load_kb()
    snap = open_snapshot(demo=args.demo) if args.demo else None
    findings = findings_for(snap) + pair_fact_findings(snap) if snap else []
    from p2ptop.knowledge.matcher import prepare

    parts: dict[str, list[float]] = {"evidence (read_text)": [], "matcher (given the evidence)": [], "answer (both)": []}
    for _ in range(args.runs):
        t0 = time.perf_counter()
        ev = read_evidence(text)
        parts["evidence (read_text)"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        log = prepare(text)
        log.evidence = list(ev.findings)
        answer(kb, log, findings, 3, "demo", evidence=ev)
        parts["matcher (given the evidence)"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        got = answer(kb, text, findings, 3, "demo")
        parts["answer (both)"].append(time.perf_counter() - t0)
    print(f"in process, {args.runs} runs, host: {args.demo or 'none'}; answer: {got['kind']}, "
          f"first: {got['results'][0][0].entry.id if got['results'] else '-'}")
    for name, times in parts.items():
        print(f"  {name:<30} median {statistics.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f})")
    if args.no_process:
        return 0
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False, encoding="utf-8") as f:
        f.write(text)
        path = f.name
    try:
        cmd = [sys.executable, "-m", "p2ptop", "explain", path] + (["--demo", args.demo] if args.demo else ["--text-only"])
        wall = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL, check=True)
            wall.append(time.perf_counter() - t0)
        print(f"  {'p2ptop explain (process)':<30} median {statistics.median(wall):.2f} s (min {min(wall):.2f}, max {max(wall):.2f})")
    finally:
        os.unlink(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
