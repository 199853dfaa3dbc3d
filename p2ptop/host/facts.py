"""The host being read: its root path, its environment, a command runner, and the facts gathered.

A fact is plain JSON-safe data: ``{"value": ..., "how": "read /proc/cmdline", "na": None}``.
``value`` is None where it could not be read, and ``na`` then says why ("needs root" where that is
why). Safe by construction: files are opened read-only, commands run from argument lists (never
through a shell) with a timeout, and a missing command is N/A, not an error.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

NEEDS_ROOT = "needs root"
COMMAND_TIMEOUT_S = 5.0
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """Text from files, logs and commands is data: drop control characters (terminal codes)."""
    return _CONTROL.sub("", text)


@dataclass
class CommandResult:
    rc: Optional[int]  # None when the command did not run
    out: str = ""
    err: str = ""
    na: Optional[str] = None  # why it did not run: "lspci not installed", "timed out after 5 s"


Runner = Callable[[list[str]], CommandResult]


def run_command(argv: list[str], timeout: float = COMMAND_TIMEOUT_S) -> CommandResult:
    """Run one read-only command from an argument list (no shell), with a timeout."""
    exe = shutil.which(argv[0])
    if exe is None:
        return CommandResult(None, na=f"{argv[0]} not installed")
    try:
        p = subprocess.Popen(
            [exe, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, errors="replace", env={**os.environ, "LC_ALL": "C"}, start_new_session=True,
        )
    except OSError as e:
        return CommandResult(None, na=f"{argv[0]} could not run ({e.strerror or e})")
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # kill its whole process group: a child left holding the pipes would keep us waiting
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.communicate()
        return CommandResult(None, na=f"{argv[0]} timed out after {timeout:g} s")
    return CommandResult(p.returncode, out, err)


#: the commands the collectors always run: started together, so the host facts wait for the slowest, not the sum
ALWAYS_RUN = (("systemd-detect-virt", "--vm"), ("systemctl", "is-active", "nvidia-fabricmanager"),
              ("nv-fabricmanager", "--version"), ("dmesg",))


def prefetched(run: Runner, argvs=ALWAYS_RUN) -> Runner:
    """A runner that has already started ``argvs`` in threads (each once) and answers them from there;
    any other command runs as it is asked for."""
    import threading

    results: dict[tuple, Any] = {}

    def one(argv: tuple) -> None:
        try:
            results[argv] = run(list(argv))
        except Exception as e:  # noqa: BLE001 - the collector asks again and gets its own error
            results[argv] = e

    threads = {argv: threading.Thread(target=one, args=(argv,), daemon=True) for argv in argvs}
    for t in threads.values():
        t.start()

    def runner(argv: list[str]):
        key = tuple(argv)
        t = threads.pop(key, None)
        if t is not None:
            t.join()
            r = results.pop(key)
            if not isinstance(r, Exception):
                return r
        return run(argv)

    return runner


def _installed_packages() -> dict[str, str]:
    """Installed Python distributions, name (lower case, ``-`` for ``_``) -> version, from the names of the
    ``*.dist-info`` / ``*.egg-info`` folders on sys.path (``cupy_cuda12x-13.3.0.dist-info``). No metadata file
    is parsed: parsing every distribution's METADATA cost 0.1-0.3 s on a host with PyTorch installed."""
    import sys

    out: dict[str, str] = {}
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for n in names:
            for suffix in (".dist-info", ".egg-info"):
                if n.endswith(suffix):
                    name, _, version = n[: -len(suffix)].partition("-")
                    version = version.split("-py", 1)[0]  # egg-info: name-1.0-py3.12.egg-info
                    if name and version:
                        out.setdefault(name.lower().replace("_", "-"), version)
    return out


@dataclass
class Host:
    """What the collectors read from, and the facts they add."""

    root: str = "/"
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    run: Runner = run_command
    is_root: bool = False
    packages: Callable[[], dict[str, str]] = _installed_packages
    gpu_bdfs: list[str] = field(default_factory=list)  # sysfs form, 0000:3a:00.0
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)

    # -- facts --
    def add(self, name: str, value: Any, how: str, na: Optional[str] = None) -> None:
        self.facts[name] = {"value": value, "how": how, "na": None if value is not None else na}

    # -- reading --
    def path(self, rel: str) -> str:
        return os.path.join(self.root, rel.lstrip("/"))

    def _why(self, e: OSError, rel: str) -> str:
        if isinstance(e, FileNotFoundError):
            return f"no /{rel.lstrip('/')}"
        if isinstance(e, PermissionError):
            return NEEDS_ROOT if not self.is_root else "permission denied"
        return f"/{rel.lstrip('/')} unreadable ({e.strerror or e})"

    def read(self, rel: str) -> tuple[Optional[str], Optional[str]]:
        """(text, None) or (None, why)."""
        try:
            with open(self.path(rel), "rb") as f:
                return clean(f.read(1 << 20).decode("utf-8", "replace")), None
        except OSError as e:
            return None, self._why(e, rel)

    def read_bytes(self, rel: str, limit: int = 4096) -> tuple[Optional[bytes], Optional[str]]:
        try:
            with open(self.path(rel), "rb") as f:
                return f.read(limit), None
        except OSError as e:
            return None, self._why(e, rel)

    def exists(self, rel: str) -> bool:
        return os.path.lexists(self.path(rel))

    def listdir(self, rel: str) -> Optional[list[str]]:
        """Sorted entries, or None when the directory is not there or not readable."""
        try:
            return sorted(os.listdir(self.path(rel)))
        except OSError:
            return None

    def command(self, argv: list[str]) -> CommandResult:
        res = self.run(argv)
        return CommandResult(res.rc, clean(res.out), clean(res.err), res.na)
