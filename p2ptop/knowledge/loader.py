"""Loading entries: each file read, parsed and validated on its own; a broken one becomes a
:class:`Problem` and is skipped, the others load. Later sources override earlier ones by id."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Union

from .entry import Entry, Problem
from .paths import builtin_dir, user_dir
from .regex_safety import TIME_LIMIT_S, compile_pattern, slow_patterns
from .schema import SCHEMA_FILE, entry_patterns, validate
from .valid_cache import ValidCache

PathLike = Union[str, Path]


@dataclass
class KnowledgeBase:
    entries: list[Entry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def get(self, id: str) -> Optional[Entry]:
        for e in self.entries:
            if e.id == id:
                return e
        return None

    def ids(self) -> list[str]:
        return [e.id for e in self.entries]


def entry_files(path: PathLike) -> list[Path]:
    """The entry files a path names: the file itself, or a directory's *.json (not the schema), sorted."""
    p = Path(path)
    if p.is_dir():
        return sorted(f for f in p.glob("*.json") if f.name != SCHEMA_FILE and not f.name.endswith(".schema.json"))
    return [p]


def read_entry(path: PathLike, valid: Optional[ValidCache] = None) -> tuple[Optional[Entry], list[Problem]]:
    """One file: the entry, or None and what is wrong with it. ``valid``: entries that passed validation
    before, unchanged (p2ptop.knowledge.valid_cache), are not validated again."""
    name = str(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        return None, [Problem(name, "", f"cannot read: {e}")]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return None, [Problem(name, "", f"broken JSON: {e.msg} at line {e.lineno} column {e.colno}")]
    if valid is not None and isinstance(data, dict) and valid.known(text):
        problems = []
    else:
        problems = [Problem(name, f, m) for f, m in validate(data)]
    if problems:
        return None, problems
    if valid is not None:
        valid.add(text)
    return Entry(data=data, file=name, patterns=[compile_pattern(p) for f, p in entry_patterns(data) if not f.startswith("match.")]), []


def slow_regex_problems(entries: list[Entry], time_limit_s: float = TIME_LIMIT_S) -> list[Problem]:
    """A problem for every regex of ``entries`` that is too slow on adversarial lines (timed in a worker)."""
    where = [(e, field, p) for e in entries for field, p in entry_patterns(e.data)]
    slow = slow_patterns([p for _e, _f, p in where], time_limit_s) if where else set()
    return [Problem(e.file, field, f"regex rejected: slower than {time_limit_s:g} s on an adversarial line (catastrophic backtracking)")
            for e, field, p in where if p in slow]


def load_paths(paths: Iterable[PathLike], kb: Optional[KnowledgeBase] = None, timed: bool = False) -> KnowledgeBase:
    """Add the entries of ``paths`` (files or directories) to ``kb``; an id seen again replaces the
    earlier entry when it comes from another source, and is a duplicate-id problem within one.
    ``timed`` also runs each regex against adversarial lines (a second or so) and skips entries with
    a slow one: for entries nobody has linted, such as users' own."""
    kb = kb or KnowledgeBase()
    for path in paths:
        if not os.path.exists(path):
            kb.problems.append(Problem(str(path), "", "no such file or directory"))
            continue
        valid = ValidCache()
        read = [(f, *read_entry(f, valid)) for f in entry_files(path)]
        valid.save()
        slow = slow_regex_problems([e for _f, e, _p in read if e is not None]) if timed else []
        kb.problems.extend(slow)
        rejected = {p.file for p in slow}
        here: dict[str, str] = {}
        for f, entry, problems in read:
            kb.problems.extend(problems)
            if entry is None or str(f) in rejected:
                continue
            if entry.id in here:
                kb.problems.append(Problem(str(f), "id", f"duplicate id {entry.id!r} (also in {here[entry.id]}); this file is skipped"))
                continue
            here[entry.id] = str(f)
            old = kb.get(entry.id)
            if old is not None:
                kb.entries[kb.entries.index(old)] = entry
            else:
                kb.entries.append(entry)
    return kb


def default_dirs(extra_dirs: Iterable[PathLike] = ()) -> list[Path]:
    dirs = [builtin_dir()]
    if user_dir().is_dir():
        dirs.append(user_dir())
    dirs.extend(Path(d) for d in extra_dirs)
    return dirs


def load_kb(extra_dirs: Iterable[PathLike] = ()) -> KnowledgeBase:
    """The built-in kb/, then the user config dir (~/.config/p2ptop/kb or $XDG_CONFIG_HOME/p2ptop/kb),
    then ``extra_dirs`` (--kb DIR); later ones override earlier ones by id. The built-in entries are
    linted by the test suite; the others get the timed regex check here."""
    dirs = default_dirs(extra_dirs)
    kb = load_paths(dirs[:1])
    return load_paths(dirs[1:], kb, timed=True)
