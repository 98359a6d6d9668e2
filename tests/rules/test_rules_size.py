"""Issue 24, large inputs: the rules judge's work is linear in the diagnosis' length, and what it
reads of a huge one (its size policy) is stated in its answers, never silent.

The shape is checked without a clock: a fresh process counts the work of answering every
question, as the Python lines the rules package executes and the characters its regular
expressions are handed (a `match` at one offset: the characters it matches), on a diagnosis of
N and of 4N characters."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import REPO

from benchmarks.rules_size import SPEC, long_diagnosis
from ground_truth import Submission
from judge import JudgeTask, RulesJudge, evaluate_submission, load_rubric
from judge.checklist.prompts import Prompt
from judge.judges.rules import SizePolicy

COUNT_WORK = r"""
import json, os, re, sys
sys.path.insert(0, {repo!r})
RULES = os.path.join({repo!r}, "judge", "judges", "rules")
counts = {{"lines": 0, "regex_chars": 0}}
_compile = re._compile


class Counted:
    def __init__(self, pattern):
        self._p = pattern

    def __getattr__(self, name):
        return getattr(self._p, name)

    def _count(self, string, pos=0, endpos=None):
        end = len(string) if endpos is None else min(endpos, len(string))
        counts["regex_chars"] += max(0, end - pos)

    def search(self, string, pos=0, endpos=sys.maxsize):
        self._count(string, pos, endpos)
        return self._p.search(string, pos, endpos)

    def match(self, string, pos=0, endpos=sys.maxsize):
        return self._anchored(self._p.match(string, pos, endpos))

    def fullmatch(self, string, pos=0, endpos=sys.maxsize):
        self._count(string, pos, endpos)
        return self._p.fullmatch(string, pos, endpos)

    def _anchored(self, match):
        # An attempt at one offset reads what it matches, not the rest of the text: the rules
        # try patterns at the few offsets where a match can begin (vocabulary, names).
        counts["regex_chars"] += 1 + (match.end() - match.start() if match else 0)
        return match

    def finditer(self, string, pos=0, endpos=sys.maxsize):
        self._count(string, pos, endpos)
        return self._p.finditer(string, pos, endpos)

    def findall(self, string, pos=0, endpos=sys.maxsize):
        self._count(string, pos, endpos)
        return self._p.findall(string, pos, endpos)

    def sub(self, repl, string, count=0):
        self._count(string)
        return self._p.sub(repl, string, count)

    def split(self, string, maxsplit=0):
        self._count(string)
        return self._p.split(string, maxsplit)


def counting_compile(pattern, flags):
    compiled = _compile(pattern, flags)
    caller = sys._getframe(2).f_code.co_filename
    return Counted(compiled) if caller.startswith(RULES) else compiled


re._compile = counting_compile
from benchmarks.rules_size import SPEC, answer_all, long_diagnosis, questions
from judge.judges.rules import SizePolicy
from judge.judges.rules.truth import parse_truth


def tracer(frame, event, arg):
    if not frame.f_code.co_filename.startswith(RULES):
        return None

    def local(frame, event, arg):
        if event == "line":
            counts["lines"] += 1
        return local

    return local


truth, asked = parse_truth(SPEC), questions()
text = long_diagnosis({size})
sys.settrace(tracer)
answer_all(text, truth, SizePolicy(max_chars=None), asked)
sys.settrace(None)
print(json.dumps(counts))
"""
SIZE = 12_000


def work(size: int) -> dict[str, int]:
    code = COUNT_WORK.format(repo=str(REPO), size=size)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_work_grows_linearly_with_the_diagnosis() -> None:
    small, large = work(SIZE), work(4 * SIZE)
    assert small["lines"] > 10_000 and small["regex_chars"] > 100_000
    for measure in ("lines", "regex_chars"):
        assert large[measure] / small[measure] < 4 * 1.25, (measure, small, large)


def test_the_policy_reads_a_huge_diagnosis_head_and_tail_at_line_breaks() -> None:
    text = long_diagnosis(50_000)
    excerpt = SizePolicy(max_chars=10_000).apply(text)
    assert excerpt.cut and len(excerpt.text) <= 10_001
    (head_start, head_end), (tail_start, tail_end) = excerpt.spans
    assert (head_start, tail_end) == (0, len(text))
    assert text[head_end - 1] == "\n" and text[tail_start - 1] == "\n"
    assert excerpt.text == text[:head_end] + "\n" + text[tail_start:]
    assert "read characters 0-" in excerpt.note and "of 50,000" in excerpt.note


def test_the_policy_leaves_a_short_diagnosis_whole() -> None:
    text = long_diagnosis(5_000)
    for policy in (SizePolicy(), SizePolicy(max_chars=None), SizePolicy(max_chars=5_000)):
        excerpt = policy.apply(text)
        assert excerpt.text == text and not excerpt.cut and excerpt.note == ""
    head = SizePolicy(max_chars=1_000, keep="head").apply(text)
    assert head.cut and text.startswith(head.text) and len(head.spans) == 1


@pytest.mark.parametrize("bad", [{"max_chars": 0}, {"head_share": 0}, {"keep": "middle"}])
def test_a_bad_policy_is_refused(bad: dict) -> None:
    with pytest.raises(ValueError):
        SizePolicy(**bad)


def test_every_answer_on_a_cut_diagnosis_says_what_was_read() -> None:
    text = long_diagnosis(40_000)
    judge = RulesJudge(size_policy=SizePolicy(max_chars=8_000))
    sub = Submission(incident_id=SPEC.id, diagnosis=text)
    for dimension in load_rubric().dimensions:
        task = JudgeTask(SPEC, sub, dimension, Prompt(messages=[], hash=""))
        for answer in judge.answer(task).answers:
            assert answer.answer is not None
            assert answer.evidence and answer.evidence.endswith("of 40,000; the rest was not read]")
    assert judge.describe()["params"]["size_policy"]["max_chars"] == 8_000


def test_a_diagnosis_under_the_limit_carries_no_note() -> None:
    case = evaluate_submission(
        SPEC, Submission(incident_id=SPEC.id, diagnosis=long_diagnosis(3_000))
    )
    assert not any("size policy" in (j.evidence or "") for j in case.judgments)
