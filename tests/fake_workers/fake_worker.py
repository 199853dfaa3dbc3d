"""A stand-in for ``python -m p2ptop.bench.worker`` that misbehaves on request (no GPU, no CuPy).

    python fake_worker.py MODE [PIDFILE]

It reads the job on stdin like the real worker and speaks the same JSON lines. MODE:
ok, hang (hangs in the middle of the first pair), hang_start (hangs before any pair), crash
(segfaults in the middle of a pair), exit_between (exits after the first pair), garbage (prints
junk, then finishes), only_garbage, oom, corrupt, fatal, grandchild (starts a sleeping child, then
hangs). With PIDFILE, it writes its pid (and its child's) there, one a line, so tests can check
that nothing is left running.
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


def main():
    mode = sys.argv[1]
    pidfile = sys.argv[2] if len(sys.argv) > 2 else None
    pids = [os.getpid()]
    job = json.loads(sys.stdin.readline())
    if mode == "grandchild":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pids.append(child.pid)
    if pidfile:
        with open(pidfile, "w") as f:
            f.write("\n".join(map(str, pids)) + "\n")
    emit({"type": "hello", "pid": os.getpid(), "cupy": "fake", "devices": 2})
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
        emit({"type": "progress", "step": "ce", "fraction": 0.3, "message": "ce"})
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
