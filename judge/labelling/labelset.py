"""One labeller's labels per case, as `judge estimate` and the labelling page's live estimate
read them: the question answers and verdict of each case, the rubric the labels were made
for, and the probability each case was drawn with when an active design chose it.

From a label CSV (the labelling page's export, or a sheet in the project's label format that
`agreement.read_labels` reads) or from a labels store. Two optional CSV columns, which the
export writes and `judge agreement` ignores: `rubric_hash` (the content hash of the rubric
the labeller was shown), and for a session under `--order informative`, `design`
(`informative`) and `probability` (the case's inclusion probability in the largest fully
labelled sample; empty for a case outside it).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from pydantic import BaseModel, Field

from agreement.files import read_text
from agreement.ratings import VERDICT, Answer, RaterLabels
from agreement.readers import from_sheet, read_labels
from ground_truth.errors import InputError

from .store import StoreContents

CaseKey = tuple[str, str]
INFORMATIVE = "informative"


class CaseLabels(BaseModel):
    """One case's labels: the question answers (None: Unsure or left empty) and the verdict."""

    incident_id: str
    trial: str
    answers: dict[str, Answer | None] = Field(default_factory=dict)
    verdict: Answer | None = Field(None, description="A `verdict` label, when one was given.")
    probability: float | None = Field(
        None, description="The probability the case was drawn with (active labelling)."
    )

    @property
    def key(self) -> CaseKey:
        return (self.incident_id, self.trial)


class LabelSet(BaseModel):
    """One labeller's labels for the cases of a result."""

    source: str | None = None
    labeller: str
    rubric_hash: str | None = Field(None, description="None: the labels do not say.")
    drawn: bool = Field(
        False,
        description="The cases were drawn with recorded probabilities (`--order informative`); "
        "a case without one was not (yet) in the sample. False: a simple random sample.",
    )
    cases: list[CaseLabels]


def read_label_set(path: str | Path, annotator: str | None = None) -> LabelSet:
    """The labels of one annotator in a label CSV; InputError when the file has several and
    `annotator` does not choose, or names none of them."""
    path = Path(path)
    table = read_labels(path)
    names = table.names
    if annotator is None and len(names) > 1:
        raise InputError(
            path,
            f"labels by {len(names)} annotators ({', '.join(names)}); choose one with "
            "--annotator (a corrected estimate needs one label per case)",
            field="annotator",
        )
    name = annotator or names[0]
    if name not in table:
        raise InputError(path, f"no labels by {name!r}; annotators: {', '.join(names)}")
    rater = table[name]
    hashes, probabilities, drawn = _extra_columns(path, name)
    if len(hashes) > 1:
        raise InputError(
            path,
            f"labels made for {len(hashes)} rubrics ({', '.join(sorted(hashes))}); "
            "expected one rubric_hash",
            field="rubric_hash",
        )
    cases = _cases(rater)
    for case in cases:
        case.probability = probabilities.get(case.key)
    return LabelSet(
        source=str(path),
        labeller=name,
        rubric_hash=next(iter(hashes), None),
        drawn=drawn or bool(probabilities),
        cases=cases,
    )


def label_set_from_store(
    contents: StoreContents,
    rubric_hash: str | None,
    probabilities: dict[CaseKey, float] | None = None,
    source: str | None = None,
) -> LabelSet:
    """The labels in a labels store (Unsure as missing); with `probabilities` (an informative
    session's, possibly none yet) the set is drawn."""
    cases: dict[CaseKey, CaseLabels] = {}
    for (incident, trial, question), record in contents.answers.items():
        case = cases.setdefault((incident, trial), CaseLabels(incident_id=incident, trial=trial))
        answer = record.answer if record.answer in ("Yes", "No") else None
        if question == VERDICT:
            case.verdict = answer
        else:
            case.answers[question] = answer
    for key, case in cases.items():
        case.probability = (probabilities or {}).get(key)
    return LabelSet(
        source=source,
        labeller=contents.labeller or "?",
        rubric_hash=rubric_hash,
        drawn=probabilities is not None,
        cases=list(cases.values()),
    )


def _cases(rater: RaterLabels) -> list[CaseLabels]:
    cases: dict[CaseKey, CaseLabels] = {}
    for key, answer in rater.labels["question"].items():
        case = cases.setdefault(
            (key.incident_id, key.trial),
            CaseLabels(incident_id=key.incident_id, trial=key.trial),
        )
        case.answers[key.unit] = answer
    for key, answer in rater.labels["verdict"].items():
        case = cases.setdefault(
            (key.incident_id, key.trial),
            CaseLabels(incident_id=key.incident_id, trial=key.trial),
        )
        case.verdict = answer
    return list(cases.values())


def _extra_columns(path: Path, annotator: str) -> tuple[set[str], dict[CaseKey, float], bool]:
    """The rubric hashes, the per-case probabilities of `annotator`'s rows, and whether any
    row comes from an informative session."""
    text = read_text(path, "utf-8-sig")
    delimiter = max((",", ";", "\t"), key=text.split("\n", 1)[0].count)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    reader.fieldnames = [(f or "").strip().lower() for f in reader.fieldnames or []]
    hashes: set[str] = set()
    probabilities: dict[CaseKey, float] = {}
    drawn = False
    for number, row in enumerate(reader, start=2):
        cells = {k: from_sheet((v or "").strip()) for k, v in row.items() if isinstance(k, str)}
        if (cells.get("annotator") or path.stem) != annotator or not cells.get("incident_id"):
            continue
        drawn |= cells.get("design") == INFORMATIVE
        if cells.get("rubric_hash"):
            hashes.add(cells["rubric_hash"])
        if cells.get("probability"):
            key = (cells["incident_id"], cells.get("trial") or "1")
            value = _probability(path, number, cells["probability"])
            if probabilities.setdefault(key, value) != value:
                raise InputError(
                    path,
                    f"{key[0]} / trial {key[1]} has two probabilities "
                    f"({probabilities[key]} and {value}); expected one per case",
                    field=f"row {number}: probability",
                )
    return hashes, probabilities, drawn


def _probability(path: Path, number: int, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 1:
        raise InputError(
            path,
            f"{text!r} is not a probability; expected a number in (0, 1] or an empty cell",
            field=f"row {number}: probability",
        )
    return value
