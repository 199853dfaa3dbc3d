"""``kb lint``: every problem of a set of KB files, each with file, field and message.

Beyond what loading checks (JSON, schema, regexes that do not compile or nest unbounded repeats,
unknown facts and failure classes), lint runs each regex against adversarial lines in a worker with
a time limit, reports ids used twice in the set, transition_graph links to unknown ids, and
examples that do not match their own entry.
"""

from __future__ import annotations

from typing import Iterable, Optional

from ..findings import Finding
from .entry import Entry, Problem
from .loader import KnowledgeBase, PathLike, entry_files, load_kb, read_entry, slow_regex_problems
from .matcher import match
from .regex_safety import TIME_LIMIT_S


def example_findings(example: dict) -> list[Finding]:
    """The findings an example's facts stand for; a 'finding' fact names the finding's id."""
    facts = dict(example.get("facts") or {})
    fid = str(facts.pop("finding", "example"))
    return [Finding(fid, "pair:0-1", "problem", "example from the knowledge base", [], facts)] if facts or fid != "example" else []


def lint(paths: Iterable[PathLike], time_limit_s: float = TIME_LIMIT_S, context: Optional[KnowledgeBase] = None) -> list[Problem]:
    """Problems of the entry files named by ``paths``. ``context`` (default: the installed KB) lends
    ids that transition_graph may point to and competitors for the example check."""
    problems: list[Problem] = []
    entries: list[Entry] = []
    seen: dict[str, str] = {}
    for path in paths:
        files = entry_files(path)
        if not files or not all(f.exists() for f in files):
            problems.append(Problem(str(path), "", "no such file or directory, or no *.json entries in it"))
            continue
        for f in files:
            entry, found = read_entry(f)
            problems.extend(found)
            if entry is None:
                continue
            if entry.id in seen:
                problems.append(Problem(str(f), "id", f"duplicate id {entry.id!r} (also in {seen[entry.id]})"))
                continue
            seen[entry.id] = str(f)
            entries.append(entry)
    problems.extend(slow_regex_problems(entries, time_limit_s))
    context = context if context is not None else load_kb()
    known = set(seen) | set(context.ids())
    for e in entries:
        for kind, ids in e.transition_graph.items():
            for i, ref in enumerate(ids):
                if ref not in known:
                    problems.append(Problem(e.file, f"transition_graph.{kind}[{i}]", f"unknown entry id {ref!r}"))
    problems.extend(_examples_unmatched(entries, context))
    return problems


def _examples_unmatched(entries: list[Entry], context: KnowledgeBase) -> list[Problem]:
    kb = KnowledgeBase(entries=list(entries) + [c for c in context.entries if c.id not in {e.id for e in entries}])
    out = []
    for e in entries:
        for i, ex in enumerate(e.examples):
            ids = [m.entry.id for m in match(kb, ex.get("text"), example_findings(ex))]
            if e.id not in ids:
                out.append(Problem(e.file, f"examples[{i}]", "this example does not match its own entry"))
    return out
