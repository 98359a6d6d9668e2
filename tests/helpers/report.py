"""Example runs for the report's tests, and a page parsed as a browser's parser sees it."""

from __future__ import annotations

from html.parser import HTMLParser

from ground_truth import Submission, load_specs, load_submissions
from judge import DimensionVerdict, EvalOptions, EvalResult, JudgeTask, RulesJudge, evaluate
from judge.checklist.judgment import unscored
from judge.checklist.texts import CaseTexts, texts_from

from . import EXAMPLE

HOSTILE_INCIDENT = "incorrect_port_assignment"
HOSTILE = (
    "Root cause: the checkout deployment sets PRODUCT_CATALOG_ADDR to <b>port 8082</b> "
    "instead of 8080 &lt;wrong port&gt;, so product-catalog connections are refused. "
    "<script>document.title='pwned'</script> "
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\"> "
    '<a href="https://evil.example/">click</a> </textarea> ]]> {{ 7*7 }}'
)
RATE_LIMIT = "429 Too Many Requests (gave up after 3 attempts)"


class FlakyJudge:
    """The rules judge, except that dimension D2 of trial `flaky` hits a provider error."""

    name = "rules"

    def __init__(self) -> None:
        self._rules = RulesJudge()

    def describe(self) -> dict:
        return self._rules.describe()

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        if task.submission.trial == "flaky" and task.dimension.id == "D2":
            return unscored(task.question_ids, RATE_LIMIT, "rate_limit", attempts=3)
        return await self._rules.judge(task)


def example_run(k: int | None = None) -> tuple[EvalResult, CaseTexts]:
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")
    result = evaluate(specs, subs, options=EvalOptions(k=k))
    return result, texts_from(specs, subs, result.config["rubric"])


def hostile_run() -> tuple[EvalResult, CaseTexts]:
    """One hostile diagnosis (trial `hostile`) and one case with a provider error (`flaky`)."""
    specs = [s for s in load_specs(EXAMPLE / "ground_truth") if s.id == HOSTILE_INCIDENT]
    subs = [
        Submission(
            incident_id=HOSTILE_INCIDENT, trial="hostile", diagnosis=HOSTILE, agent="<i>x</i>"
        ),
        Submission(incident_id=HOSTILE_INCIDENT, trial="flaky", diagnosis=HOSTILE),
    ]
    # one call per dimension, so that only D2 of `flaky` fails
    result = evaluate(specs, subs, judge=FlakyJudge(), options=EvalOptions(granularity="dimension"))
    return result, texts_from(specs, subs, result.config["rubric"])


class Page(HTMLParser):
    """Tags, attributes and text of a page, as a browser's parser would see them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.marks: list[str] = []
        self.scripts: list[str] = []
        self._stack: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag not in {"meta", "br", "img", "input", "link"}:
            self._stack.append(tag)
        if tag == "mark":
            self.marks.append("")

    def handle_endtag(self, tag):
        if tag in self._stack:
            while self._stack.pop() != tag:
                pass

    def handle_data(self, data):
        if "script" in self._stack:
            self.scripts.append(data)
        elif "style" not in self._stack:
            self.text.append(data)
        if "mark" in self._stack:
            self.marks[-1] += data

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == name]

    @property
    def all_text(self) -> str:
        return "".join(self.text)
