"""What the runner tests share: a snapshot that claims to be live (so a runner starts its worker instead of
simulating) and checks that a worker's whole process group is gone."""

import os
import time

from p2ptop.demos import load_demo


def live_snapshot():
    """The 2-GPU demo snapshot marked live (source nvml, not simulated): runners start their (fake) workers on it."""
    snap = load_demo("h200x2-vm")
    snap.source.kind = "nvml"
    snap.source.simulated = False
    return snap


def alive(pid):
    """True while pid exists and is not a zombie (no psutil: /proc)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def assert_all_gone(pidfile):
    """Every pid the fake worker wrote to pidfile has exited within 3 s."""
    pids = [int(x) for x in pidfile.read_text().split()]
    assert pids
    deadline = time.monotonic() + 3
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in pids if alive(p)] == []
