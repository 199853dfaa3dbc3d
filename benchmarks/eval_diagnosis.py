"""Measure how well p2ptop's text diagnosis names the cause of real cases from public threads.

Runs p2ptop's explain logic in process (text only, no host) on every case of the evaluation corpus
(benchmarks/corpus/dev, holdout and the collected parts fresh to fresh88: split.PARTS, see benchmarks/corpus/README.md) and prints:

- top-1 / top-3: the case's class is the failure_class of the first / one of the first three entries
  (over cases with a fault class, i.e. not ``none`` and not ``other``);
- top-1 offered: the first entry is of the case's class AND marked likely or possible (an answer, not an unsure
  lead): how often the diagnosis says the right thing with confidence;
- empty: share of cases whose text mentions GPUs and that got no entry at all (over cases other than
  ``none``: a healthy text may rightly get no failure entry);
- false alarm: share of ``none`` cases (healthy logs, clean tool runs) answered with any failure entry
  marked likely or possible;
- for ``other`` cases (a P2P problem the knowledge base has no class for), the share answered with an
  entry marked likely or possible ("confident", which is wrong there);

per part (each of split.PARTS its own section), per class, per kind, and for cases whose thread the knowledge base cites
(any URL in kb/*.json sources/examples equal to or containing the thread's URL) vs not.

    python benchmarks/eval_diagnosis.py [--split dev|holdout|fresh|fresh2|...|fresh88|all] [--json] [--show-cases]

The holdout and the collected parts (fresh to fresh88) are kept aside from the people writing rules: look at their figures, never
at their cases, when changing the knowledge base or the text evidence. ``--show-cases`` lists dev's
cases only, unless --split names another part explicitly.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
from collections import defaultdict
from typing import Any, Iterable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CORPUS = os.path.join(HERE, "corpus")
sys.path.insert(0, REPO)
sys.path.insert(0, CORPUS)

from split import PARTS, thread_of  # noqa: E402  (benchmarks/corpus/split.py: the parts, in the order collected)

NO_FAULT, NO_CLASS = "none", "other"
CONFIDENT = ("likely", "possible")
MENTIONS_GPU = re.compile(
    r"gpu|cuda|nccl|nvidia|nvlink|nvswitch|geforce|tesla|quadro|\brtx|\b[ahlbv]\d{2,3}\b|h20\b|p2p|peer|"
    r"nvidia-smi|fabric ?manager|显卡|显存", re.IGNORECASE)
URL = re.compile(r"https?://[^\s\"'<>)\]]+")


# --- the one place that calls p2ptop: adapt here if the explain API changes -------------------------
def load_knowledge():
    from p2ptop.knowledge import load_kb
    return load_kb()


def diagnose(kb, text: str) -> list[dict[str, Any]]:
    """What `p2ptop explain --text-only --json` would rank for this text: one dict per entry, best first,
    with failure_class, confidence (likely/possible/unsure) and benign."""
    from p2ptop.commands.explain import explain
    from p2ptop.knowledge.entry import BENIGN_CLASSES
    out = []
    for m, _label in explain(kb, text, [], None):
        d = m.to_dict()
        d["benign"] = bool(getattr(m.entry, "benign", False)) or d["failure_class"] in BENIGN_CLASSES
        out.append(d)
    return out
# ------------------------------------------------------------------------------------------------------


def load_cases(parts: Iterable[str] = PARTS, corpus: str = CORPUS) -> list[dict[str, Any]]:
    cases = []
    for part in parts:
        for path in sorted(glob.glob(os.path.join(corpus, part, "*.json"))):
            with open(path, encoding="utf-8") as f:
                case = json.load(f)
            case["part"] = part
            case["file"] = os.path.relpath(path, REPO)
            cases.append(case)
    return cases


def kb_urls(kb_dir: str = os.path.join(REPO, "kb")) -> set[str]:
    """Every URL the knowledge base cites in an entry's sources or examples."""
    urls: set[str] = set()
    for path in glob.glob(os.path.join(kb_dir, "*.json")):
        try:
            with open(path, encoding="utf-8") as f:
                entry = json.load(f)
        except (OSError, ValueError):
            continue
        if not isinstance(entry, dict):
            continue
        for field in ("sources", "examples"):
            urls.update(URL.findall(json.dumps(entry.get(field, []), ensure_ascii=False)))
    return urls


def is_cited(url: str, cited: set[str]) -> bool:
    thread = thread_of(url)
    if thread.startswith("capture:"):
        return False
    return any(thread == thread_of(u) or thread in u for u in cited)


def judge(case: dict[str, Any], answer: list[dict[str, Any]]) -> dict[str, Any]:
    classes = [a["failure_class"] for a in answer]
    confident_faults = [a for a in answer if a["confidence"] in CONFIDENT and not a["benign"]]
    r: dict[str, Any] = {
        "id": case["id"], "part": case["part"], "class": case["class"], "kind": case["kind"], "lang": case["lang"],
        "answer": [f"{a['failure_class']}:{a['confidence']}" for a in answer[:3]],
        "empty": not answer, "mentions_gpu": bool(MENTIONS_GPU.search(case["text"])),
    }
    if case["class"] == NO_FAULT:
        r["false_alarm"] = bool(confident_faults)
        # any failure entry at all, unsure leads included: a healthy text is best answered with none
        r["leads"] = any(not a["benign"] for a in answer)
    elif case["class"] == NO_CLASS:
        r["confident"] = bool(confident_faults)
    else:
        r["top1"] = classes[:1] == [case["class"]]
        r["top3"] = case["class"] in classes[:3]
        r["top1_offered"] = r["top1"] and answer[0]["confidence"] in CONFIDENT
    return r


