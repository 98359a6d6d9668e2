"""Read ratings from judge result files (JSON) and people's label sheets (CSV).

The label CSV (one row per (incident, trial, question) and one `verdict` row per case):

    incident_id, trial, dimension_id, question_id, question_text, ground_truth, diagnosis,
    answer, annotator, notes

Only `incident_id`, `question_id` and `answer` are required when reading. `question_id` is a
rubric question id, or the literal `verdict` for the case's final pass/fail. `trial` defaults
to `1`; `annotator` defaults to the `annotator` argument or the file's stem, and several
annotators in one file become separate raters. Unknown columns are ignored. The file is read as
UTF-8 with or without a byte-order mark, with `,`, `;` or tab as the delimiter (spreadsheets in
some locales save `;`). Templates are written as UTF-8 *with* a BOM so that Excel shows
non-ASCII text correctly; LibreOffice, Google Sheets and Python's `utf-8-sig` read it as well.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agreement.errors import LabelFileError
from agreement.files import parse_json, read_text
from agreement.ratings import (
    VERDICT,
    ItemKey,
    Level,
    RaterLabels,
    RatingTable,
    normalize_answer,
)

LABEL_COLUMNS = (
    "incident_id",
    "trial",
    "dimension_id",
    "question_id",
    "question_text",
    "ground_truth",
    "diagnosis",
    "answer",
    "annotator",
    "notes",
)
REQUIRED_COLUMNS = ("incident_id", "question_id", "answer")
VERDICT_TEXT = (
    "Final verdict: does the diagnosis identify the root cause described by the ground truth "
    "well enough to pass? (Yes = pass, No = fail)"
)

Source = str | Path | Mapping[str, Any]
Entry = Source | RatingTable | tuple[Source, str]
"""What `read_ratings` reads: a source or table, or a `(source, rater name)` pair."""


def read_result(
    source: Source,
    *,
    rater: str | None = None,
    by_judge: bool = False,
) -> RatingTable:
    """Ratings from one `judge eval` result (a path or the parsed dict).

    Question level from `judgments[]`, dimension level from `cases[].dimensions[].score`
    (pass = score >= the table's `dimension_pass`, derived later so it can be changed), verdict
    from `cases[].passed`, composites from `cases[].composite`. The rater is named
    `rater`, else `config.judge.model`, else `config.judge.name`.

    `by_judge=True` also reads `member_judgments[]` (a panel's members, a cascade's stages)
    and splits the answers by their `judge` field, each member becoming a rater with
    question-level answers; the cases stay with the main rater. Otherwise only the judgments
    of the result's own judge (`config.judge.label`) are read: schema version 1 kept the
    members' answers in `judgments[]` too.
    """
    data, path = load_result_data(source)
    name = rater or default_rater(data, path)
    rubric = rubric_hash(data)
    main = RaterLabels(name=name, kind="judge", source=path, rubric=rubric)
    members: dict[str, RaterLabels] = {}
    seen: dict[tuple[str, ItemKey], tuple[str, str | None, str]] = {}
    rows = [("judgments", row) for row in list_field(data, "judgments", path)]
    if by_judge:
        rows += [("member_judgments", row) for row in list_field(data, "member_judgments", path)]
    own_label = (data.get("config") or {}).get("judge", {}).get("label")
    counts: dict[str, int] = {}
    for where, row in rows:
        number = counts[where] = counts.get(where, -1) + 1
        field = f"{where}[{number}]"
        if not isinstance(row, Mapping):
            raise LabelFileError(path, "expected an object", field=field)
        judge = str(row.get("judge") or name)
        target = main
        if not by_judge and own_label and judge != own_label:
            continue  # a panel member's answer; the panel's own is the result's
        if by_judge:
            target = members.setdefault(
                judge, RaterLabels(name=judge, kind="judge", source=path, rubric=rubric)
            )
        key = ItemKey(
            text_field(row, "incident_id", path, field),
            text_field(row, "trial", path, field, default="1"),
            text_field(row, "question_id", path, field),
        )
        answer = normalize_answer(row.get("answer"), path=path, field=f"{field}.answer")
        _check_duplicate(seen, target.name, key, field, answer, judge, path)
        target.labels["question"][key] = answer
        dimension = row.get("dimension_id")
        if dimension:
            target.dimension_of.setdefault(key.unit, str(dimension))
    _read_cases(data, path, main)
    table = RatingTable()
    table.add(main)
    for member in members.values():
        if member.name == main.name:
            _adopt_questions(main, member)
        else:
            member.dimension_of.update(main.dimension_of)
            table.add(member)
    return table


def rubric_hash(data: Mapping[str, Any]) -> str | None:
    """The content hash of the rubric a result was made with (`config.rubric.hash`)."""
    rubric = (data.get("config") or {}).get("rubric")
    value = rubric.get("hash") if isinstance(rubric, Mapping) else None
    return str(value) if value else None


def _read_cases(data: Mapping[str, Any], path: str | None, rater: RaterLabels) -> None:
    for i, case in enumerate(list_field(data, "cases", path)):
        field = f"cases[{i}]"
        if not isinstance(case, Mapping):
            raise LabelFileError(path, "expected an object", field=field)
        incident = text_field(case, "incident_id", path, field)
        trial = text_field(case, "trial", path, field, default="1")
        rater.labels["verdict"][ItemKey(incident, trial, VERDICT)] = normalize_answer(
            case.get("passed"), path=path, field=f"{field}.passed"
        )
        rater.composites[(incident, trial)] = _number(
            case.get("composite"), path, f"{field}.composite"
        )
        for j, dim in enumerate(case.get("dimensions") or []):
            dfield = f"{field}.dimensions[{j}]"
            if not isinstance(dim, Mapping) or not dim.get("dimension_id"):
                raise LabelFileError(path, "expected an object with a dimension_id", field=dfield)
            score = _number(dim.get("score"), path, f"{dfield}.score")
            key = ItemKey(incident, trial, str(dim["dimension_id"]))
            rater.dimension_scores[key] = score


def _adopt_questions(main: RaterLabels, member: RaterLabels) -> None:
    main.labels["question"].update(member.labels["question"])
    main.dimension_of.update(member.dimension_of)


def _check_duplicate(
    seen: dict[tuple[str, ItemKey], tuple[str, str | None, str]],
    rater: str,
    key: ItemKey,
    field: str,
    answer: str | None,
    judge: str,
    path: str | None,
) -> None:
    previous = seen.get((rater, key))
    if previous is None:
        seen[(rater, key)] = (field, answer, judge)
        return
    first, old, old_judge = previous
    if old != answer:
        several = old_judge != judge
        hint = "; several judges answered it: read the file with by_judge=True" if several else ""
        raise LabelFileError(
            path,
            f"{key.incident_id} / trial {key.trial} / {key.unit} is answered twice "
            f"({first} {old}, {field} {answer}){hint}",
            field=field,
        )


def load_result_data(source: Source) -> tuple[Mapping[str, Any], str | None]:
    """A result file's JSON (or the parsed dict given) and its path; `LabelFileError` when it
    is no judge result."""
    if isinstance(source, Mapping):
        return source, None
    path = str(source)
    try:
        data = parse_json(read_text(path, hint="; expected a judge result JSON"), path)
    except json.JSONDecodeError as exc:
        raise LabelFileError(
            path, f"not valid JSON ({exc.msg}); expected a judge result file", row=exc.lineno
        ) from exc
    if not isinstance(data, Mapping):
        raise LabelFileError(path, "expected a JSON object with `judgments` and `cases`")
    if "judgments" not in data and "cases" not in data:
        raise LabelFileError(path, "not a judge result: it has neither `judgments` nor `cases`")
    return data, path


def default_rater(data: Mapping[str, Any], path: str | None) -> str:
    """A result's rater name: its judge's model, else its judge's name, else the file's stem."""
    judge = (data.get("config") or {}).get("judge") or {}
    name = judge.get("model") or judge.get("name")
    if name:
        return str(name)
    return Path(path).stem if path else "judge"


def list_field(data: Mapping[str, Any], name: str, path: str | None) -> list[Any]:
    """`data[name]` as a list ([] when absent); `LabelFileError` when it is something else."""
    value = data.get(name) or []
    if not isinstance(value, list):
        raise LabelFileError(path, "expected a list", field=name)
    return value


def text_field(
    row: Mapping[str, Any], name: str, path: str | None, field: str, default: str | None = None
) -> str:
    """`row[name]` as stripped text (`default` when missing); `LabelFileError` naming `field`."""
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if default is not None:
            return default
        raise LabelFileError(path, f"missing `{name}`", field=f"{field}.{name}")
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise LabelFileError(path, f"expected text, got {value!r}", field=f"{field}.{name}")
    return str(value).strip()


def _number(value: Any, path: str | None, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LabelFileError(path, f"expected a number or null, got {value!r}", field=field)
    return float(value)


# --- people's label sheets -------------------------------------------------------------------


def read_labels(path: str | Path, *, annotator: str | None = None) -> RatingTable:
    """Ratings from a label CSV; one rater per annotator. Bad rows raise `LabelFileError`."""
    path = str(path)
    default = annotator or Path(path).stem
    rows = _csv_rows(path)
    raters: dict[str, RaterLabels] = {}
    first_row: dict[tuple[str, str, ItemKey], tuple[int, str | None]] = {}
    for number, row in rows:
        if not any((v or "").strip() for v in row.values()):
            continue
        name = (row.get("annotator") or "").strip() or default
        rater = raters.setdefault(name, RaterLabels(name=name, kind="human", source=path))
        incident = _cell(row, "incident_id", path, number)
        trial = (row.get("trial") or "").strip() or "1"
        unit = _cell(row, "question_id", path, number)
        level: Level = "verdict" if unit.lower() == VERDICT else "question"
        key = ItemKey(incident, trial, VERDICT if level == "verdict" else unit)
        answer = normalize_answer(row.get("answer"), path=path, row=number, field="answer")
        _check_row_duplicate(first_row, name, level, key, number, answer, path)
        rater.labels[level][key] = answer
        dimension = (row.get("dimension_id") or "").strip()
        if level == "question" and dimension:
            rater.dimension_of.setdefault(unit, dimension)
    if not raters:
        raise LabelFileError(path, "no label rows; expected at least one row under the header")
    return RatingTable(raters.values())


def _csv_rows(path: str) -> list[tuple[int, dict[str, str]]]:
    text = read_text(path, "utf-8-sig", hint="; save the sheet as 'CSV UTF-8'")
    header_line = text.split("\n", 1)[0]
    delimiter = max((",", ";", "\t"), key=header_line.count)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        raise LabelFileError(path, "empty file; expected a header row", row=1) from None
    columns = [h.strip().lower() for h in header]
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise LabelFileError(
            path,
            f"missing column(s) {', '.join(missing)}; the header must name "
            f"{', '.join(REQUIRED_COLUMNS)} (see {', '.join(LABEL_COLUMNS)})",
            row=1,
        )
    rows = []
    try:
        for number, cells in enumerate(reader, start=2):
            if len(cells) > len(columns) and any(c.strip() for c in cells[len(columns) :]):
                raise LabelFileError(
                    path, f"{len(cells)} cells but the header has {len(columns)}", row=number
                )
            rows.append((number, {c: from_sheet(v) for c, v in zip(columns, cells, strict=False)}))
    except csv.Error as exc:
        raise LabelFileError(path, f"malformed CSV: {exc}", row=reader.line_num) from exc
    return rows


def _cell(row: Mapping[str, str], name: str, path: str, number: int) -> str:
    value = (row.get(name) or "").strip()
    if not value:
        raise LabelFileError(path, f"empty {name}", row=number, field=name)
    return value


def _check_row_duplicate(
    first_row: dict[tuple[str, str, ItemKey], tuple[int, str | None]],
    name: str,
    level: str,
    key: ItemKey,
    number: int,
    answer: str | None,
    path: str,
) -> None:
    previous = first_row.setdefault((name, level, key), (number, answer))
    if previous[0] != number and previous[1] != answer:
        raise LabelFileError(
            path,
            f"annotator {name!r} labelled {key.incident_id} / trial {key.trial} / {key.unit} "
            f"twice: {previous[1]} in row {previous[0]}, {answer} here",
            row=number,
            field="answer",
        )


def read_ratings(sources: Iterable[Entry], dimension_pass: float = 0.5) -> RatingTable:
    """One table from any mix of result JSONs, label CSVs (by suffix), dicts and tables.

    A `(source, name)` tuple names the rater (a judge result's rater, or a label file's default
    annotator).
    """
    table = RatingTable(dimension_pass=dimension_pass)
    for entry in sources:
        source, name = entry if isinstance(entry, tuple) else (entry, None)
        if isinstance(source, RatingTable):
            table.extend(source)
        elif isinstance(source, Mapping):
            table.extend(read_result(source, rater=name))
        elif Path(source).suffix.lower() in (".csv", ".tsv", ".txt"):
            table.extend(read_labels(source, annotator=name))
        else:
            table.extend(read_result(source, rater=name))
    return table


# --- the template people fill in -------------------------------------------------------------


def label_rows(
    result: Source,
    specs_text: Mapping[str, str] | None = None,
    *,
    question_texts: Mapping[str, str] | None = None,
    diagnoses: Mapping[Any, str] | None = None,
    annotator: str = "",
) -> list[dict[str, str]]:
    """Template rows: per case, one row per judged question then one `verdict` row.

    The judge's own answers are deliberately left out (people label blind). Texts come from the
    arguments, else from the result file when it carries them (`judgments[].question_text`,
    `cases[].diagnosis`, `cases[].ground_truth`). `diagnoses` is keyed by `(incident_id, trial)`
    or by `incident_id`.
    """
    data, _ = load_result_data(result)
    cases, questions = _case_questions(data)
    qtexts = {**_result_question_texts(data), **(question_texts or {})}
    rows = []
    for incident, trial, extra in cases:
        ground = (specs_text or {}).get(incident) or str(extra.get("ground_truth") or "")
        diagnosis = _lookup_diagnosis(diagnoses, incident, trial) or str(
            extra.get("diagnosis") or ""
        )
        base = {
            "incident_id": incident,
            "trial": trial,
            "ground_truth": ground,
            "diagnosis": diagnosis,
        }
        for question, dimension in questions.get((incident, trial), []):
            rows.append(_row(base, dimension, question, qtexts.get(question, ""), annotator))
        rows.append(_row(base, "", VERDICT, VERDICT_TEXT, annotator))
    return rows


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def write_label_template(
    result: Source,
    path: str | Path,
    specs_text: Mapping[str, str] | None = None,
    *,
    question_texts: Mapping[str, str] | None = None,
    diagnoses: Mapping[Any, str] | None = None,
    annotator: str = "",
) -> int:
    """Write the label sheet (UTF-8 with BOM, all `LABEL_COLUMNS`); return the number of rows.
    A new sheet is readable by its owner only: it may hold diagnoses and ground truths."""
    rows = label_rows(
        result, specs_text, question_texts=question_texts, diagnoses=diagnoses, annotator=annotator
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=LABEL_COLUMNS)
        writer.writeheader()
        writer.writerows({k: to_sheet(v) for k, v in row.items()} for row in rows)
    return len(rows)


def to_sheet(value: str) -> str:
    """A label-sheet cell that starts like a formula (`=`, `+`, `-`, `@`, tab, CR: OWASP's
    CSV-injection list) gets a leading `'`, so a spreadsheet shows it as text, never runs it."""
    return "'" + value if value.startswith(FORMULA_START) else value


def from_sheet(value: str) -> str:
    """Undo `to_sheet`, so the sheet reads back with the ids it was written with."""
    return value[1:] if value.startswith("'") and value[1:].startswith(FORMULA_START) else value


def _row(
    base: dict[str, str], dimension: str, question: str, text: str, annotator: str
) -> dict[str, str]:
    return {
        **base,
        "dimension_id": dimension,
        "question_id": question,
        "question_text": text,
        "answer": "",
        "annotator": annotator,
        "notes": "",
    }


def _case_questions(
    data: Mapping[str, Any],
) -> tuple[list[tuple[str, str, Mapping[str, Any]]], dict[tuple[str, str], list[tuple[str, str]]]]:
    cases: dict[tuple[str, str], Mapping[str, Any]] = {}
    for case in data.get("cases") or []:
        key = (str(case.get("incident_id")), str(case.get("trial") or "1"))
        cases.setdefault(key, case)
    questions: dict[tuple[str, str], dict[str, str]] = {}
    for row in data.get("judgments") or []:
        key = (str(row.get("incident_id")), str(row.get("trial") or "1"))
        cases.setdefault(key, {})
        questions.setdefault(key, {}).setdefault(
            str(row.get("question_id")), str(row.get("dimension_id") or "")
        )
    ordered = [(inc, trial, extra) for (inc, trial), extra in cases.items()]
    return ordered, {k: list(v.items()) for k, v in questions.items()}


def _result_question_texts(data: Mapping[str, Any]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for row in data.get("judgments") or []:
        if row.get("question_text"):
            texts.setdefault(str(row["question_id"]), str(row["question_text"]))
    return texts


def _lookup_diagnosis(diagnoses: Mapping[Any, str] | None, incident: str, trial: str) -> str:
    if not diagnoses:
        return ""
    return diagnoses.get((incident, trial)) or diagnoses.get(incident) or ""
