"""How the evaluation corpus is split into dev and holdout: by thread, with a fixed seed.

The split was fixed before any case was run through p2ptop. A case's part depends only on its
thread (the source URL without fragment, query or trailing slash), so every case of one thread
lands in the same part. tests/test_corpus.py checks that each file sits where this function says.
"""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit, urlunsplit

SEED = "p2ptop-corpus-2026-11-24"
HOLDOUT_FRACTION = 0.4
PARTS = ("dev", "holdout")


def thread_of(url: str) -> str:
    """The thread a case comes from: its URL without fragment, query and trailing slash; host in lower case.

    ``capture:HOST/FILE`` (a capture under ../shared/captures) belongs to the thread of its host."""
    parts = urlsplit(url.strip())
    if parts.scheme == "capture":  # a real capture of the project's hosts: one thread per host
        return "capture:" + parts.path.strip("/").split("/")[0]
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def split_of(url: str) -> str:
    """'holdout' for about HOLDOUT_FRACTION of threads, 'dev' for the rest, fixed by SEED."""
    digest = hashlib.sha256(f"{SEED}|{thread_of(url)}".encode()).hexdigest()
    return "holdout" if int(digest[:8], 16) / 2**32 < HOLDOUT_FRACTION else "dev"
