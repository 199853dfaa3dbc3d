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


def answer(kb, text, findings=()):
    """The bundled-KB answer to a text as (class, confidence, benign, entry id), best first."""
    from p2ptop.knowledge import match

    return [(m.entry.failure_class, m.confidence, m.entry.benign, m.entry.id) for m in match(kb, text, findings)]


def alarms(kb, text):
    """Failure entries offered as likely or possible (what a healthy text must not get)."""
    return [a for a in answer(kb, text) if a[1] in ("likely", "possible") and not a[2]]


def top3(kb, text):
    return [a[0] for a in answer(kb, text)[:3]]
