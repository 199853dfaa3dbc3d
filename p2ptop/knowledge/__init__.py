"""The knowledge base: entries in kb/ (and the user's), their validation, lint and the matcher.

    load_kb(extra_dirs=()) -> KnowledgeBase      # built-in kb/, user config dir, then --kb dirs
    match(kb, text=None, findings=(), top=None) -> list[Match]

No UI and no hardware here: the matcher reads text and findings only.
"""

from .entry import BENIGN_CLASSES, FAILURE_CLASSES, LANGS, VERIFICATION_TIERS, Entry, Problem

#: the loader and the matcher are imported on first use: the text readers import p2ptop.knowledge.regex_safety (and codes),
#: and a command that reads a paste without matching it (``p2ptop import``) need not compile the matcher's patterns
_LAZY = {"KnowledgeBase": "loader", "load_kb": "loader", "load_paths": "loader", "read_entry": "loader",
         "Match": "matcher", "match": "matcher"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "BENIGN_CLASSES", "FAILURE_CLASSES", "LANGS", "VERIFICATION_TIERS", "Entry", "Problem",
    "KnowledgeBase", "load_kb", "load_paths", "read_entry", "Match", "match",
]
