"""The evaluation corpus (benchmarks/corpus) is well formed, and the evaluation script runs.

No accuracy thresholds here: the figures are measured by benchmarks/eval_diagnosis.py and recorded in
benchmarks/corpus/README.md.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import sys
from urllib.parse import urlsplit

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "benchmarks", "corpus")
FIELDS = {"id", "source_url", "class", "kind", "lang", "text", "conclusion", "conclusion_source", "certainty", "notes"}
KINDS = {"error", "log", "tool_output", "description"}
FRESH7_MIN = 12  # cases collected in fresh7/ (2026-11-27)
FRESH8_MIN = 10  # cases collected in fresh8/ (2026-11-27)
FRESH9_MIN = 25  # cases collected in fresh9/ (2026-11-27)
FRESH10_MIN = 20  # cases collected in fresh10/ (2026-11-27)
FRESH11_MIN = 20  # cases collected in fresh11/ (2026-11-27)
FRESH12_MIN = 6  # cases collected in fresh12/ (2026-11-27)
FRESH13_MIN = 5  # cases collected in fresh13/ (2026-11-27)
FRESH14_MIN = 16  # cases collected in fresh14/ (2026-11-28)
FRESH15_MIN = 11  # cases collected in fresh15/ (2026-11-28)
FRESH16_MIN = 9  # cases collected in fresh16/ (2026-11-28, second session)
FRESH17_MIN = 7  # cases collected in fresh17/ (2026-11-28, third session)
FRESH18_MIN = 10  # cases collected in fresh18/ (2026-11-28, fourth session)
FRESH19_MIN = 18  # cases collected in fresh19/ (2026-11-28, fifth session)
FRESH20_MIN = 10  # cases collected in fresh20/ (2026-11-28, sixth session)
FRESH21_MIN = 18  # cases collected in fresh21/ (2026-11-28, sixth session)
FRESH22_MIN = 15  # cases collected in fresh22/ (2026-11-28, seventh session)
FRESH23_MIN = 8  # cases collected in fresh23/ (2026-11-28, seventh session)
FRESH24_MIN = 13  # cases collected in fresh24/ (2026-11-28, seventh session)
FRESH25_MIN = 15  # cases collected in fresh25/ (2026-11-29, eighth session)
FRESH26_MIN = 10  # cases collected in fresh26/ (2026-11-29, eighth session)
FRESH27_MIN = 26  # cases collected in fresh27/ (2026-11-29, ninth session)
FRESH28_MIN = 9  # cases collected in fresh28/ (2026-11-29, ninth session)
FRESH29_MIN = 32  # cases collected in fresh29/ (2026-11-29, tenth session)
FRESH30_MIN = 23  # cases collected in fresh30/ (2026-11-29, eleventh session)
FRESH31_MIN = 21  # cases collected in fresh31/ (2026-11-29, twelfth session)
FRESH32_MIN = 11  # cases collected in fresh32/ (2026-11-29, twelfth session, second wave)
FRESH33_MIN = 3  # cases collected in fresh33/ (2026-11-29, twelfth session, third wave)
FRESH34_MIN = 7  # cases collected in fresh34/ (2026-11-29, thirteenth session, first wave)
FRESH35_MIN = 21  # cases collected in fresh35/ (2026-11-29, thirteenth session, second wave)
FRESH36_MIN = 7  # cases collected in fresh36/ (2026-11-29, thirteenth session, third wave)
FRESH37_MIN = 17  # cases collected in fresh37/ (2026-11-29, fourteenth session)
FRESH38_MIN = 4  # cases collected in fresh38/ (2026-11-29, fourteenth session, second wave)
FRESH39_MIN = 10  # cases collected in fresh39/ (2026-11-29, fifteenth session)
FRESH40_MIN = 17  # cases collected in fresh40/ (2026-11-29, seventeenth session)
FRESH41_MIN = 24  # cases collected in fresh41/ (2026-11-29, seventeenth session, second wave)
FRESH42_MIN = 20  # cases collected in fresh42/ (2026-11-29, seventeenth session, third wave)
FRESH44_MIN = 8  # cases collected in fresh44/ (2026-11-29, eighteenth session, second wave)
FRESH45_MIN = 17  # cases collected in fresh45/ (2026-11-29, eighteenth session, third wave)
FRESH46_MIN = 57  # cases collected in fresh46/ (2026-11-30, nineteenth session, first wave)
FRESH47_MIN = 5  # cases collected in fresh47/ (2026-11-30, nineteenth session, second wave)
FRESH48_MIN = 5  # cases collected in fresh48/ (2026-11-30, nineteenth session, third wave)
FRESH49_MIN = 31  # cases collected in fresh49/ (2026-11-30, twentieth session; one AMD ROCm report removed after opening)
FRESH50_MIN = 6  # cases collected in fresh50/ (2026-11-30, twentieth session, third wave)
FRESH51_MIN = 12  # cases collected in fresh51/ (2026-11-30, twenty-first session)
FRESH52_MIN = 5  # cases collected in fresh52/ (2026-11-30, twenty-first session, second wave)
FRESH53_MIN = 19  # cases collected in fresh53/ (2026-11-30, twenty-first session, third wave)
FRESH54_MIN = 19  # cases collected in fresh54/ (2026-11-30, twenty-second session)
FRESH55_MIN = 5  # cases collected in fresh55/ (2026-11-30, twenty-second session, second wave)
FRESH56_MIN = 9  # cases collected in fresh56/ (2026-11-30, twenty-third session)
FRESH57_MIN = 12  # cases collected in fresh57/ (2026-11-30, twenty-third session, second wave)
FRESH58_MIN = 32  # cases collected in fresh58/ (2026-11-30, twenty-third session, third wave)
FRESH59_MIN = 39  # cases collected in fresh59/ (2026-11-30, twenty-fourth session)
FRESH60_MIN = 17  # cases collected in fresh60/ (2026-11-30, twenty-fourth session, second wave)
FRESH61_MIN = 1  # cases collected in fresh61/ (2026-11-30, twenty-fourth session, third wave; the search budget ran out)
FRESH62_MIN = 29  # cases collected in fresh62/ (2026-11-30, twenty-fifth session)
FRESH63_MIN = 6  # cases collected in fresh63/ (2026-11-30, twenty-fifth session, second wave)
FRESH64_MIN = 2  # cases collected in fresh64/ (2026-11-30, twenty-fifth session, third wave)
FRESH65_MIN = 23  # cases collected in fresh65/ (2026-11-30, twenty-sixth session)
FRESH66_MIN = 1  # cases collected in fresh66/ (2026-11-30, twenty-sixth session, second wave)
FRESH67_MIN = 5  # cases collected in fresh67/ (2026-11-30, twenty-sixth session, third wave)
FRESH68_MIN = 17  # cases collected in fresh68/ (2026-11-30, twenty-seventh session)
FRESH69_MIN = 19  # cases collected in fresh69/ (2026-11-30, twenty-seventh session, second wave)
FRESH70_MIN = 15  # cases collected in fresh70/ (2026-11-30, twenty-seventh session, third wave)
FRESH71_MIN = 53  # cases collected in fresh71/ (2026-11-30, twenty-eighth session)
FRESH72_MIN = 41  # cases collected in fresh72/ (2026-11-30, twenty-eighth session, second wave)
FRESH73_MIN = 17  # cases collected in fresh73/ (2026-11-30, twenty-eighth session, third wave)
FRESH74_MIN = 4  # cases collected in fresh74/ (2026-11-30, twenty-eighth session, fourth wave)
FRESH75_MIN = 72  # cases collected in fresh75/ (2026-11-30, twenty-ninth session)
FRESH76_MIN = 21  # cases collected in fresh76/ (2026-11-30, twenty-ninth session)
FRESH77_MIN = 2  # cases collected in fresh77/ (2026-11-30, twenty-ninth session)
FRESH78_MIN = 16  # cases collected in fresh78/ (2026-12-01, thirtieth session)
FRESH79_MIN = 39  # cases collected in fresh79/ (2026-12-01, thirtieth session)
FRESH80_MIN = 31  # cases collected in fresh80/ (2026-12-01, thirtieth session)
FRESH81_MIN = 19  # cases collected in fresh81/ (2026-12-01, thirty-first session)
FRESH82_MIN = 11  # cases collected in fresh82/ (2026-12-01, thirty-first session)
FRESH83_MIN = 14  # cases collected in fresh83/ (2026-12-01, thirty-second session)
FRESH84_MIN = 13  # cases collected in fresh84/ (2026-12-01, thirty-second session)
FRESH85_MIN = 5  # cases collected in fresh85/ (2026-12-01, thirty-second session)
FRESH86_MIN = 15  # cases collected in fresh86/ (2026-12-01, thirty-third session)
FRESH87_MIN = 7  # cases collected in fresh87/ (2026-12-01, thirty-third session)
FRESH88_MIN = 2  # cases collected in fresh88/ (2026-12-01, thirty-fourth session)
FRESH43_MIN = 21  # cases collected in fresh43/ (2026-11-29, eighteenth session; one AMD ROCm report removed after opening)
CERTAINTIES = {"maintainer", "reporter confirmed", "inferred"}


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, mod)
    spec.loader.exec_module(mod)
    return mod


split = _load("corpus_split", os.path.join(CORPUS, "split.py"))


def _cases() -> list[tuple[str, str, dict]]:
    out = []
    for part in split.PARTS:
        for path in sorted(glob.glob(os.path.join(CORPUS, part, "*.json"))):
            with open(path, encoding="utf-8") as f:
                out.append((part, path, json.load(f)))
    return out


CASES = _cases()


def _known_classes() -> set[str]:
    from p2ptop.knowledge.entry import FAILURE_CLASSES
    # the classes FACTS.md adds for issue 22 (entry.py gains them in the kbentries helper's branch)
    new = {"device_not_visible", "mig_p2p_unsupported", "bar1_too_small", "gpu_fallen_off_bus", "nvlink_peer_memory_error"}
    return set(FAILURE_CLASSES) | new | {"none", "other"}


def test_corpus_is_not_empty_and_has_all_parts():
    parts = {p for p, _, _ in CASES}
    assert parts == set(split.PARTS)
    assert len([c for p, _, c in CASES if p in split.HASHED_PARTS]) >= 150
    assert len([c for p, _, c in CASES if p == "fresh"]) >= 80
    assert len([c for p, _, c in CASES if p == "fresh2"]) >= 80
    assert len([c for p, _, c in CASES if p == "fresh3"]) >= 100
    assert len([c for p, _, c in CASES if p == "fresh4"]) >= 60
    assert len([c for p, _, c in CASES if p == "fresh5"]) >= 50
    assert len([c for p, _, c in CASES if p == "fresh6"]) >= 42
    assert len([c for p, _, c in CASES if p == "fresh7"]) >= FRESH7_MIN
    assert len([c for p, _, c in CASES if p == "fresh8"]) >= FRESH8_MIN
    assert len([c for p, _, c in CASES if p == "fresh9"]) >= FRESH9_MIN
    assert len([c for p, _, c in CASES if p == "fresh10"]) >= FRESH10_MIN
    assert len([c for p, _, c in CASES if p == "fresh11"]) >= FRESH11_MIN
    assert len([c for p, _, c in CASES if p == "fresh12"]) >= FRESH12_MIN
    assert len([c for p, _, c in CASES if p == "fresh13"]) >= FRESH13_MIN
    assert len([c for p, _, c in CASES if p == "fresh14"]) >= FRESH14_MIN
    assert len([c for p, _, c in CASES if p == "fresh15"]) >= FRESH15_MIN
    assert len([c for p, _, c in CASES if p == "fresh16"]) >= FRESH16_MIN
    assert len([c for p, _, c in CASES if p == "fresh17"]) >= FRESH17_MIN
    assert len([c for p, _, c in CASES if p == "fresh18"]) >= FRESH18_MIN
    assert len([c for p, _, c in CASES if p == "fresh19"]) >= FRESH19_MIN
    assert len([c for p, _, c in CASES if p == "fresh20"]) >= FRESH20_MIN
    assert len([c for p, _, c in CASES if p == "fresh21"]) >= FRESH21_MIN
    assert len([c for p, _, c in CASES if p == "fresh22"]) >= FRESH22_MIN
    assert len([c for p, _, c in CASES if p == "fresh23"]) >= FRESH23_MIN
    assert len([c for p, _, c in CASES if p == "fresh24"]) >= FRESH24_MIN
    assert len([c for p, _, c in CASES if p == "fresh25"]) >= FRESH25_MIN
    assert len([c for p, _, c in CASES if p == "fresh26"]) >= FRESH26_MIN
    assert len([c for p, _, c in CASES if p == "fresh27"]) >= FRESH27_MIN
    assert len([c for p, _, c in CASES if p == "fresh28"]) >= FRESH28_MIN
    assert len([c for p, _, c in CASES if p == "fresh29"]) >= FRESH29_MIN
    assert len([c for p, _, c in CASES if p == "fresh30"]) >= FRESH30_MIN
    assert len([c for p, _, c in CASES if p == "fresh31"]) >= FRESH31_MIN
    assert len([c for p, _, c in CASES if p == "fresh32"]) >= FRESH32_MIN
    assert len([c for p, _, c in CASES if p == "fresh33"]) >= FRESH33_MIN
    assert len([c for p, _, c in CASES if p == "fresh34"]) >= FRESH34_MIN
    assert len([c for p, _, c in CASES if p == "fresh35"]) >= FRESH35_MIN
    assert len([c for p, _, c in CASES if p == "fresh36"]) >= FRESH36_MIN
    assert len([c for p, _, c in CASES if p == "fresh37"]) >= FRESH37_MIN
    assert len([c for p, _, c in CASES if p == "fresh38"]) >= FRESH38_MIN
    assert len([c for p, _, c in CASES if p == "fresh39"]) >= FRESH39_MIN
    assert len([c for p, _, c in CASES if p == "fresh40"]) >= FRESH40_MIN
    assert len([c for p, _, c in CASES if p == "fresh41"]) >= FRESH41_MIN
    assert len([c for p, _, c in CASES if p == "fresh42"]) >= FRESH42_MIN
    assert len([c for p, _, c in CASES if p == "fresh43"]) >= FRESH43_MIN
    assert len([c for p, _, c in CASES if p == "fresh44"]) >= FRESH44_MIN
    assert len([c for p, _, c in CASES if p == "fresh45"]) >= FRESH45_MIN
    assert len([c for p, _, c in CASES if p == "fresh46"]) >= FRESH46_MIN
    assert len([c for p, _, c in CASES if p == "fresh47"]) >= FRESH47_MIN
    assert len([c for p, _, c in CASES if p == "fresh48"]) >= FRESH48_MIN
    assert len([c for p, _, c in CASES if p == "fresh49"]) >= FRESH49_MIN
    assert len([c for p, _, c in CASES if p == "fresh50"]) >= FRESH50_MIN
    assert len([c for p, _, c in CASES if p == "fresh51"]) >= FRESH51_MIN
    assert len([c for p, _, c in CASES if p == "fresh52"]) >= FRESH52_MIN
    assert len([c for p, _, c in CASES if p == "fresh53"]) >= FRESH53_MIN
    assert len([c for p, _, c in CASES if p == "fresh54"]) >= FRESH54_MIN
    assert len([c for p, _, c in CASES if p == "fresh55"]) >= FRESH55_MIN
    assert len([c for p, _, c in CASES if p == "fresh56"]) >= FRESH56_MIN
    assert len([c for p, _, c in CASES if p == "fresh57"]) >= FRESH57_MIN
    assert len([c for p, _, c in CASES if p == "fresh58"]) >= FRESH58_MIN
    assert len([c for p, _, c in CASES if p == "fresh59"]) >= FRESH59_MIN
    assert len([c for p, _, c in CASES if p == "fresh60"]) >= FRESH60_MIN
    assert len([c for p, _, c in CASES if p == "fresh61"]) >= FRESH61_MIN
    assert len([c for p, _, c in CASES if p == "fresh62"]) >= FRESH62_MIN
    assert len([c for p, _, c in CASES if p == "fresh63"]) >= FRESH63_MIN
    assert len([c for p, _, c in CASES if p == "fresh64"]) >= FRESH64_MIN
    assert len([c for p, _, c in CASES if p == "fresh65"]) >= FRESH65_MIN
    assert len([c for p, _, c in CASES if p == "fresh66"]) >= FRESH66_MIN
    assert len([c for p, _, c in CASES if p == "fresh67"]) >= FRESH67_MIN
    assert len([c for p, _, c in CASES if p == "fresh68"]) >= FRESH68_MIN
    assert len([c for p, _, c in CASES if p == "fresh69"]) >= FRESH69_MIN
    assert len([c for p, _, c in CASES if p == "fresh70"]) >= FRESH70_MIN
    assert len([c for p, _, c in CASES if p == "fresh71"]) >= FRESH71_MIN
    assert len([c for p, _, c in CASES if p == "fresh72"]) >= FRESH72_MIN
    assert len([c for p, _, c in CASES if p == "fresh73"]) >= FRESH73_MIN
    assert len([c for p, _, c in CASES if p == "fresh74"]) >= FRESH74_MIN
    assert len([c for p, _, c in CASES if p == "fresh75"]) >= FRESH75_MIN
    assert len([c for p, _, c in CASES if p == "fresh76"]) >= FRESH76_MIN
    assert len([c for p, _, c in CASES if p == "fresh77"]) >= FRESH77_MIN
    assert len([c for p, _, c in CASES if p == "fresh78"]) >= FRESH78_MIN
    assert len([c for p, _, c in CASES if p == "fresh79"]) >= FRESH79_MIN
    assert len([c for p, _, c in CASES if p == "fresh80"]) >= FRESH80_MIN
    assert len([c for p, _, c in CASES if p == "fresh81"]) >= FRESH81_MIN
    assert len([c for p, _, c in CASES if p == "fresh82"]) >= FRESH82_MIN
    assert len([c for p, _, c in CASES if p == "fresh83"]) >= FRESH83_MIN
    assert len([c for p, _, c in CASES if p == "fresh84"]) >= FRESH84_MIN
    assert len([c for p, _, c in CASES if p == "fresh85"]) >= FRESH85_MIN
    assert len([c for p, _, c in CASES if p == "fresh86"]) >= FRESH86_MIN
    assert len([c for p, _, c in CASES if p == "fresh87"]) >= FRESH87_MIN
    assert len([c for p, _, c in CASES if p == "fresh88"]) >= FRESH88_MIN


@pytest.mark.parametrize("part,path,case", CASES, ids=[os.path.basename(p) for _, p, _ in CASES])
def test_case_is_well_formed(part, path, case):
    assert set(case) == FIELDS, f"{path}: fields {sorted(set(case) ^ FIELDS)}"
    assert os.path.basename(path) == case["id"] + ".json"
    assert case["class"] in _known_classes(), f"{path}: unknown class {case['class']!r}"
    assert case["kind"] in KINDS
    assert case["lang"] in ("en", "zh")
    assert case["certainty"] in CERTAINTIES
    assert case["text"].strip() and case["conclusion"].strip() and case["conclusion_source"].strip()
    url = urlsplit(case["source_url"])
    if url.scheme == "capture":
        host_file = url.path.strip("/")
        assert host_file.count("/") == 1, f"{path}: capture URL must be capture:HOST/FILE"
        original = os.path.join(REPO, "..", "shared", "captures", host_file)
        if os.path.exists(original):  # ../shared is beside the working tree, not in a CI clone
            with open(original, encoding="utf-8") as f:
                assert f.read() == case["text"], f"{path}: text differs from {original}"
    else:
        assert url.scheme in ("https", "http") and url.netloc, f"{path}: source_url {case['source_url']!r}"
    if part in split.HASHED_PARTS:  # fresh/ to fresh16/ are assigned by collection, see split.py
        assert split.split_of(case["source_url"]) == part, f"{path} is in {part}/ but its thread belongs to {split.split_of(case['source_url'])}"
    if case["lang"] == "zh":
        assert any("\u4e00" <= ch <= "\u9fff" for ch in case["text"]), f"{path}: lang zh without Chinese text"


def test_no_duplicate_ids_or_texts():
    ids = [c["id"] for _, _, c in CASES]
    assert len(ids) == len(set(ids))
    texts = [" ".join(c["text"].split()) for _, _, c in CASES]
    dup = {t[:80] for t in texts if texts.count(t) > 1}
    assert not dup, f"duplicate texts: {dup}"


def test_parts_share_no_thread():
    threads = {p: {split.thread_of(c["source_url"]) for q, _, c in CASES if q == p} for p in split.PARTS}
    for i, part in enumerate(split.PARTS):
        for earlier in split.PARTS[:i]:
            assert not threads[part] & threads[earlier], f"{part}/ and {earlier}/ share a thread"


@pytest.mark.parametrize("collected", split.COLLECTED_PARTS)
def test_fresh_threads_are_new_and_few_cases_each(collected):
    """Each collected part (split.COLLECTED_PARTS, in the order collected: fresh/ on 2026-11-24 after the holdout was
    measured twice, each later one after the one before it was measured): no thread of any earlier part (dev/,
    holdout/ and every earlier fresh part), at most split.MAX_PER_THREAD cases per thread, public threads only."""
    earlier = split.HASHED_PARTS + split.COLLECTED_PARTS[: split.COLLECTED_PARTS.index(collected)]
    old = {split.thread_of(c["source_url"]) for p, _, c in CASES if p in earlier}
    fresh = [(path, c) for p, path, c in CASES if p == collected]
    assert fresh, f"no cases in {collected}/"
    reused = [os.path.basename(path) for path, c in fresh if split.thread_of(c["source_url"]) in old]
    assert not reused, f"{collected}/ cases from threads of {', '.join(earlier)}: {reused}"
    per_thread: dict[str, int] = {}
    for _, c in fresh:
        t = split.thread_of(c["source_url"])
        per_thread[t] = per_thread.get(t, 0) + 1
        assert urlsplit(c["source_url"]).scheme in ("https", "http"), f"{c['id']}: fresh cases come from public threads"
    crowded = {t: n for t, n in per_thread.items() if n > split.MAX_PER_THREAD}
    assert not crowded, f"more than {split.MAX_PER_THREAD} cases of one thread in {collected}/: {crowded}"


def test_split_depends_only_on_the_thread():
    url = "https://github.com/NVIDIA/nccl/issues/606"
    assert split.split_of(url) == split.split_of(url + "#issuecomment-1") == split.split_of(url + "/")
    assert split.thread_of("capture:h200x2-nvswitch-vm/a.log") == split.thread_of("capture:h200x2-nvswitch-vm/b.txt")
    shares = [split.split_of(f"https://example.org/t/{i}") for i in range(2000)]
    assert 0.35 < shares.count("holdout") / len(shares) < 0.45


def test_evaluation_script_runs_on_three_cases():
    ev = _load("eval_diagnosis", os.path.join(REPO, "benchmarks", "eval_diagnosis.py"))
    dev = [c for p, _, c in CASES if p == "dev"]
    picked = [next(c for c in dev if c["class"] == "none"), next(c for c in dev if c["class"] not in ("none", "other")),
              next(c for c in dev if c["kind"] == "description")]
    cases = [dict(c, part="dev") for c in picked]
    results = ev.evaluate(cases)
    assert [r["id"] for r in results] == [c["id"] for c in cases]
    assert "false_alarm" in results[0] and "top1" in results[1] and "top3" in results[1]
    table = ev.groups(results)
    assert table["all"]["n"] == 3
    md = ev.markdown("dev", table)
    assert md.splitlines()[2].startswith("| cases | n | top-1 | top-3")


def test_evaluation_script_judges_answers():
    ev = _load("eval_diagnosis", os.path.join(REPO, "benchmarks", "eval_diagnosis.py"))
    case = {"id": "x", "part": "dev", "class": "shm_exhausted", "kind": "log", "lang": "en", "text": "NCCL WARN shm"}
    a = lambda cls, conf="likely", benign=False: {"failure_class": cls, "confidence": conf, "benign": benign}
    r = ev.judge(case, [a("nccl_env_misconfig"), a("shm_exhausted")])
    assert r["top1"] is False and r["top3"] is True and r["empty"] is False
    healthy = dict(case, **{"class": "none"})
    assert ev.judge(healthy, [a("pcie_link_idle_downclock_benign", benign=True)])["false_alarm"] is False
    assert ev.judge(healthy, [a("shm_exhausted", "unsure")])["false_alarm"] is False
    assert ev.judge(healthy, [a("shm_exhausted", "possible")])["false_alarm"] is True
    assert ev.judge(case, [])["empty"] is True


def test_evaluation_script_reports_fresh_as_its_own_part_and_lists_its_cases_only_when_named(tmp_path, capsys):
    """--split takes every part of split.PARTS; --show-cases lists dev's cases by default and another part's only
    when named. Runs on a temporary corpus built from dev cases, never on the real fresh parts' cases."""
    ev = _load("eval_diagnosis", os.path.join(REPO, "benchmarks", "eval_diagnosis.py"))
    assert ev.PARTS == split.PARTS
    dev = [c for p, _, c in CASES if p == "dev"][:2]
    for part, case in zip(ev.PARTS, (dev[0], dev[1]) * len(ev.PARTS)):
        (tmp_path / part).mkdir()
        (tmp_path / part / f"{case['id']}.json").write_text(json.dumps(case), encoding="utf-8")
    assert ev.main(["--split", "all", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**dev**" in out and "**holdout**" in out and "**fresh**" in out and "**fresh2**" in out and "**fresh3**" in out
    assert all(f"**{part}**" in out for part in ev.PARTS)
    listed = [line for line in out.splitlines() if line.startswith("  ok ") or line.startswith("  -- ")]
    assert len(listed) == 1, "with --split all only dev's cases are listed"
    assert ev.main(["--split", "fresh", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh**" in out and "**dev**" not in out
    assert any(line.startswith(("  ok ", "  -- ")) for line in out.splitlines())
    assert ev.main(["--split", "fresh2", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh2**" in out and "**fresh**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
    assert ev.main(["--split", "fresh3", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh3**" in out and "**fresh2**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
    assert ev.main(["--split", "fresh4", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh4**" in out and "**fresh3**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
    assert ev.main(["--split", "fresh5", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh5**" in out and "**fresh4**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
    assert ev.main(["--split", "fresh6", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh6**" in out and "**fresh5**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
    assert ev.main(["--split", "fresh7", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh7**" in out and "**fresh6**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
    assert ev.main(["--split", "fresh8", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh8**" in out and "**fresh7**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
    assert ev.main(["--split", "fresh9", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh9**" in out and "**fresh8**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
    assert ev.main(["--split", "fresh10", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh10**" in out and "**fresh9**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
    assert ev.main(["--split", "fresh11", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh11**" in out and "**fresh10**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
    assert ev.main(["--split", "fresh12", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh12**" in out and "**fresh11**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
    assert ev.main(["--split", "fresh13", "--corpus", str(tmp_path), "--show-cases"]) == 0
    out = capsys.readouterr().out
    assert "**fresh13**" in out and "**fresh12**" not in out and "**dev**" not in out
    assert len([line for line in out.splitlines() if line.startswith(("  ok ", "  -- "))]) == 1
