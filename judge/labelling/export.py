"""`judge labels export`: the label CSV that `judge agreement` and `judge calibrate` read.

Derived from the stores at any time, never edited by hand. An Unsure answer is exported with an
empty `answer` (which the readers treat as missing, as `agreement.ratings.normalize_answer`
does for an empty cell) and `unsure` in `notes`, so it is neither Yes nor No in any statistic
but stays visible in the sheet.

Three columns beyond the label format, for `judge estimate` (other readers ignore them):
`rubric_hash`, the rubric the labeller answered; and for a store labelled under
`--order informative`, `design` (`informative`) and `probability`: the case's probability in
the largest sample of the session's draw that is fully labelled, empty for a case outside it
(whose label waits until its sample is complete; `judge.labelling.active`).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from agreement.readers import LABEL_COLUMNS

from ..checklist.results import write_json_atomic
from .active import ActiveDesign
from .labelset import INFORMATIVE
from .store import AnswerRecord, StoreContents, read_store

COLUMNS = (*LABEL_COLUMNS, "judge_seen", "labelled_at", "rubric_hash", "design", "probability")


def export_rows(stores: list[Path]) -> list[dict[str, str]]:
    """One label CSV row per answered question in the stores (cleared answers left out)."""
    rows = []
    for path in stores:
        contents = read_store(path)
        design = session_design(contents)
        rubric = next((s.rubric.get("hash") for s in reversed(contents.sessions)), None)
        extra = {"rubric_hash": str(rubric or ""), "design": INFORMATIVE if design else ""}
        inclusion = design.inclusion(design.done(contents)) if design else {}
        for r in contents.answers.values():
            if r.answer is not None:
                pi = inclusion.get((r.incident_id, r.trial))
                rows.append({**_row(r), **extra, "probability": "" if pi is None else repr(pi)})
    return rows


def session_design(contents: StoreContents) -> ActiveDesign | None:
    """The draw of the store's latest informative session, if it had one."""
    for session in reversed(contents.sessions):
        if session.design is not None:
            return ActiveDesign.model_validate(session.design)
    return None


def describe(store: Path) -> str:
    """How the store's labels were chosen and shown, for the person reading the statistics."""
    contents = read_store(store)
    modes: list[str] = sorted({s.mode for s in contents.sessions}) or ["unknown"]
    samples = [s.sample for s in contents.sessions if s.sample]
    line = (
        f"{store}: {contents.labeller or '?'}, {len(contents.answers)} answers, {'/'.join(modes)}"
    )
    for sample in {json.dumps(s, sort_keys=True): s for s in samples}.values():
        line += (
            f"; a stratified sample of {sample['n']} of {sample['population']} cases "
            f"(seed {sample['seed']}, {sample['strata']})"
        )
    design = session_design(contents)
    if design is not None:
        done = design.done(contents)
        line += (
            f"; informative: drawn with probabilities from the judge's uncertainty (seed "
            f"{design.seed}), {len(design.inclusion(done))} of {len(design.cases)} cases in "
            f"the largest fully labelled sample"
        )
    return line


def _row(record: AnswerRecord) -> dict[str, str]:
    unsure = record.answer == "Unsure"
    notes = "; ".join(n for n in ("unsure" if unsure else "", record.rationale) if n)
    return {
        "incident_id": record.incident_id,
        "trial": record.trial,
        "dimension_id": record.dimension_id,
        "question_id": record.question_id,
        "question_text": record.question_text,
        "ground_truth": "",
        "diagnosis": "",
        "answer": "" if unsure else str(record.answer),
        "annotator": record.labeller,
        "notes": notes,
        "judge_seen": "yes" if record.judge_seen else "no",
        "labelled_at": record.at,
    }


def write_export(stores: list[Path], output: Path) -> int:
    """Write the CSV atomically (UTF-8 with a BOM, like the template); return the row count."""
    rows = export_rows(stores)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    write_json_atomic(output, "\ufeff" + buffer.getvalue(), private=True)
    return len(rows)
