"""Validation of one entry against kb/entry.schema.json, plus what a JSON Schema cannot say:
regexes that do not compile or can backtrack catastrophically, and conditions on unknown facts."""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Iterator


from ..findings import FACT_KEYS
from .regex_safety import compile_pattern, nested_repeat
from .paths import builtin_dir

SCHEMA_FILE = "entry.schema.json"
#: Pseudo-facts a condition may test: the ids of the findings (e.g. "pcie.idle_downclock"), and the
#: whole log (a ``regex`` searched across all lines, e.g. for "NCCL version 2.29.7").
FINDING_FACT = "finding"
LOG_FACT = "log"
#: Fact families whose keys are open-ended (env.NCCL_P2P_LEVEL, ...).
OPEN_PREFIXES = ("env.",)


@functools.lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    with open(builtin_dir() / SCHEMA_FILE, encoding="utf-8") as f:
        return json.load(f)


@functools.lru_cache(maxsize=1)
def _validator() -> "jsonschema.protocols.Validator":  # noqa: F821
    import jsonschema  # here: `p2ptop --help` and commands without the KB do not pay for it

    s = schema()
    cls = jsonschema.validators.validator_for(s)
    return cls(s)


def _path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def known_fact(name: str) -> bool:
    return name in (FINDING_FACT, LOG_FACT) or name in FACT_KEYS or name.startswith(OPEN_PREFIXES)


def entry_patterns(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, pattern) for every regex an entry carries, in matching order."""
    out = []
    if isinstance(data.get("regex"), str) and data["regex"]:
        out.append(("regex", data["regex"]))
    for i, p in enumerate(data.get("regexes") or []):
        if isinstance(p, str):
            out.append((f"regexes[{i}]", p))
    for field, c in _conditions(data):
        if isinstance(c.get("regex"), str):
            out.append((f"{field}.regex", c["regex"]))
    return out


def _conditions(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(field, condition) for every condition of an entry's match, in order, a doubt's ``unless`` conditions included."""
    match = data.get("match")
    if not isinstance(match, dict):
        return
    for part in ("require", "trigger", "support", "exclude", "doubt"):
        conds = match.get(part) or []
        for i, c in enumerate(conds if isinstance(conds, list) else []):
            if not isinstance(c, dict):
                continue
            yield f"match.{part}[{i}]", c
            unless = c.get("unless")
            for j, u in enumerate(unless if isinstance(unless, list) else []):
                if isinstance(u, dict):
                    yield f"match.{part}[{i}].unless[{j}]", u


def validate(data: Any) -> list[tuple[str, str]]:
    """(field, message) for each problem of one entry; empty when it is valid."""
    if not isinstance(data, dict):
        return [("", f"an entry is a JSON object, not {type(data).__name__}")]
    problems: list[tuple[str, str]] = []
    for err in sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        field = _path(err.absolute_path)
        if err.validator == "required":
            missing = [m for m in re.findall(r"'([^']+)' is a required property", err.message)]
            for m in missing or [err.message]:
                problems.append((_path(list(err.absolute_path) + [m]), "missing required field"))
        elif err.validator == "enum" and field == "failure_class":
            problems.append((field, f"unknown failure class {err.instance!r} (known: {', '.join(sorted(err.validator_value))})"))
        elif err.validator == "oneOf":
            problems.append((field, "a condition needs exactly one operator: equals, in, not_in, lt, lte, gt, gte, present or regex"))
        else:
            problems.append((field, err.message))
    for field, pattern in entry_patterns(data):
        try:
            compile_pattern(pattern)
        except re.error as e:
            problems.append((field, f"invalid regex: {e}"))
            continue
        slow = nested_repeat(pattern)
        if slow:
            problems.append((field, f"regex rejected: {slow}"))
    for field, c in _conditions(data):
        if isinstance(c.get("fact"), str) and not known_fact(c["fact"]):
            problems.append((f"{field}.fact", f"unknown fact {c['fact']!r} (see p2ptop/findings.py FACT_KEYS)"))
        elif c.get("fact") == LOG_FACT and "regex" not in c:
            problems.append((field, "a condition on the log needs a regex"))
    zh = data.get("workarounds_zh")
    if isinstance(zh, list) and isinstance(data.get("workarounds"), list) and zh and len(zh) != len(data["workarounds"]):
        problems.append(("workarounds_zh", f"{len(zh)} translations for {len(data['workarounds'])} workarounds"))
    return problems
