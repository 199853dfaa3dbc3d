"""Worker processes that speak JSON lines: start one in its own session, read it, kill its group, reap it.

The one way p2ptop starts, kills and reaps a worker: the copy-test worker (p2ptop/bench/runner.py), the NCCL
ranks (p2ptop/nccl/runner.py), the two sides of the CUDA IPC test (p2ptop/bench/ipc.py). Each child:

- runs in its own session (process group), so a kill reaches anything it started;
- keeps its stdin open while we live: the workers exit at its EOF, so none outlives us;
- may be started through a wrapper command (``wrap``: e.g. ``["unshare", "-i"]`` puts it in its own IPC
  namespace), which is how the tests of separate namespaces are run;
- has its stdout read line by line into a shared queue (tagged with its name) and its stderr kept (bounded:
  its start, or with ``stderr_tail`` its end, where a Python traceback stands);
- may inherit file descriptors (``pass_fds``: the copy-test worker holds the GPU locks too);
- is listened to with ``Listen`` (one loop for all three: cancel, a timeout each line that counts restarts,
  each child's EOF, an ending the caller checks);
- is killed with SIGKILL to its whole group (a process hung in a CUDA call or a P2P copy gets no say; the
  kill also frees the GPU memory it held) and reaped: ``reap`` gives it ``EXIT_GRACE_S`` to exit on its own.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from typing import Any, Callable, Optional, Sequence

POLL_S = 0.05
EXIT_GRACE_S = 2.0


def clean(text: str, limit: int = 300) -> str:
    """Child output is data: no control characters, bounded length."""
    text = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def child_env(extra: Optional[dict[str, str]] = None, drop: Sequence[str] = ()) -> dict[str, str]:
    """Our environment, with the package importable from the child and unbuffered output."""
    env = dict(os.environ)
    for k in drop:
        env.pop(k, None)
    pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


class Child:
    """One worker process. ``lines`` is shared: it receives ``(name, bytes)`` and ``(name, None)`` at EOF."""

    def __init__(self, name: Any, cmd: list[str], env: dict[str, str], lines: "queue.Queue", stderr_limit: int = 8000,
                 wrap: Sequence[str] = (), stderr_tail: bool = False, pass_fds: Sequence[int] = ()):
        self.name, self.cmd, self.env, self.lines = name, list(wrap) + list(cmd), env, lines
        self.stderr = bytearray()
        self.stderr_limit, self.stderr_tail = stderr_limit, stderr_tail
        self.pass_fds = tuple(pass_fds)
        self.stderr_dropped = 0
        self.proc: Optional[subprocess.Popen] = None
        self.start_error: Optional[str] = None
        self.eof = False
        self.code: Optional[int] = None
        self._readers: list[threading.Thread] = []

    def start(self) -> bool:
        try:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         start_new_session=True, env=self.env, pass_fds=self.pass_fds)
        except OSError as e:
            self.start_error = f"cannot start {' '.join(self.cmd)}: {e.strerror or e}"
            return False
        self._readers = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self._readers:
            t.start()
        return True

    def send(self, obj: dict) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            pass  # it died; its exit status tells

    def _read_stdout(self) -> None:
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.put((self.name, line))
        self.lines.put((self.name, None))

    def _read_stderr(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read(65536), b""):
            if self.stderr_tail:
                self.stderr += chunk
                over = max(0, len(self.stderr) - self.stderr_limit)
                del self.stderr[:over]
                self.stderr_dropped += over
                continue
            room = self.stderr_limit - len(self.stderr)
            if room > 0:
                self.stderr += chunk[:room]
            self.stderr_dropped += max(0, len(chunk) - max(room, 0))

    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")

    def kill_group(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def reap(self, cancel: Optional[threading.Event] = None) -> Optional[int]:
        """Wait for the child (killing it if it lingers), then kill anything left in its group.
        ``WNOWAIT`` leaves the exited child unreaped, so its group id cannot be reused before the kill."""
        if self.proc is None:
            return None
        grace = time.monotonic() + EXIT_GRACE_S
        while True:
            try:
                if os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
                    break
            except ChildProcessError:
                break
            if time.monotonic() > grace or (cancel is not None and cancel.is_set()):
                self.kill_group()
                grace = float("inf")
            time.sleep(POLL_S / 5)
        self.kill_group()
        self.code = self.proc.wait()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        for t in self._readers:
            t.join(timeout=2)
        return self.code


class Listen:
    """Reads the children's ``lines`` until an ending, which ``run`` returns: "cancel" (``cancel`` set), the
    timeout (``timeout_s`` with no line that restarts it: ``on_timeout()`` names it, "timeout" by default),
    an ending ``check()`` gives, or one ``on_eof(name)`` gives at a child's EOF. ``on_line(name, raw)``
    handles a line and says whether the timeout restarts. The callbacks may ``shorten`` the deadline (a
    child died: its peers would wait for it)."""

    def __init__(self, lines: "queue.Queue", cancel: threading.Event, timeout_s: float, start: Optional[float] = None):
        self.lines, self.cancel, self.timeout_s = lines, cancel, timeout_s
        self.deadline = (time.monotonic() if start is None else start) + timeout_s

    def shorten(self, seconds: float) -> None:
        self.deadline = min(self.deadline, time.monotonic() + seconds)

    def run(self, on_line: Callable[[Any, bytes], bool], on_eof: Callable[[Any], Optional[str]],
            check: Callable[[], Optional[str]] = lambda: None,
            on_timeout: Callable[[], str] = lambda: "timeout") -> str:
        while True:
            if self.cancel.is_set():
                return "cancel"
            if time.monotonic() > self.deadline:
                return on_timeout()
            ended = check()
            if ended:
                return ended
            try:
                name, line = self.lines.get(timeout=POLL_S)
            except queue.Empty:
                continue
            if line is None:
                ended = on_eof(name)
                if ended:
                    return ended
            elif on_line(name, line):
                self.deadline = time.monotonic() + self.timeout_s


def read_event(raw: bytes) -> tuple[Optional[dict], str]:
    """A child's line as its JSON event: (the event, the line's text), or (None, text) where the line is blank
    or not a JSON object with a string "type" (the caller keeps a few of those as garbage)."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        ev = json.loads(text) if text else None
    except ValueError:
        ev = None
    if not isinstance(ev, dict) or not isinstance(ev.get("type"), str):
        return None, text
    return ev, text


def error_text(ev: dict, step_limit: int = 40, text_limit: int = 400) -> str:
    """A worker's ``error`` event as one line of data:
    'step: cudaErrorPeerAccessUnsupported (217): peer access is not supported between these two devices'."""
    step = clean(str(ev.get("step", "")), step_limit)
    name = clean(str(ev.get("name", "")), 80)
    code = ev.get("code")
    text = clean(str(ev.get("text", "")), text_limit)
    head = name + (f" ({code})" if code is not None else "")
    return f"{step}: {head}: {text}" if head else f"{step}: {text}"


def exit_text(code: Optional[int]) -> str:
    if code is None:
        return "did not start"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with status {code}"
