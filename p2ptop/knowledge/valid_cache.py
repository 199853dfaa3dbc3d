"""Entries already validated, remembered across runs by their text's hash, so a command that loads the
knowledge base (``doctor``, ``explain``) does not import jsonschema and validate 70 unchanged files each
time (0.2-0.3 s). The key covers the entry's text, the schema's text and the fact names a condition may
test (p2ptop.findings.FACT_KEYS): a change to any of them validates again. Only entries that passed are
remembered; a broken file is validated, and its problems reported, every time. The cache is a plain JSON
list in $XDG_CACHE_HOME/p2ptop (or ~/.cache/p2ptop; P2PTOP_CACHE_DIR overrides); one that cannot be read or
written is ignored (everything is validated, as before)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Optional

FILE = "kb-valid.json"
KEEP = 2000  # at most this many hashes are kept


def cache_dir() -> Path:
    d = os.environ.get("P2PTOP_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "p2ptop"


class ValidCache:
    def __init__(self, path: Optional[Path] = None):
        self.path = path or cache_dir() / FILE
        self._salt: Optional[bytes] = None
        self._known: Optional[set[str]] = None
        self._added: list[str] = []

    def _salt_bytes(self) -> bytes:
        if self._salt is None:
            from ..findings import FACT_KEYS
            from .paths import builtin_dir
            from .schema import SCHEMA_FILE

            try:
                schema = (builtin_dir() / SCHEMA_FILE).read_bytes()
            except OSError:
                schema = b""
            self._salt = schema + b"\0" + "\n".join(sorted(FACT_KEYS)).encode() + b"\0"
        return self._salt

    def key(self, text: str) -> str:
        return hashlib.sha256(self._salt_bytes() + text.encode("utf-8", "replace")).hexdigest()

    def _load(self) -> set[str]:
        if self._known is None:
            try:
                with open(self.path, encoding="utf-8") as f:
                    data = json.load(f)
                self._known = {k for k in data if isinstance(k, str)} if isinstance(data, list) else set()
            except (OSError, ValueError):
                self._known = set()
        return self._known

    def known(self, text: str) -> bool:
        return self.key(text) in self._load()

    def add(self, text: str) -> None:
        k = self.key(text)
        if k not in self._load():
            self._known.add(k)  # type: ignore[union-attr]
            self._added.append(k)

    def save(self) -> None:
        """Write the new hashes (atomically); any failure leaves the cache as it was."""
        if not self._added:
            return
        keys = sorted(self._load())[-KEEP:]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{FILE}.{os.getpid()}")
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(keys, f)
            os.replace(tmp, self.path)
            self._added = []
        except OSError:
            pass
