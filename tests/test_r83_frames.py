"""What frames a paste is no evidence (the forty-fourth session).

- GitHub's collapsed section (GitHub Docs, "Organizing information with collapsed sections"): issue templates ask for a
  log or an environment report inside <details>, titled by a <summary> (vLLM's bug template: "The output of
  <code>python collect_env.py</code>"). The tags are markup, not the tool's lines: a nccl-tests table that ends at its
  header (a hang) ends there inside a section too, and every reader reads the same facts as from the bare paste.
- The words that frame a paste ("the full log", "complete traceback", a section's title) and the words of the medium
  ("log", "output": every paste is one) name no cause: they are no words of the retrieval query, so they cannot reorder
  the candidates of a text whose own words are the same.
- An issue template's own lines (GitHub's issue forms: "### Label" headings, "_No response_", "- [X]" checkboxes; a
  markdown template's bold labels and the placeholder sentences of GitHub's default bug report; the labels of the common
  templates alone on a line, as a copy of the rendered page leaves them) are the same in every
  report of a repository: no query terms either, and a nccl-tests table that ends at its header before them still hangs.
  The language and its package tools (python, pip, conda) weigh as the frameworks do: every cause meets them."""

from pathlib import Path

import pytest

from .kbtools import FORM_PASTES, classes, flat_facts, pasted, perturbation, text_facts

from p2ptop.evidence.paste import tidy
from p2ptop.knowledge.retrieval import query_terms

NCCL_TESTS = Path(__file__).resolve().parent / "fixtures" / "device" / "h200x2-nccl-tests" / "all_reduce_perf-healthy.txt"


def _hung_table() -> str:
    """The real nccl-tests run of the two-H200 host cut after its table's header: what a run that hangs prints."""
    lines = NCCL_TESTS.read_text(encoding="utf-8").split("\n")
    last = max(n for n, line in enumerate(lines) if "busbw" in line)
    return "\n".join(lines[:last + 2])


@pytest.mark.parametrize("change", ["details", "detailscode", "discourse", "dquote"])
def test_a_hung_nccl_tests_table_in_a_collapsed_section_still_hangs(change):
    hung = _hung_table()
    assert flat_facts(hung).get("symptom.hang") is True
    assert flat_facts(perturbation(change)(hung)).get("symptom.hang") is True


@pytest.mark.parametrize("change", ["details", "detailscode", "discourse", "dquote"])
@pytest.mark.parametrize("name", FORM_PASTES)
def test_a_collapsed_section_gives_the_plain_paste_facts(name, change):
    text = pasted(name)
    assert text_facts(perturbation(change)(text)) == text_facts(text)


@pytest.mark.parametrize("change", ["details", "detailscode"])
@pytest.mark.parametrize("name", FORM_PASTES)
def test_a_collapsed_section_gives_the_plain_answer(name, change):
    text = pasted(name)
    assert classes(perturbation(change)(text)) == classes(text)


def test_the_section_tags_go_line_for_line_and_the_title_stays():
    text = ("<details>\n<summary>The output of <code>python collect_env.py</code></summary>\n\n```text\n"
            "Nvidia driver version: 550.54.15\n```\n</details>")
    out = tidy(text)
    assert out.count("\n") == text.count("\n")  # the line numbers of what a reason quotes stay
    assert "<" not in out and "The output of python collect_env.py" in out
    assert "Nvidia driver version: 550.54.15" in out.split("\n")


def test_a_tag_in_a_text_without_a_section_stays():
    assert tidy("the <code> tag of a page, and <b>bold</b>") == "the <code> tag of a page, and <b>bold</b>"


def _query(text):
    return set(query_terms(text.split("\n"), lambda key: []))


@pytest.mark.parametrize("framed", [
    "Here is the full log:", "The complete traceback is below.", "entire NCCL debug output attached",
    "<details><summary>Full log of rank 3</summary>",
])
def test_framing_words_are_no_query_terms(framed):
    terms = _query(framed)
    assert not terms & {"full", "complet", "entire", "rank", "3"}
    assert "log" not in terms and "output" not in terms


@pytest.mark.parametrize("said,word", [("/dev/shm is full after a few steps", "full"),
                                       ("the GPUs run at full speed on PCIe", "full"),
                                       ("the copy never completes", "complet")])
