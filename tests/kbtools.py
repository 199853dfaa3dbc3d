"""A knowledge base of test entries built from a real entry of the bundled KB (for matcher tests)."""

from __future__ import annotations

import copy
import json

from p2ptop.knowledge.loader import load_paths


def kb_from(base_entry, tmp_path, **entries):
    """One entry per keyword, ``test/NAME``: ``base_entry``'s data with its regexes, codes and examples
    cleared and ``changes`` applied; loaded from ``tmp_path``, which must load without problems."""
    base = copy.deepcopy(base_entry.data)
    for name, changes in entries.items():
        d = dict(base, id=f"test/{name}", examples=[], transition_graph={}, error_codes=[], error_code=None)
        d.update({"regex": "", "regexes": [], **changes})
        (tmp_path / f"{name}.json").write_text(json.dumps(d), encoding="utf-8")
    kb = load_paths([tmp_path])
    assert kb.problems == []
    return kb
