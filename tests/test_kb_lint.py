"""Lint and loading of broken entries: each problem names file, field and message; a broken entry is
skipped and the others still load."""

import os

import pytest

from p2ptop.knowledge import load_paths
from p2ptop.knowledge.lint import lint
from p2ptop.knowledge.regex_safety import nested_repeat, slow_patterns

from .conftest import FIXTURES

BROKEN = os.path.join(FIXTURES, "kb", "broken")


@pytest.fixture(scope="module")
def problems():
    return lint([BROKEN], time_limit_s=0.5)


def _about(problems, name):
    return [p for p in problems if os.path.basename(p.file) == name]


def test_a_broken_entry_is_skipped_and_the_others_load():
    kb = load_paths([BROKEN])
    ids = kb.ids()
    assert "test/good-entry" in ids and "test/unknown-fact" not in ids and "test/bad-regex" not in ids
    assert {os.path.basename(p.file) for p in kb.problems} >= {"broken_json.json", "missing_fields.json", "bad_regex.json",
                                                                "nested_regex.json", "unknown_class.json", "duplicate_b.json",
                                                                "unknown_fact.json"}


def test_broken_json_names_the_file_and_the_position(problems):
    (p,) = _about(problems, "broken_json.json")
    assert p.field == "" and "broken JSON" in p.message and "line" in p.message


def test_missing_fields_are_named(problems):
    fields = {p.field for p in _about(problems, "missing_fields.json")}
    assert {"root_cause", "workarounds"} <= fields
    assert all(p.message == "missing required field" for p in _about(problems, "missing_fields.json"))


def test_a_regex_that_does_not_compile_is_reported(problems):
    (p,) = _about(problems, "bad_regex.json")
    assert p.field == "regex" and p.message.startswith("invalid regex")


def test_a_nested_unbounded_repeat_is_rejected_without_running_it(problems):
    (p,) = _about(problems, "nested_regex.json")
    assert p.field == "regex" and "catastrophic backtracking" in p.message


def test_a_pathologically_slow_regex_is_caught_by_the_timed_check(problems):
    assert nested_repeat(r"(\d|\d\d)+x") is None  # the static look misses this one
    (p,) = _about(problems, "slow_regex.json")
    assert p.field == "regex" and "slower than" in p.message


def test_unknown_failure_class(problems):
    (p,) = _about(problems, "unknown_class.json")
    assert p.field == "failure_class" and "unknown failure class 'gpu_on_fire'" in p.message


def test_duplicate_id(problems):
    (p,) = _about(problems, "duplicate_b.json")
    assert p.field == "id" and "duplicate id 'test/duplicate'" in p.message and "duplicate_a.json" in p.message
    assert _about(problems, "duplicate_a.json") == []


def test_unknown_fact_and_unknown_link(problems):
    (p,) = _about(problems, "unknown_fact.json")
    assert p.field == "match.require[0].fact" and "gpu.colour" in p.message
    (q,) = _about(problems, "bad_link.json")
    assert q.field == "transition_graph.leads_to[0]" and "test/nowhere" in q.message


def test_the_good_entry_has_no_problem(problems):
    assert _about(problems, "good.json") == []


def test_the_timed_check_passes_fast_regexes_and_keeps_going_after_a_slow_one():
    slow = slow_patterns([r"(a|aa)+$", r"peer access", r"(\d|\d\d)+x", r"error \d+"], limit_s=0.3)
    assert slow == {r"(a|aa)+$", r"(\d|\d\d)+x"}


def test_a_missing_path_is_a_problem_not_a_crash(tmp_path):
    (p,) = lint([tmp_path / "nope"])
    assert "no such file" in p.message


def test_users_entries_with_a_slow_regex_are_skipped_at_load(tmp_path):
    import shutil

    from p2ptop.knowledge import load_kb

    for name in ("slow_regex.json", "good.json"):
        shutil.copy(os.path.join(BROKEN, name), tmp_path / name)
    kb = load_kb([tmp_path])
    assert kb.get("test/good-entry") is not None and kb.get("test/slow-regex") is None
    (p,) = [p for p in kb.problems if p.file.endswith("slow_regex.json")]
    assert p.field == "regex" and "slower than" in p.message
