"""Host summaries kept between runs (``$XDG_CACHE_HOME/p2ptop/fleet.sqlite``), so opening the same fleet
again costs a lookup per file instead of a parse and a diagnosis.

A summary is reused only for the same file (absolute path, size, modification time), the same p2ptop
(version and :data:`SUMMARY_VERSION`) and the same knowledge base (its files' names, sizes and times). The
comparison with siblings is never cached: it depends on the other hosts. A cache that cannot be opened or
written is skipped with no other effect.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any, Iterable, Optional

from .. import __version__

SUMMARY_VERSION = 1  # raise when summary.py changes what a summary holds


def default_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "p2ptop" / "fleet.sqlite"


def fingerprint(kb_dirs: Iterable[str] = ()) -> str:
    """What a summary depends on beyond its file: this code and the knowledge base's files."""
    h = hashlib.sha1(f"{__version__}/{SUMMARY_VERSION}".encode())
    try:
        from ..knowledge.loader import default_dirs, entry_files

        for d in default_dirs(list(kb_dirs)):
            for f in entry_files(d) if d.exists() else []:
                st = f.stat()
                h.update(f"{f}:{st.st_size}:{st.st_mtime_ns}".encode())
    except (ImportError, OSError):
        h.update(b"no-kb")
    return h.hexdigest()


def file_key(path: str) -> Optional[tuple[str, int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return os.path.abspath(path), st.st_size, st.st_mtime_ns


class SummaryCache:
    def __bool__(self) -> bool:
        return self.db is not None

    def __init__(self, path: Optional[Path] = None, kb_dirs: Iterable[str] = ()) -> None:
        self.path = Path(path) if path else default_path()
        self.fp = fingerprint(kb_dirs)
        self.db: Optional[sqlite3.Connection] = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(self.path), timeout=5)
            self.db.execute("CREATE TABLE IF NOT EXISTS summary (path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, fp TEXT, data TEXT)")
        except (OSError, sqlite3.Error):
            self.db = None

    def get_many(self, paths: list[str]) -> dict[str, dict[str, Any]]:
        """path -> summary for the files whose cached summary still holds."""
        if self.db is None or not paths:
            return {}
        keys = {p: file_key(p) for p in paths}
        found: dict[str, dict[str, Any]] = {}
        try:
            rows = {}
            absolute = [k[0] for k in keys.values() if k]
            for i in range(0, len(absolute), 500):
                chunk = absolute[i:i + 500]
                q = f"SELECT path, size, mtime, fp, data FROM summary WHERE path IN ({','.join('?' * len(chunk))})"
                for row in self.db.execute(q, chunk):
                    rows[row[0]] = row
            for p, k in keys.items():
                row = rows.get(k[0]) if k else None
                if row and row[1] == k[1] and row[2] == k[2] and row[3] == self.fp:
                    data = json.loads(row[4])
                    data["file"] = p  # as the user named it
                    found[p] = data
        except (sqlite3.Error, ValueError):
            return {}
        return found

    def put_many(self, summaries: list[dict[str, Any]]) -> None:
        if self.db is None or not summaries:
            return
        rows = []
        for s in summaries:
            k = file_key(s["file"]) if s.get("file") else None
            if k:
                rows.append((k[0], k[1], k[2], self.fp, json.dumps({x: v for x, v in s.items() if x not in ("odd", "odd_links", "siblings")})))
        try:
            with self.db:
                self.db.executemany("INSERT OR REPLACE INTO summary (path, size, mtime, fp, data) VALUES (?, ?, ?, ?, ?)", rows)
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
