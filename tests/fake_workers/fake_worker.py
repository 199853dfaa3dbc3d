"""A stand-in for ``python -m p2ptop.bench.worker`` that misbehaves on request (no GPU, no CuPy).

    python fake_worker.py MODE [PIDFILE]

It reads the job on stdin like the real worker and speaks the same JSON lines. MODE:
ok, hang (hangs in the middle of the first pair), hang_start (hangs before any pair), crash
(segfaults in the middle of a pair), exit_between (exits after the first pair), garbage (prints
junk, then finishes), only_garbage, oom, corrupt, fatal, grandchild (starts a sleeping child, then
hangs), slow (one measurement, then waits to be killed from outside), selfkill_SIGNAME (one measurement,
then kills itself with that signal), timed (each pair takes $FAKE_PAIR_S seconds and appends
"start T" / "end T" lines to $FAKE_TIMES), ok_pid_early (ok, its pid file written before it waits for the runner's go). With PIDFILE, it writes its pid (and its child's) there, one
a line, so tests can check that nothing is left running.

A pair [a, a] is a host link: steps h2d, d2h, host_bidirectional, each $FAKE_STEP_S seconds (default 0),
during which the file $FAKE_LOAD_FILE (when set) exists, so a fake NVML can answer "under load"
readings; figures as one H100 measured them (52.9, 51.0 GB/s; both ways at once nvbandwidth's 34.5, 48.8), or
$FAKE_H2D for H->D. Given "gate" in the job (the runner's contention check), it sleeps $FAKE_IMPORT_S (the real
worker's imports), then waits for the go line, appends it to $FAKE_GATE_LOG and says gate_wait_s in hello.
"""

import json
import os
import signal
import subprocess
import sys
import time


def emit(ev):
    sys.stdout.write(json.dumps(ev) + "\n")
    sys.stdout.flush()


def measurements(a, b):
    for name, value in (("ce_one_way", 390.0), ("ce_reverse", 391.0), ("ce_bidirectional", 775.0),
                        ("sm_read", 375.0), ("sm_write", 368.0), ("latency_copy_us", 2.2), ("host_staged", 37.0)):
        emit({"type": "measurement", "name": name, "value": value, "min": value * 0.99, "max": value * 1.01, "samples": [value]})


def host_link(a):
    step_s = float(os.environ.get("FAKE_STEP_S", "0"))
    load = os.environ.get("FAKE_LOAD_FILE")
    emit({"type": "params", "params": {"cpu_affinity": "0-15", "warm_h2d_gbps": "44.9, 52.0, 52.8"}})
    for step, names in (("h2d", (("h2d", float(os.environ.get("FAKE_H2D", "52.9"))),)), ("d2h", (("d2h", 51.0),)),
                        ("host_bidirectional", (("h2d_bidir", 34.5), ("d2h_bidir", 48.8)))):
        emit({"type": "progress", "step": step, "fraction": 0.3, "message": step})
        if load:
            open(load, "w").close()
        time.sleep(step_s)
        if load:
            os.unlink(load)
        for name, value in names:
            emit({"type": "measurement", "name": name, "value": value, "min": value * 0.99, "max": value * 1.01, "samples": [value]})
    emit({"type": "progress", "step": "host_latency", "fraction": 0.8, "message": "latency"})
    emit({"type": "measurement", "name": "latency_h2d_us", "value": 2.5, "min": 2.4, "max": 2.6, "samples": [2.5]})
    emit({"type": "integrity", "status": "ok", "first_bad_offset": None, "checked_bytes": 1 << 27, "bad_bytes": 0})


def main():
    mode = sys.argv[1]
    pidfile = sys.argv[2] if len(sys.argv) > 2 else None
    pids = [os.getpid()]
    job = json.loads(sys.stdin.readline())
    if mode == "ok_pid_early" and pidfile:  # "ok", with the pid file written before the gate
        with open(pidfile, "w") as f:
            f.write(f"{os.getpid()}\n")
        mode, pidfile = "ok", None
    gate_wait = None
    if job.get("gate"):  # as the real worker: wait for the runner's go (the pairs to run) before any GPU work
        time.sleep(float(os.environ.get("FAKE_IMPORT_S", "0")))  # the real worker's imports take this long
        t = time.monotonic()
        go = json.loads(sys.stdin.readline() or "{}")
        gate_wait = round(time.monotonic() - t, 4)
        if os.environ.get("FAKE_GATE_LOG"):
            with open(os.environ["FAKE_GATE_LOG"], "a") as f:
                f.write(json.dumps(go) + "\n")
        if not isinstance(go.get("pairs"), list):
            return 0
        job["pairs"] = go["pairs"]
    if mode == "grandchild":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pids.append(child.pid)
    if pidfile:
        with open(pidfile, "w") as f:
            f.write("\n".join(map(str, pids)) + "\n")
    hello = {"type": "hello", "pid": os.getpid(), "cupy": "fake", "devices": 2}
    if gate_wait is not None:
        hello["gate_wait_s"] = gate_wait
    emit(hello)
    if mode == "fatal":
        emit({"type": "fatal", "message": "CUDA cannot start: cudaErrorNoDevice (100): no CUDA-capable device is detected"})
        return 2
    if mode == "hang_start":
        time.sleep(600)
    if mode == "only_garbage":
        print("Segmentation fault? \x1b[31mred\x1b[0m not json")
        return 0
    for i, (a, b) in enumerate(job["pairs"]):
        emit({"type": "pair_start", "a": a, "b": b, "params": {"size_mib": job["options"]["size_mib"]}})
        if mode == "timed":
            with open(os.environ["FAKE_TIMES"], "a") as f:
                f.write(f"start {time.time():.6f} {os.getpid()}\n")
            time.sleep(float(os.environ.get("FAKE_PAIR_S", "0.5")))
            with open(os.environ["FAKE_TIMES"], "a") as f:
                f.write(f"end {time.time():.6f} {os.getpid()}\n")
        if a == b:
            host_link(a)
            emit({"type": "pair_end", "status": "ok"})
            continue
        emit({"type": "progress", "step": "ce", "fraction": 0.3, "message": "ce"})
        if mode == "slow" or mode.startswith("selfkill_"):
            emit({"type": "measurement", "name": "ce_one_way", "value": 390.0, "min": 389.0, "max": 391.0, "samples": [390.0]})
            if mode == "slow":
                time.sleep(600)
            os.kill(os.getpid(), getattr(signal, mode.split("_", 1)[1]))
            time.sleep(600)
        if mode in ("hang", "grandchild"):
            time.sleep(600)
        if mode == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if mode == "garbage":
            print("this is not JSON")
            print("[1, 2, 3]")
        if mode == "oom":
            emit({"type": "error", "step": "setup", "code": 2, "name": "cudaErrorMemoryAllocation", "text": "out of memory"})
            emit({"type": "pair_end", "status": "failed"})
            continue
        measurements(a, b)
        if mode == "corrupt":
            emit({"type": "integrity", "status": "corrupt", "first_bad_offset": 4096, "checked_bytes": 1 << 26, "bad_bytes": 64})
        else:
            emit({"type": "integrity", "status": "ok", "first_bad_offset": None, "checked_bytes": 1 << 26, "bad_bytes": 0})
        emit({"type": "pair_end", "status": "ok"})
        if mode == "exit_between" and i == 0:
            return 0
    emit({"type": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
