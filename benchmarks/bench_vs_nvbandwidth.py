"""p2ptop's copy tests beside NVIDIA's nvbandwidth and p2pBandwidthLatencyTest, and their wall time.

    python benchmarks/bench_vs_nvbandwidth.py [--nvbandwidth FILE|BINARY] [--p2p-latency FILE] [--pair A B]
                                              [--demo NAME | --replay FILE] [--json OUT]

- ``--nvbandwidth``: nvbandwidth's output (its text, or its ``-j`` JSON), or the nvbandwidth binary
  itself, which is then run here (``-t`` the device-to-device tests). Default: the reference capture
  in tests/fixtures/captures/h200x2-nvswitch-vm (taken on another day: say so when you quote it).
- ``--p2p-latency``: p2pBandwidthLatencyTest's output (default: the same capture): its P2P latency
  and its P2P=Disabled bandwidth, beside p2ptop's latency_copy_us and host_staged.

Prints the wall time of one pair's full test (worker start included, first with a cold kernel cache
where there is one, then again), of ``--all``, and a table: each p2ptop figure, the reference figure
for the same direction, their ratio and the issue's target (CE >= 98 %, SM >= 95 %, latency within 10 %).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from p2ptop.bench.runner import BenchOptions, run_all, run_pair  # noqa: E402
from p2ptop.sources import open_snapshot  # noqa: E402

CAPTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "captures", "h200x2-nvswitch-vm")
NVB_TESTS = ["device_to_device_memcpy_read_ce", "device_to_device_memcpy_write_ce",
             "device_to_device_bidirectional_memcpy_read_ce", "device_to_device_memcpy_read_sm",
             "device_to_device_memcpy_write_sm"]
# p2ptop figure -> (nvbandwidth test, whether its matrix row is the data's destination), target share
COMPARE = {
    "ce_one_way": ("device_to_device_memcpy_read_ce", True, 0.98),
    "ce_reverse": ("device_to_device_memcpy_read_ce", True, 0.98),
    "ce_bidirectional": ("device_to_device_bidirectional_memcpy_read_ce_total", False, 0.98),
    "sm_read": ("device_to_device_memcpy_read_sm", True, 0.95),
    "sm_write": ("device_to_device_memcpy_write_sm", False, 0.95),
}


def parse_nvbandwidth_text(text: str) -> dict[str, list[list]]:
    """Test name -> matrix (rows of floats or None) from nvbandwidth's plain output."""
    out: dict[str, list[list]] = {}
    blocks = re.split(r"\n(?=Running |memcpy )", text)
    name = None
    for block in blocks:
        m = re.match(r"Running (\S+)\.", block)
        if m:
            name = m.group(1)
            continue
        if name is None or not block.startswith("memcpy "):
            continue
        key = name
        if "Total bandwidth" in block.splitlines()[0]:
            key = name + "_total"
        elif re.search(r"Read\d|Write\d", block.splitlines()[0]):
            continue
        rows = []
        for line in block.splitlines()[2:]:
            cells = line.split()
            if not cells or not cells[0].isdigit():
                break
            rows.append([None if c == "N/A" else float(c) for c in cells[1:]])
        out[key] = rows
    return out


def parse_nvbandwidth_json(data: dict) -> dict[str, list[list]]:
    out = {}
    for t in data["nvbandwidth"]["testcases"]:
        rows = [[None if c == "N/A" else float(c) for c in row] for row in t.get("bandwidth_matrix", [])]
        out[t["name"]] = rows
    return out


def load_nvbandwidth(arg: str) -> tuple[dict[str, list[list]], str]:
    if os.access(arg, os.X_OK) and not arg.endswith((".txt", ".json")):
        t0 = time.monotonic()
        text = subprocess.run([arg, "-t", *NVB_TESTS], capture_output=True, text=True, check=True).stdout
        return parse_nvbandwidth_text(text), f"nvbandwidth run now ({time.monotonic() - t0:.1f} s): {arg}\n{text}"
    with open(arg, encoding="utf-8") as f:
        text = f.read()
    if text.lstrip().startswith("{"):
        return parse_nvbandwidth_json(json.loads(text)), f"nvbandwidth output file {arg}"
    return parse_nvbandwidth_text(text), f"nvbandwidth output file {arg}"


