"""Leave-one-thread-out on the dev part: how the diagnosis does on a thread the knowledge base was NOT
written from, measured without the holdout.

For every dev case with a fault class, the entries that cite the case's thread (a URL in their sources,
examples, dead ends or workarounds equal to or inside the thread) are removed from the knowledge base,
and explain runs on the case's text with the rest. What is left can only name the class through other
entries of the same class: their regexes, their fact rules, the leads and the retrieval fallback. So the
figures say how well the general mechanisms carry to a new thread, not how well rules fit their own.

Cases whose class has no entry left once its thread's entries are gone cannot be answered right; they
are counted apart ("no entry left").

    python benchmarks/eval_leave_thread_out.py [--show-cases] [--json]

Reads benchmarks/corpus/dev only (the holdout stays aside).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import eval_diagnosis as ed  # noqa: E402
from split import thread_of  # noqa: E402


def cites(entry, thread: str) -> bool:
    urls = ed.URL.findall(json.dumps({k: entry.data.get(k) for k in ("sources", "examples", "dead_ends", "workarounds")},
                                     ensure_ascii=False))
    return any(thread == thread_of(u) or thread in u for u in urls)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--show-cases", action="store_true")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    from p2ptop.knowledge.loader import KnowledgeBase

    kb = ed.load_knowledge()
    rows = []
    for case in ed.load_cases(("dev",)):
        if case["class"] in (ed.NO_FAULT, ed.NO_CLASS):
            continue
        thread = thread_of(case["source_url"])
        keep = [e for e in kb.entries if thread.startswith("capture:") or not cites(e, thread)]
        left = KnowledgeBase(entries=keep) if len(keep) != len(kb.entries) else kb
        answer = ed.diagnose(left, case["text"])
        classes = [a["failure_class"] for a in answer]
        rows.append({"id": case["id"], "kind": case["kind"], "class": case["class"],
                     "removed": len(kb.entries) - len(keep),
                     "left": any(e.failure_class == case["class"] for e in keep),
                     "top1": classes[:1] == [case["class"]], "top3": case["class"] in classes[:3],
                     "empty": not answer, "answer": [f"{a['failure_class']}:{a['confidence']}" for a in answer[:3]]})
    groups = defaultdict(list)
    for r in rows:
        if r["left"]:
            groups["all (an entry of the class is left)"].append(r)
            groups[f"kind: {r['kind']}"].append(r)
            groups["thread cited by the KB (its entries removed)" if r["removed"] else "thread not cited by the KB"].append(r)
        else:
            groups["no entry of the class left"].append(r)
    if args.json:
        print(json.dumps({"cases": rows}, indent=1))
        return 0
    print("Leave-one-thread-out on dev (the entries citing a case's thread removed)\n")
    print("| cases | n | top-1 | top-3 | empty |\n| --- | --- | --- | --- | --- |")
    for name in sorted(groups, key=lambda k: (not k.startswith("all"), k.startswith("no entry"), k)):
        rs = groups[name]
        n = len(rs)
        f = lambda k: f"{100 * sum(r[k] for r in rs) / n:.0f} % ({sum(r[k] for r in rs)}/{n})"
        print(f"| {name} | {n} | {f('top1')} | {f('top3')} | {f('empty')} |")
    if args.show_cases:
        print()
        for r in rows:
            mark = "ok" if r["top3"] else ("  " if not r["left"] else "--")
            print(f"  {mark} {r['id']} [{r['kind']}, -{r['removed']}]: {r['class']} <- {', '.join(r['answer']) or '(empty)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
