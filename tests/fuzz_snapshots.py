"""Seeded mutations of the demo snapshots (and of logs), shared by the fuzz test and a longer manual run.

``python -m tests.fuzz_snapshots N SEED`` runs N mutated snapshots through topo, doctor and report and
prints every traceback; the test runs a smaller number in CI time.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import sys
import traceback

from p2ptop.demos import DEMOS, demo_path

COMMANDS = (["topo"], ["doctor"], ["report"])
SMALL_DEMOS = [d for d in DEMOS if d != "nvl72"]


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def _random_value(rng: random.Random, depth: int = 0):
    choice = rng.randrange(12)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, -1, 7, 2**63, 99])
    if choice == 3:
        return rng.choice([0.5, -3.25, 1e308])
    if choice == 4:
        return rng.choice(["", "x", "OK", "GPU-\x1b[31mred", "[bold]markup[/]", "9999", "0000:ff:ff.0", "\u202e"])
    if choice == 5:
        return [] if depth > 2 else [_random_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    if choice == 6:
        return {} if depth > 2 else {rng.choice(["value", "how", "na", "x", "gpu", "bridge", "xid"]): _random_value(rng, depth + 1) for _ in range(rng.randrange(3))}
    if choice == 7:  # deeply nested: put in as text after json.dumps (json itself cannot write it)
        return f"__DEEP_{rng.choice([40, 500, 5000, 100000])}__"
    if choice == 8:
        return {"value": _random_value(rng, depth + 1), "how": "fuzz", "na": None}
    if choice == 9:
        return [{"xid": _random_value(rng, 3), "pci": _random_value(rng, 3), "text": _random_value(rng, 3)}]
    if choice == 10:
        return [{"bridge": _random_value(rng, 3), "role": "x", "gpu": _random_value(rng, 3), "redirect": True, "acs": None, "how": "f", "acs_ctrl": _random_value(rng, 3)}]
    return rng.randrange(-2, 80)


def mutate(doc: dict, rng: random.Random) -> str:
    """One mutation of a snapshot document; returns the file text (sometimes truncated)."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.choice([1, 1, 2, 3])):
        paths = [p for p in _paths(doc) if p]
        path = rng.choice(paths)
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        op = rng.randrange(5)
        if op == 0 and isinstance(parent, dict):
            del parent[key]
        elif op == 1 and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
        elif op == 2 and isinstance(parent[key], int) and not isinstance(parent[key], bool):
            parent[key] = rng.choice([parent[key] + 1, 99, -1])
        else:
            parent[key] = _random_value(rng)
    text = json.dumps(doc)
    for n in (40, 500, 5000, 100000):
        text = text.replace(f'"__DEEP_{n}__"', "[" * n + "1" + "]" * n)
    if rng.random() < 0.05:
        text = text[: rng.randrange(len(text))]
    return text


def run_one(path: str, command: list[str]) -> str | None:
    """The traceback text if the command raised, else None."""
    from p2ptop.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(command + ["--replay", path])
    except SystemExit:
        pass
    except BaseException:  # noqa: BLE001 - the point is to see every one
        return traceback.format_exc()
    return None


def campaign(n: int, seed: int, tmpdir: str):
    import os

    rng = random.Random(seed)
    docs = {d: json.load(open(demo_path(d), encoding="utf-8")) for d in SMALL_DEMOS}
    failures = []
    for i in range(n):
        demo = rng.choice(SMALL_DEMOS)
        text = mutate(docs[demo], rng)
        path = os.path.join(tmpdir, f"mut{i}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        for cmd in COMMANDS:
            tb = run_one(path, cmd)
            if tb:
                failures.append((i, demo, cmd[0], tb))
    return failures


if __name__ == "__main__":  # pragma: no cover
    import tempfile

    n, seed = int(sys.argv[1]), int(sys.argv[2])
    with tempfile.TemporaryDirectory() as d:
        fails = campaign(n, seed, d)
    for i, demo, cmd, tb in fails:
        print(f"--- mutation {i} of {demo}, {cmd}\n{tb.strip().splitlines()[-1]}\n{''.join(tb.strip().splitlines(True)[-4:-1])}")
    print(f"{len(fails)} tracebacks in {n * len(COMMANDS)} runs")
