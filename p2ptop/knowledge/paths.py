"""Where knowledge-base files live: built in, the user's config directory, and --kb directories."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def builtin_dir() -> Path:
    """The entries shipped with p2ptop: p2ptop/kb (package data; in a source checkout a link to the
    top-level kb/), else the top-level kb/ itself."""
    for candidate in (_PACKAGE / "kb", _PACKAGE.parent / "kb"):
        if (candidate / "entry.schema.json").is_file():
            return candidate
    return _PACKAGE.parent / "kb"


def user_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "p2ptop" / "kb"