def evaluate(cases: list[dict[str, Any]], kb=None, cited: Optional[set[str]] = None) -> list[dict[str, Any]]:
    kb = kb if kb is not None else load_knowledge()
    cited = cited if cited is not None else kb_urls()
    results = []
    for case in cases:
        r = judge(case, diagnose(kb, case["text"]))
        r["kb_cited"] = is_cited(case["source_url"], cited)
        results.append(r)
    return results


def _rate(rs: list[dict[str, Any]], key: str, where=lambda r: True) -> Optional[tuple[int, int]]:
    sel = [r for r in rs if key in r and where(r)]
    return (sum(bool(r[key]) for r in sel), len(sel)) if sel else None


def summarize(rs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "n": len(rs),
        "top1": _rate(rs, "top1"), "top3": _rate(rs, "top3"), "top1_offered": _rate(rs, "top1_offered"),
        "empty_gpu": _rate(rs, "empty", lambda r: r["mentions_gpu"] and r["class"] != NO_FAULT),
        "false_alarm": _rate(rs, "false_alarm"), "healthy_leads": _rate(rs, "leads"),
        "other_confident": _rate(rs, "confident"),
    }


def groups(rs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Figures for the whole part, each kind, KB-cited or not, each class."""
    out: dict[str, dict[str, Any]] = {"all": summarize(rs)}
    by: dict[str, list] = defaultdict(list)
    for r in rs:
        by[f"kind: {r['kind']}"].append(r)
    for r in rs:
        by["thread cited by the KB" if r["kb_cited"] else "thread not cited by the KB"].append(r)
    for r in rs:
        by[f"lang: {r['lang']}"].append(r)
    for r in rs:
        by[f"class: {r['class']}"].append(r)
    for key in sorted(by, key=lambda k: (k.split(":")[0] == "class", k)):
        out[key] = summarize(by[key])
    return out


def _fmt(x: Optional[tuple[int, int]]) -> str:
    if not x:
        return "–"
    k, n = x
    return f"{100 * k / n:.0f} % ({k}/{n})"


def markdown(part: str, table: dict[str, dict[str, Any]]) -> str:
    lines = [f"**{part}**", "",
             "| cases | n | top-1 | top-3 | top-1 offered (likely/possible) | empty (text names GPUs) | false alarm (`none`) "
             "| `none` given any lead | confident on `other` |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, s in table.items():
        lines.append(f"| {name} | {s['n']} | {_fmt(s['top1'])} | {_fmt(s['top3'])} | {_fmt(s.get('top1_offered'))} | {_fmt(s['empty_gpu'])} "
                     f"| {_fmt(s['false_alarm'])} | {_fmt(s.get('healthy_leads'))} | {_fmt(s['other_confident'])} |")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--split", choices=PARTS + ("all",), default="all", help="which part(s) to run (default: all, each reported separately)")
    p.add_argument("--json", action="store_true", help="print JSON: figures per part and group, and every case's answer")
    p.add_argument("--show-cases", action="store_true", help="also list each case's expected class and top-3 answer (dev only, unless --split names another part)")
    p.add_argument("--corpus", default=CORPUS, help="corpus directory holding one folder per part (dev/, holdout/, fresh/ ... fresh88/)")
    p.add_argument("--limit", type=int, default=0, help="run only the first N cases of each part (for smoke tests)")
    args = p.parse_args(argv)
    parts = PARTS if args.split == "all" else (args.split,)
    kb, cited = load_knowledge(), kb_urls()
    report: dict[str, Any] = {"kb_entries": len(kb.entries), "parts": {}}
    for part in parts:
        cases = load_cases((part,), args.corpus)
        if args.limit:
            cases = cases[: args.limit]
        if not cases:
            print(f"no cases in {os.path.join(args.corpus, part)}", file=sys.stderr)
            return 2
        rs = evaluate(cases, kb, cited)
        report["parts"][part] = {"groups": groups(rs), "cases": rs}
    if args.json:
        print(json.dumps(report, indent=1, ensure_ascii=False))
        return 0
    print(f"p2ptop text diagnosis on the evaluation corpus ({report['kb_entries']} KB entries)\n")
    for part, data in report["parts"].items():
        print(markdown(part, data["groups"]))
        print()
        if args.show_cases and (part == "dev" or args.split == part):
            for r in data["cases"]:
                mark = {True: "ok", False: "--"}.get(r.get("top3", not r.get("false_alarm", r.get("confident", False))))
                print(f"  {mark} {r['id']}: {r['class']} <- {', '.join(r['answer']) or '(empty)'}")
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