def load_p2p_matrix(path: str, title: str) -> list[list[float]]:
    """A GPU matrix of p2pBandwidthLatencyTest: 'P2P=Enabled Latency', 'Unidirectional P2P=Disabled', ..."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    part = text.split(title, 1)[1]
    rows = []
    for line in part.splitlines()[2:]:
        cells = line.split()
        if not cells or not cells[0].isdigit():
            break
        rows.append([float(c) for c in cells[1:]])
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nvbandwidth", default=os.path.join(CAPTURE, "nvbandwidth.txt"))
    p.add_argument("--p2p-latency", default=os.path.join(CAPTURE, "p2pBandwidthLatencyTest.txt"))
    p.add_argument("--pair", nargs=2, type=int, default=[0, 1])
    p.add_argument("--demo")
    p.add_argument("--replay")
    p.add_argument("--json", metavar="OUT", help="write every result and timing as JSON")
    args = p.parse_args()

    snap = open_snapshot(demo=args.demo, replay=args.replay)
    a, b = args.pair
    opts = BenchOptions()
    timings = {}
    t0 = time.monotonic()
    first = run_pair(snap, a, b, opts)
    timings["one pair, first run (kernel cache may be cold)"] = time.monotonic() - t0
    t0 = time.monotonic()
    result = run_pair(snap, a, b, opts)
    timings["one pair, worker start included"] = time.monotonic() - t0
    t0 = time.monotonic()
    everything = run_all(snap, None, opts)
    timings[f"--all ({len(everything)} ordered pairs, one worker)"] = time.monotonic() - t0

    nvb, nvb_source = load_nvbandwidth(args.nvbandwidth)
    lat = load_p2p_matrix(args.p2p_latency, "P2P=Enabled Latency")
    staged = load_p2p_matrix(args.p2p_latency, "Unidirectional P2P=Disabled")
    print(f"source: {snap.source.label}; simulated: {result.simulated}")
    print(f"reference: {nvb_source.splitlines()[0]}; latency reference: {args.p2p_latency}")
    for k, v in timings.items():
        print(f"time  {k}: {v:.2f} s")
    for r in (first, result):
        if r.status != "ok" or r.errors:
            print(f"GPU{r.a}->GPU{r.b}: status {r.status}; errors: {r.errors}")
    print(f"\nGPU{a} -> GPU{b} (data from {a} to {b})")
    print(f"{'figure':<18} {'p2ptop':>9} {'min':>9} {'max':>9} {'reference':>10} {'ratio':>7} {'target':>7}  pass")
    rows = []
    for m in result.measurements:
        ref, target = None, None
        if m.name in COMPARE:
            test, row_is_dest, target = COMPARE[m.name]
            matrix = nvb.get(test)
            src, dst = (a, b) if m.name != "ce_reverse" else (b, a)
            if matrix:
                ref = matrix[dst][src] if row_is_dest else matrix[src][dst]
        elif m.name == "latency_copy_us":
            ref, target = lat[a][b], 0.10
        elif m.name == "host_staged":
            ref = staged[a][b]  # shown, not a target: the driver's staging path
        if m.value is None:
            print(f"{m.name:<18} {'failed':>9}  {m.error}")
            continue
        ratio = m.value / ref if ref else None
        if target is None or ratio is None:
            ok = "-"
        elif m.unit == "us":
            ok = "yes" if abs(ratio - 1) <= target else "NO"
        else:
            ok = "yes" if ratio >= target else "NO"
        tgt = "-" if target is None else (f"±{target:.0%}" if m.unit == "us" else f">={target:.0%}")
        print(f"{m.name:<18} {m.value:>9.2f} {m.min or 0:>9.2f} {m.max or 0:>9.2f} {ref if ref is not None else '-':>10} "
              f"{(f'{ratio:.1%}' if ratio else '-'):>7} {tgt:>7}  {ok}")
        rows.append({"name": m.name, "value": m.value, "min": m.min, "max": m.max, "unit": m.unit, "reference": ref,
                     "ratio": ratio, "target": target, "pass": ok})
    print(f"integrity: {result.integrity}; verdict: {result.verdict}")
    if args.json:
        import dataclasses

        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"timings_s": timings, "table": rows, "reference": nvb_source,
                       "results": [dataclasses.asdict(r) for r in [first, result, *everything]]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
