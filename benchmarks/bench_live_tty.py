"""The dashboard as its user runs it, in a real terminal (tmux), live, on the FAKE NVML replaying a real
host's per-function call latencies: time to first frame and CPU while idle with live refresh, measured
the way benchmarks/device/live.sh measures them on a GPU host (first-frame marker file; utime+stime
from /proc/PID/stat over the window).

    python benchmarks/bench_live_tty.py [--capture h100x1-vm] [--latency FILE] [--idle-seconds 20]
    python benchmarks/bench_live_tty.py app [--capture ...] [--latency ...]   # the dashboard itself (what tmux runs)

Default: the single-H100 capture (tests/fixtures/captures/h100x1-vm) with the latencies measured on the
lent nvidia-h100-x1 (benchmarks/data/nvml-latency-h100x1-measured.json), NVML events supported as that
host reported them (0xff9f). Every figure printed says it is the fake. Needs tmux.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
CAPTURES = os.path.join(ROOT, "tests", "fixtures", "captures")
DEFAULT_LATENCY = os.path.join(HERE, "data", "nvml-latency-h100x1-measured.json")
H100_EVENT_TYPES = 0xFF9F  # what the lent H100 reported (benchmarks/device/live.sh)


def app(args: argparse.Namespace) -> int:
    sys.path.insert(0, ROOT)
    from p2ptop.sources.capture import CallLatency, Capture, FakeNvml
    from p2ptop.ui.app import P2PTopApp
    from p2ptop.ui.poller import LiveReader

    fake = FakeNvml(Capture.load(os.path.join(CAPTURES, args.capture)), latency=CallLatency.load(args.latency),
                    event_types=H100_EVENT_TYPES)
    fake.calls = _Count()  # a long run must not keep every call's name
    reader = LiveReader(nvml=fake, sysfs_root="/nonexistent", host_facts=False)
    a = P2PTopApp(reader=reader, interval=args.interval)
    if args.profile:  # the UI thread's profile (cProfile), written when the app ends
        import cProfile

        prof = cProfile.Profile()
        prof.runcall(a.run)
        prof.dump_stats(args.profile)
    else:
        a.run()
    return 0


class _Count(list):
    """Counts appends instead of keeping them."""

    n = 0

    def append(self, _x) -> None:  # noqa: D401
        self.n += 1


def tmux(*a: str) -> subprocess.CompletedProcess:
    return subprocess.run(["tmux", *a], capture_output=True, text=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", nargs="?", default="bench", choices=["bench", "app"])
    p.add_argument("--capture", default="h100x1-vm")
    p.add_argument("--latency", default=DEFAULT_LATENCY)
    p.add_argument("--interval", type=float, default=2.0)
    p.add_argument("--idle-seconds", type=float, default=20.0)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--profile", metavar="FILE", help="app: write the UI thread's cProfile stats here at exit")
    args = p.parse_args()
    if args.what == "app":
        return app(args)
    py = sys.executable
    me = os.path.abspath(__file__)
    cmd = f"{shlex.quote(py)} {shlex.quote(me)} app --capture {shlex.quote(args.capture)} " \
          f"--latency {shlex.quote(args.latency)} --interval {args.interval:g}"
    print(f"p2ptop dashboard in tmux 200x50, LIVE on the FAKE NVML ({args.capture} capture, latencies: "
          f"{os.path.relpath(args.latency)}), refresh every {args.interval:g} s ({os.cpu_count()} CPUs, Python "
          f"{sys.version.split()[0]})")
    with tempfile.TemporaryDirectory() as d:
        marker = os.path.join(d, "ff")
        firsts = []
        for i in range(args.runs):
            if os.path.exists(marker):
                os.remove(marker)
            t0 = time.time()
            tmux("new-session", "-d", "-s", "p2pbenchff", "-x", "200", "-y", "50",
                 f"P2PTOP_FIRST_FRAME_FILE={marker} exec {cmd}")
            for _ in range(200):
                if os.path.exists(marker) and os.path.getsize(marker):
                    break
                time.sleep(0.025)
            if os.path.exists(marker) and os.path.getsize(marker):
                firsts.append(float(open(marker).read()) - t0)
            tmux("kill-session", "-t", "p2pbenchff")
            time.sleep(0.3)
        ref = os.path.join(d, "ff0")
        t0 = time.time()
        tmux("new-session", "-d", "-s", "p2pbench0", "-x", "200", "-y", "50",
             f"{shlex.quote(py)} -c 'import time; open(\"{ref}\", \"w\").write(str(time.time()))'; sleep 1")
        time.sleep(1.2)
        tmux("kill-session", "-t", "p2pbench0")
        base = float(open(ref).read()) - t0 if os.path.exists(ref) else float("nan")
        if firsts:
            print(f"first frame (fake NVML): median {statistics.median(firsts):.3f} s after start, tmux start included "
                  f"(runs: {', '.join(f'{x:.3f}' for x in firsts)})   target <= 0.5 s")
        else:
            print("first frame: no marker within 5 s")
        print(f"reference: tmux start + bare python to its first line {base:.3f} s")

        tmux("new-session", "-d", "-s", "p2pbenchidle", "-x", "200", "-y", "50", f"exec {cmd}")
        time.sleep(max(8.0, args.interval * 3))  # past the first read, the knowledge base, the first refreshes
        pid = int(tmux("list-panes", "-t", "p2pbenchidle", "-F", "#{pane_pid}").stdout.split()[0])
        hz = os.sysconf("SC_CLK_TCK")

        def cpu() -> float:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / hz

        c0, w0 = cpu(), time.time()
        time.sleep(args.idle_seconds)
        c1, w1 = cpu(), time.time()
        screen = tmux("capture-pane", "-p", "-t", "p2pbenchidle").stdout.splitlines()
        tmux("kill-session", "-t", "p2pbenchidle")
        print(f"dashboard idle (fake NVML), refresh every {args.interval:g} s: {c1 - c0:.2f} s CPU in {w1 - w0:.1f} s = "
              f"{100 * (c1 - c0) / (w1 - w0):.2f} % of one core (utime+stime, /proc/PID/stat)   target <= 0.5 %")
        print("screen at the end (top):")
        print("\n".join(screen[:10]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
