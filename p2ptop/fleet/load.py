"""Load many snapshots in parallel: each file becomes a host summary, or a line saying why it could not.

Files are read, checked and summarised in worker processes (the work is CPU-bound Python, so threads
would queue on the GIL); each worker loads the knowledge base once. A broken, truncated, deeply nested,
future-version or unreadable file is listed with its reason and the others load.
"""

from __future__ import annotations

import glob
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from ..model import SnapshotError, load_snapshot

MAX_FILE_BYTES = 256 << 20  # a snapshot of 72 GPUs is about 1 MB
Progress = Optional[Callable[[int, int], None]]


@dataclass
class Fleet:
    hosts: list[dict[str, Any]] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file, why it was not loaded)
    source: str = ""


def expand(sources: Iterable[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Directories (their *.json, recursively), globs and files -> (files, sources that matched nothing)."""
    files: list[str] = []
    missing: list[tuple[str, str]] = []
    for src in sources:
        if os.path.isdir(src):
            found = sorted(glob.glob(os.path.join(glob.escape(src), "**", "*.json"), recursive=True))
            if not found:
                missing.append((src, "a directory with no *.json files"))
            files += found
        elif any(c in src for c in "*?["):
            found = sorted(p for p in glob.glob(src, recursive=True) if os.path.isfile(p))
            if not found:
                missing.append((src, "no file matches this pattern"))
            files += found
        elif os.path.exists(src):
            files.append(src)
        else:
            missing.append((src, "no such file or directory"))
    seen = set()
    unique = [f for f in files if not (f in seen or seen.add(f))]
    return unique, missing


_KB: Any = None


def _init_worker(kb_dirs: tuple[str, ...]) -> None:
    global _KB
    try:
        from ..knowledge import load_kb

        _KB = load_kb(list(kb_dirs))
    except Exception:  # no knowledge base: summaries without the top entry
        _KB = None


def _compact(r: dict[str, Any]) -> dict[str, Any]:
    """One copy of each key string for the whole fleet (pair names, test names, GPU and link numbers, field
    names): a summary arrives from a worker with its own copies, and 10,000 hosts repeat them millions of times."""
    intern = sys.intern
    if "pairs" in r:
        r["pairs"] = {intern(p): {intern(t): v for t, v in tests.items()} for p, tests in r["pairs"].items()}
        r["links"] = {intern(g): {intern(k): v for k, v in l.items()} for g, l in r["links"].items()}
        for key in ("model", "topology", "topology_text", "driver", "worst", "source", "kb_top"):
            if isinstance(r.get(key), str):
                r[key] = intern(r[key])
    return {intern(k): v for k, v in r.items()}


def summarize_file(path: str) -> dict[str, Any]:
    """A host summary, or {"file", "error"}; never raises."""
    from .summary import summarize

    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            return {"file": path, "error": f"{size >> 20} MB: too large to be a snapshot"}
        snap = load_snapshot(path)
        return summarize(snap, file=path, kb=_KB)
    except SnapshotError as e:
        return {"file": path, "error": str(e)[len(path) + 2:] if str(e).startswith(path + ": ") else str(e)}
    except OSError as e:
        return {"file": path, "error": f"cannot be read ({e.strerror or e})"}
    except RecursionError:
        return {"file": path, "error": "nested too deeply to be a snapshot"}
    except Exception as e:  # noqa: BLE001 - one bad file must not stop a fleet
        return {"file": path, "error": f"could not be summarised ({type(e).__name__}: {e})"}


def load_fleet(sources: Iterable[str], *, workers: Optional[int] = None, kb_dirs: Iterable[str] = (),
               progress: Progress = None, on_result: Optional[Callable[[dict[str, Any]], None]] = None,
               cache: Any = None) -> Fleet:
    """Every file summarised (``on_result`` sees each summary or error as it arrives, for a screen that
    fills while loading); hosts compared with their siblings once all are in. ``cache``: a
    :class:`~p2ptop.fleet.cache.SummaryCache` (or True: the default one, opened and closed here, in this
    thread) whose still-valid summaries are reused and which gets the new ones."""
    sources = list(sources)
    files, missing = expand(sources)
    fleet = Fleet(problems=list(missing), source=", ".join(sources))
    total = len(files)
    workers = workers or min(os.cpu_count() or 1, 16)
    if progress:
        progress(0, total)
    own_cache = cache is True
    if own_cache:
        from .cache import SummaryCache

        cache = SummaryCache(kb_dirs=kb_dirs)
    cached = cache.get_many(files) if cache else {}
    results: list[dict[str, Any]] = []
    for f in files:
        if f in cached:
            cached[f] = _compact(cached[f])
            results.append(cached[f])
            if on_result:
                on_result(cached[f])
    if cached and progress:
        progress(len(cached), total)
    todo = [f for f in files if f not in cached]
    fresh = _summarize_all(todo, workers, kb_dirs, progress, on_result, done=len(cached), total=total)
    if cache:
        cache.put_many([r for r in fresh if "error" not in r])
        if own_cache:
            cache.close()
    order = {f: i for i, f in enumerate(files)}
    results = sorted(results + fresh, key=lambda r: order.get(r["file"], 0))
    for r in results:
        if "error" in r:
            fleet.problems.append((r["file"], r["error"]))
        else:
            fleet.hosts.append(r)
    from .compare import compare

    compare(fleet.hosts)
    return fleet


def _summarize_all(files: list[str], workers: int, kb_dirs: Iterable[str], progress: Progress,
                   on_result: Optional[Callable[[dict[str, Any]], None]], done: int, total: int) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    if not files:
        return results
    if workers <= 1 or len(files) < 8:
        _init_worker(tuple(kb_dirs))
        for i, f in enumerate(files, 1):
            results.append(_compact(summarize_file(f)))
            if on_result:
                on_result(results[-1])
            if progress:
                progress(done + i, total)
        return results
    chunk = max(1, min(16, len(files) // (workers * 8) or 1))  # small: a screen shows the first hosts early
    with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(tuple(kb_dirs),)) as pool:
        for i, r in enumerate(pool.map(summarize_file, files, chunksize=chunk), 1):
            r = _compact(r)
            results.append(r)
            if on_result:
                on_result(r)
            if progress and (i % chunk == 0 or i == len(files)):
                progress(done + i, total)
    return results
