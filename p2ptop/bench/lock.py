"""One copy test at a time per GPU, across processes and users: a host-wide lock per GPU.

Each GPU has a lock file ``<dir>/gpu-<key>.lock`` (key: the GPU's UUID, else its PCI bus id, else its
index) held with ``fcntl.flock(LOCK_EX)``. The kernel releases a flock when the last descriptor of the
file closes, so a holder that dies (crash, SIGKILL, OOM killer) never leaves a GPU locked. The holder
writes who it is into the file (pid, user, command, since, GPUs) so that a waiter can say who it waits for;
the text is data, read back cleaned.

The directory is ``$P2PTOP_LOCK_DIR``, else ``/tmp/p2ptop-locks`` (created sticky and world-writable,
mode 1777, files 0666, so every user's tests share it), else, when that cannot be used,
``$XDG_RUNTIME_DIR/p2ptop-locks`` (then the lock only serialises this user's tests: said in ``where``).

Several GPUs are locked in a fixed order (sorted keys), so two tests never deadlock.
"""

from __future__ import annotations

import errno
import fcntl
import getpass
import json
import os
import re
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Optional

from ..model import Snapshot

LOCK_DIR_ENV = "P2PTOP_LOCK_DIR"
SHARED_DIR = "/tmp/p2ptop-locks"
POLL_S = 0.1
_KEY_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


class LockUnavailable(Exception):
    """The lock directory cannot be used at all (no writable place)."""


def lock_dir() -> tuple[str, str]:
    """(directory, how it is shared): the first usable of $P2PTOP_LOCK_DIR, /tmp/p2ptop-locks, $XDG_RUNTIME_DIR."""
    tried = []
    env = os.environ.get(LOCK_DIR_ENV)
    candidates = [(env, "set by $P2PTOP_LOCK_DIR")] if env else []
    candidates.append((SHARED_DIR, "shared by every user of this host"))
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        candidates.append((os.path.join(xdg, "p2ptop-locks"), "this user's only ($XDG_RUNTIME_DIR): other users' tests are not seen"))
    for path, how in candidates:
        try:
            os.makedirs(path, exist_ok=True)
            if path == SHARED_DIR:
                try:
                    os.chmod(path, 0o1777)  # only its owner can; others find it already so
                except PermissionError:
                    pass
            if os.access(path, os.W_OK | os.X_OK):
                return path, how
            tried.append(f"{path}: not writable")
        except OSError as e:
            tried.append(f"{path}: {e.strerror or e}")
    raise LockUnavailable("no directory for the GPU locks: " + "; ".join(tried))


def gpu_key(snapshot: Snapshot, index: int) -> str:
    gpu = snapshot.gpu(index)
    key = (gpu.uuid or gpu.pci_bus_id) if gpu is not None else None
    return _KEY_SAFE.sub("_", key) if key else f"index{index}"


def read_holder(path: str) -> dict[str, Any]:
    """What the holder wrote (pid, user, command, since, gpus), cleaned; {} when nothing readable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            data = json.loads(f.read(4096) or "{}")
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    out = {}
    for k in ("pid", "user", "command", "since", "gpus"):
        v = data.get(k)
        if isinstance(v, (int, str)) and not isinstance(v, bool):
            out[k] = "".join(ch if ch.isprintable() else " " for ch in str(v))[:200] if isinstance(v, str) else v
    return out


def describe(holder: dict[str, Any]) -> str:
    """'pid 4242 (alice: p2ptop bench 0 1) since 2026-11-24T05:00:00+00:00'."""
    if not holder:
        return "another process (it wrote nothing readable)"
    who = f"pid {holder.get('pid', '?')}"
    extra = ": ".join(str(holder[k]) for k in ("user", "command") if holder.get(k))
    since = f" since {holder['since']}" if holder.get("since") else ""
    return f"{who} ({extra}){since}" if extra else f"{who}{since}"


class GpuLocks:
    """Exclusive locks on some GPUs. ``acquire`` waits (``wait_s`` None: for ever; 0: not at all)."""

    def __init__(self, snapshot: Snapshot, gpus: Iterable[int], directory: Optional[str] = None):
        self.snapshot = snapshot
        self.gpus = sorted(set(gpus))
        if directory is None:
            directory, self.shared = lock_dir()
        else:
            os.makedirs(directory, exist_ok=True)
            self.shared = "given directory"
        self.directory = directory
        keyed = sorted((gpu_key(snapshot, g), g) for g in self.gpus)
        self.paths = [(g, os.path.join(directory, f"gpu-{k}.lock")) for k, g in keyed]
        self.fds: list[int] = []
        self.waited_s = 0.0

    def _open(self, path: str) -> int:
        """Open (or create) a lock file. Never through a symlink (the directory is world-writable); an existing
        file is opened without O_CREAT, which Linux's fs.protected_regular refuses for other users' files in a
        sticky directory; a new one is created 0666 whatever our umask, so other users can lock it too."""
        flags = os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW
        for _ in range(5):
            try:
                return os.open(path, flags)
            except FileNotFoundError:
                pass
            except OSError as e:
                raise LockUnavailable(f"{path}: cannot be opened ({e.strerror or e})") from None
            try:
                fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                continue  # another test created it just now: open that one
            except OSError as e:
                raise LockUnavailable(f"{path}: cannot be created ({e.strerror or e})") from None
            try:
                os.fchmod(fd, 0o666)
            except OSError:
                pass
            return fd
        raise LockUnavailable(f"{path}: appears and disappears")

    def acquire(self, wait_s: Optional[float] = None, on_wait: Optional[Callable[[int, dict], None]] = None,
                cancel: Optional[threading.Event] = None) -> Optional[tuple[int, dict]]:
        """Lock every GPU. None when done; else (GPU, holder) of the lock that could not be had in time
        (or before ``cancel``). ``on_wait(gpu, holder)`` is called when a wait begins and when the holder changes."""
        t0 = time.monotonic()
        deadline = None if wait_s is None else t0 + max(0.0, wait_s)
        for g, path in self.paths:
            fd = self._open(path)
            told: Optional[dict] = None
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as e:
                    if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                        os.close(fd)
                        self.release()
                        raise
                holder = read_holder(path)
                fresh = not holder and time.monotonic() - t0 < 0.5  # its holder may be writing its label right now
                if holder != told and on_wait is not None and not fresh and wait_s != 0:
                    on_wait(g, holder)
                told = holder
                if (deadline is not None and time.monotonic() >= deadline) or (cancel is not None and cancel.is_set()):
                    os.close(fd)
                    self.release()
                    self.waited_s = time.monotonic() - t0
                    return g, holder
                time.sleep(POLL_S)
            self.fds.append(fd)
            self._write_holder(fd)
        self.waited_s = time.monotonic() - t0
        return None

    def _write_holder(self, fd: int) -> None:
        try:
            user = getpass.getuser()
        except Exception:  # noqa: BLE001 - no name for this uid
            user = str(os.getuid())
        info = {"pid": os.getpid(), "user": user, "command": " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:200],
                "since": datetime.now(timezone.utc).isoformat(timespec="seconds"), "gpus": ",".join(map(str, self.gpus))}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
        except OSError:
            pass  # the lock holds without its label

    def release(self) -> None:
        for fd in reversed(self.fds):
            try:
                os.ftruncate(fd, 0)  # no stale label once free
            except OSError:
                pass
            try:
                os.close(fd)  # closing the last descriptor releases the flock
            except OSError:
                pass
        self.fds.clear()

    def __enter__(self) -> "GpuLocks":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()
