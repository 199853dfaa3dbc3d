"""The knowledge base: entries in kb/ (and the user's), their validation, lint and the matcher.

    load_kb(extra_dirs=()) -> KnowledgeBase      # built-in kb/, user config dir, then --kb dirs
    match(kb, text=None, findings=(), top=None) -> list[Match]

No UI and no hardware here: the matcher reads text and findings only.
"""

from .entry import BENIGN_CLASSES, FAILURE_CLASSES, LANGS, VERIFICATION_TIERS, Entry, Problem
from .loader import KnowledgeBase, load_kb, load_paths, read_entry
from .matcher import Match, match

__all__ = [
    "BENIGN_CLASSES", "FAILURE_CLASSES", "LANGS", "VERIFICATION_TIERS", "Entry", "Problem",
    "KnowledgeBase", "load_kb", "load_paths", "read_entry", "Match", "match",
]
