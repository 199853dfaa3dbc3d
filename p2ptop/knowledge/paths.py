"""Where knowledge-base files live: built in, the user's config directory, and --kb directories."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def builtin_dir() -> Path:
    """kb/ beside the package in a source checkout, or the copy installed as package data."""
    for candidate in (_PACKAGE.parent / "kb", _PACKAGE / "kb"):
        if (candidate / "entry.schema.json").is_file():
            return candidate
    return _PACKAGE.parent / "kb"


def user_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "p2ptop" / "kb"
