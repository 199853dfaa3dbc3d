"""A stand-in for one side of the CUDA IPC test (``python -m p2ptop.bench.worker_ipc``); no GPU, no CuPy.

    python fake_ipc_worker.py MODE

MODE: ok, legacy_fails (the import side cannot open the legacy handle: the error CUDA gives in another IPC
namespace), hang (the import side hangs), crash (the import side segfaults), garbage, fatal, setup_fails (the import
side, in its own PID namespace, says cudaErrorOperatingSystem at its first CUDA call and exits 3, as seen under
`unshare -p -f` on an H100; the export side waits for it), other_ns (all works, the import side in its own IPC namespace).
$FAKE_PIDFILE collects the pids. Figures are SIMULATED.
"""

import json
import os
import signal
import sys
import time


def emit(ev):
    sys.stdout.write(json.dumps(ev) + "\n")
    sys.stdout.flush()


def wait_release(kind):
    while True:
        line = sys.stdin.readline()
        if not line:
            os._exit(4)
        if json.loads(line).get("release") == kind:
            return


def main():
    mode = sys.argv[1]
    job = json.loads(sys.stdin.readline())
    side = job["side"]
    if os.environ.get("FAKE_PIDFILE"):
        with open(os.environ["FAKE_PIDFILE"], "a") as f:
            f.write(f"{os.getpid()}\n")
    if mode == "fatal":
        emit({"type": "fatal", "message": "CuPy cannot be imported (ModuleNotFoundError: No module named 'cupy')"})
        return 2
    emit({"type": "hello", "side": side, "pid": os.getpid(), "cupy": "fake", "devices": 1,
          "ipc_ns": "ipc:[4026531839]" if side == "export" or mode not in ("legacy_fails", "other_ns") else "ipc:[4026532999]",
          "pid_ns": "pid:[4026532777]" if side == "import" and mode == "setup_fails" else "pid:[4026531836]"})
    if side == "import" and mode == "setup_fails":
        emit({"type": "error", "step": "setup", "kind": None, "name": "cudaErrorOperatingSystem", "code": 304,
              "text": "OS call failed or operation not supported on this OS"})
        return 3
    if side == "export":
        for kind in job["kinds"]:
            emit({"type": "handle", "kind": kind, "handle": "00" * 64} if kind == "legacy" else {"type": "handle", "kind": kind, "socket": "/nonexistent", "size": 1})
            wait_release(kind)
            emit({"type": "released", "kind": kind})
        emit({"type": "done"})
        return 0
    emit({"type": "measurement", "name": "in_process", "value": 1300.0, "min": 1290.0, "max": 1310.0})
    if mode == "garbage":
        print("garbage line")
    for kind in job["kinds"]:
        json.loads(sys.stdin.readline())
        if mode == "hang":
            time.sleep(600)
        if mode == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if mode == "legacy_fails" and kind == "legacy":
            emit({"type": "error", "step": "open", "kind": kind, "name": "cudaErrorMapBufferObjectFailed", "code": 205, "text": "mapping of buffer object failed"})
        else:
            emit({"type": "measurement", "name": f"ipc_{kind}", "value": 1250.0, "min": 1240.0, "max": 1260.0})
            emit({"type": "integrity", "kind": kind, "status": "ok", "bad_bytes": 0, "first_bad_offset": None, "checked_bytes": 1})
        emit({"type": "finished", "kind": kind})
    emit({"type": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