def test_the_same_words_as_the_texts_own_stay(said, word):
    assert word in _query(said)


def test_a_framed_description_keeps_its_answer():
    text = pasted("prose-en-nccl-631-freeze.txt")
    for frame in ("Full log below.\n\n", "Here is the complete output:\n\n"):
        assert classes(frame + text) == classes(text)


# --- an issue template's own lines (GitHub's issue forms and markdown templates)

TEMPLATES = ["issueform", "transformers", "vllmform", "mdtemplate", "rendered"]


@pytest.mark.parametrize("change", TEMPLATES)
@pytest.mark.parametrize("name", FORM_PASTES)
def test_an_issue_template_around_a_paste_gives_the_plain_answer(name, change):
    text = pasted(name)
    assert classes(perturbation(change)(text)) == classes(text)


@pytest.mark.parametrize("change", ["issueform", "vllmform"])
def test_a_hung_table_followed_by_the_templates_empty_fields_still_hangs(change):
    assert flat_facts(perturbation(change)(_hung_table())).get("symptom.hang") is True


def test_a_table_followed_by_an_error_is_no_hang():
    # nccl-tests' table header and then a failure: the run stopped on an error, not in a collective that never ended
    text = _hung_table() + "\nnode7: Test NCCL failure common.cu:1094 'unhandled cuda error'"
    assert flat_facts(text).get("symptom.hang") is not True


@pytest.mark.parametrize("line", ["### Describe the bug", "## Environment", "**To Reproduce**", "**Expected behavior**:",
                                  "_No response_", "- [X] I have searched the existing issues", "* [ ] My own scripts"])
def test_template_lines_are_no_query_terms(line):
    from p2ptop.knowledge.regex_safety import ISSUE_TEMPLATE_LINE

    assert ISSUE_TEMPLATE_LINE.fullmatch(line)
    assert _query(line + "\nNCCL hangs") == _query("NCCL hangs")


@pytest.mark.parametrize("line", ["Describe the bug", "\U0001f41b Describe the bug", "Expected behavior:", "To Reproduce",
                                  "Additional context", "No response", "System Info", "Who can help?",
                                  "Your current environment", "Before submitting a new issue..."])
def test_a_rendered_templates_labels_are_no_query_terms(line):
    from p2ptop.knowledge.regex_safety import ISSUE_TEMPLATE_LINE

    assert ISSUE_TEMPLATE_LINE.fullmatch(line)
    assert _query(line + "\nNCCL hangs") == _query("NCCL hangs")


@pytest.mark.parametrize("line", ["# Using devices", "#  Rank  0 Group  0 Pid  41733 on node7 device  0 [0x18] NVIDIA H100",
                                  "- P2P is disabled on this board", "**NCCL_P2P_DISABLE=1** fixes it", "##",
                                  "**With P2P on, all_reduce hangs at the first step on 4090s**",
                                  "Describe the bug: NCCL hangs", "The environment has two RTX 4090", "bus error"])
def test_a_tools_comment_and_the_reporters_own_lines_stay(line):
    from p2ptop.knowledge.regex_safety import ISSUE_TEMPLATE_LINE

    assert not ISSUE_TEMPLATE_LINE.fullmatch(line)


def test_the_name_of_the_environment_script_is_no_query_term():
    assert not _query("Your output of `python collect_env.py` here") & {"collect", "env", "collect_env"}


def test_a_paste_that_lost_its_breaks_after_a_heading_keeps_its_words():
    # a chat or a form field folded the paste onto one line: it starts with the template's heading, but is no heading
    text = pasted("error-trtllm-1625-peer-access.txt")
    folded = ("### Describe the bug " + text).replace("\n", " ")
    assert len(_query(folded)) > 10
    assert classes(folded) == classes(perturbation("oneline")(text))


def test_a_discourse_sections_title_stays_for_the_readers_but_not_the_query():
    text = '[details="nvidia-smi topo -m on node7"]\nGPU0\tX\tSYS\n[/details]'
    out = tidy(text)
    assert out.count("\n") == text.count("\n") and "[" not in out and "nvidia-smi topo -m on node7" in out
    assert "node7" not in _query(text)


def test_a_bracketed_line_of_a_log_stays():
    text = "[code] 12 [/code]\n[/usr/lib]\n[quote] rank 3 [/quote] done"
    assert tidy(text) == text
