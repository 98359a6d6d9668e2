"""The result file: one schema-versioned JSON document, written atomically.

Written and read piece by piece: `write_result` streams the cases, judgments and calls one at
a time into the same text `model_dump_json(indent=2)` would give, and `load_result` decodes
and validates them one at a time (`json_stream`), so neither holds the whole file's text or
its dicts. A 10,000-submission result is about 55 MB of JSON. Judgments and calls a run
spilled (`judge.checklist.spill`) are copied from its temporary file as the text they already
are; a large result file's are read into one the same way (`SPILL_FROM_ITEMS`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
import time
from array import array
from collections.abc import Iterable, Iterator, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ground_truth.errors import InputError
from ground_truth.loaders import validate
from ground_truth.reading import max_input_bytes, regular_file_size

from ..errors import StorageError, os_reason
from .items import Items, SpilledSeq, item_text
from .json_stream import JSONStreamError, ObjectReader
from .judgment import BELOW_GUARANTEE, Judgment, Usage, compact
from .scoring import CaseResult, IncidentSummary, OverallSummary
from .spill import SpillFile

SCHEMA_VERSION = "2"
READABLE_VERSIONS = ("1", "2")
"""Version 2 holds one judgment per (case, question) in `judgments` (a cascade's with the stage
that gave it and whether it abstained) and the members' and stages' own answers in
`member_judgments`; version 1 held both in `judgments`, and is read into the same shape."""
MAX_RESULT_MB = 1024
"""A result file larger than this (or than `--max-input-mb`, if higher) is refused: about
190,000 submissions' worth."""
SPILL_FROM_ITEMS = 5_000
"""A result read with more cases, judgments and calls than this keeps the rest (and those read so
far) in a spill file, as a run of 1,000 units or more does: 100,000 submissions' 900,000
judgments would take about 1 GB as pydantic objects."""


def tool_version() -> str:
    """The installed distribution's version, recorded in every result."""
    try:
        return version("diagnosis-judge")
    except PackageNotFoundError:
        return "0+unknown"


class CallRecord(BaseModel):
    """One (case, dimension) asked of a judge: how many attempts, what it cost, what failed."""

    incident_id: str
    trial: str
    dimension_id: str
    judge: str
    prompt_hash: str
    attempts: int
    error: str | None = None
    error_kind: str | None = None
    usage: Usage | None = None
    requests: int = Field(0, description="Provider requests sent, retries and re-asks included.")
    attempt_errors: dict[str, int] = Field(
        default_factory=dict, description="Failed requests or replies by kind, retried ones too."
    )
    cached: bool = Field(
        False,
        description="Answered from the store (or by an identical call in flight), not by a "
        "request of its own; `usage` is then what the answer cost when it was asked.",
    )
    cache_miss: str | None = Field(
        None, description="Why the store's earlier answer for this case and dimension was not used."
    )
    batch_id: str | None = Field(
        None, description="The provider batch job that answered this call (`--batch`)."
    )


class IncompleteCase(BaseModel):
    """A case with dimensions nobody judged because the run stopped early."""

    incident_id: str
    trial: str
    dimensions: list[str]


StopKind = Literal["interrupted", "provider", "max_errors", "max_cost", "storage", "input"]


class RunStop(BaseModel):
    """Why a run stopped starting calls before every call was made."""

    kind: StopKind
    message: str


class RunUsage(BaseModel):
    """What the run asked and spent. Tokens and cost count this run's requests only."""

    calls_planned: int = Field(0, description="Judge calls the store could not answer.")
    calls_made: int = 0
    cache_hits: int = 0
    requests: int = Field(0, description="Provider requests, retries and re-asks included.")
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = Field(
        0, description="Prompt tokens served from the provider's prompt cache (of prompt_tokens)."
    )
    cache_write_tokens: int = Field(0, description="Prompt tokens written to the provider's cache.")
    cost_usd: float | None = Field(None, description="None when any request's price is unknown.")
    cost_unknown_requests: int = 0
    batch: dict[str, Any] | None = Field(
        None,
        description="Batch mode (`--batch`): batches submitted and resumed, lines, answers, "
        "errors, calls lost by reason, HTTP requests, wall time, the batch discount and the "
        "reports of lost calls and batches left open.",
    )


class StageSummary(BaseModel):
    """One judge of the cascade in a run."""

    judge: str
    threshold: float | None = Field(description="On calibrated confidence; None: never answers.")
    calls: int = Field(description="Calls it was asked (a call asks one dimension or submission).")
    calls_from_store: int = 0
    answered: int = Field(description="Items whose answer it gave.")
    share: float = Field(description="Share of all items answered by it.")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = Field(
        None, description="Its calls' price (litellm); None when one of them has no known price."
    )


class CascadeSummary(BaseModel):
    """What a cascade did in a run, and the guarantee its answers carry."""

    guarantee: str = Field(description="question or verdict: what the guarantee is about.")
    target: float = Field(description="Agreement with the labels guaranteed on what is answered.")
    alpha: float = Field(description="It holds with probability at least 1 - alpha.")
    label_set: str = Field(description="Hash of the labels the calibration was made with.")
    calibration_coverage: float = Field(description="The coverage reached on those labels.")
    n_items: int = Field(description="Questions (or cases) the run asked a judge about.")
    answered: int
    abstained: int = Field(description="Left unscored: no judge was sure enough.")
    coverage: float | None
    stages: list[StageSummary]
    cost_usd: float | None = Field(description="All stages' calls; None when a price is unknown.")
    strongest: str
    strongest_cost_usd: float | None = Field(
        description="Estimated cost of asking the strongest judge every call of the run."
    )
    strongest_estimate: str = Field(description="How that estimate was made.")
    saved_usd: float | None = None
    saved_share: float | None = None
    shift: dict[str, Any] | None = Field(
        None,
        description="This run's cases against the calibration set's, on what both have without "
        "labels (`judge.judges.selective.shift`): an `agreement.shift.ShiftTest` as JSON "
        "(`shift_test()` reads it back); None when the calibration file holds no profile.",
    )
    guarantee_established: bool = Field(
        True,
        description="Whether the guarantee applies to this run: False when the run differs "
        "from the calibration set (a shift) or cannot be compared with it, unless "
        "--allow-shift; the answers stay either way.",
    )
    guarantee_note: str | None = Field(
        None, description="Why the guarantee is not established, or kept despite a shift."
    )

    def shift_test(self) -> Any:
        """The shift check as an `agreement.shift.ShiftTest` (None when there was none). Kept
        as plain data in the model: a run imports no statistics package before it needs one."""
        if self.shift is None:
            return None
        from agreement.shift import ShiftTest

        return ShiftTest.model_validate(self.shift)


class Orphan(BaseModel):
    """A submission whose incident id has no spec, and the file it came from if known."""

    incident_id: str
    trial: str
    file: str | None = None


class EvalResult(BaseModel):
    """A run's result file: config, overall/per-incident/per-case scores, every judgment and call,
    errors, usage, and whether the run is complete (`judge schema result` prints the schema)."""

    schema_version: str = SCHEMA_VERSION
    created_at: str
    tool_version: str
    complete: bool = Field(
        True,
        description="False when the run stopped before every case was judged or a question "
        "is unscored because its call failed (`overall.n_failed_questions`).",
    )
    config: dict[str, Any]
    overall: OverallSummary
    incidents: list[IncidentSummary]
    cases: Items[CaseResult]
    judgments: Items[Judgment] = Field(
        description="One answer per (case, question): the answer the run stands behind (a "
        "panel's vote; a cascade's kept answer with its `stage`, or its abstention)."
    )
    member_judgments: Items[Judgment] = Field(
        default_factory=list,
        description="A panel's members' and a cascade's stages' own answers, under their names; "
        "they do not enter the scores.",
    )
    calls: Items[CallRecord]
    errors: dict[str, int] = Field(default_factory=dict, description="Provider errors by kind.")
    attempt_errors: dict[str, int] = Field(
        default_factory=dict,
        description="Every failed request or unusable reply by kind, including retried ones.",
    )
    stopped: RunStop | None = Field(None, description="Why the run stopped before it was done.")
    exit_code: int | None = Field(None, description="The exit code `judge eval` gave this run.")
    exit_reason: str | None = Field(
        None, description="Why `judge eval` exited with a code other than 0."
    )
    incomplete: list[IncompleteCase] = Field(default_factory=list)
    usage: RunUsage | None = None
    missing: list[str] = Field(default_factory=list)
    orphans: list[Orphan] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    by_agent: dict[str, OverallSummary] | None = Field(
        None, description="The overall summary per agent, when two or more agents answered."
    )
    entities: dict[str, Any] | None = Field(
        None, description="Root-cause entity precision/recall/F1, when submissions name entities."
    )
    resolution: dict[str, Any] | None = Field(
        None, description="Programmatic resolution checks, when submissions carry trajectories."
    )
    cascade: CascadeSummary | None = Field(
        None,
        description="A cascade judge's run: coverage, each judge's answers and cost against the "
        "strongest judge alone, and the guarantee (`judge eval --judge-model cascade:...`).",
    )


def write_json_atomic(path: str | Path, data: str | Iterable[str], private: bool = False) -> None:
    """Write `data` (a text, or its pieces in order) via a temporary file in the same directory
    and rename: never a half-written file. `private`: readable by its owner only (a file of
    people's labels); otherwise as the umask says.

    Any failure (disk full, read-only, an exception while the pieces are produced, ...)
    leaves an earlier file at `path` as it was and no temporary file; an `OSError` becomes a
    `StorageError` naming `path`. Temporary files a killed run left beside the same target are
    removed first (`remove_stale_temps`)."""
    path = Path(path)
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(path)
        _write_and_rename(path, [data] if isinstance(data, str) else data, private)
    except OSError as exc:
        kept = "the earlier file is unchanged" if existed else "nothing was written"
        raise StorageError(path, f"{os_reason(exc)}; {kept}") from exc


def write_result(result: EvalResult, path: str | Path) -> None:
    """Write the result file atomically: a crash leaves the old file or the new one, whole."""
    write_json_atomic(path, result_json(result))


_STREAMED = {
    "cases": CaseResult,
    "judgments": Judgment,
    "member_judgments": Judgment,
    "calls": CallRecord,
}
"""The result's long lists, written and read one item at a time, and their items' model."""


def result_json(result: EvalResult) -> Iterator[str]:
    """`result.model_dump_json(indent=2)`, the same text, in pieces: one per case, judgment
    and call, so that the whole text never sits in memory."""
    yield "{"
    for n, name in enumerate(type(result).model_fields):
        yield f'{"," if n else ""}\n  "{name}": '
        items = getattr(result, name)
        if name in _STREAMED and items:
            texts = items.texts() if isinstance(items, SpilledSeq) else map(item_text, items)
            for i, text in enumerate(texts):
                yield f"{',' if i else '['}\n    {text}"
            yield "\n  ]"
        else:
            whole = result.model_dump_json(indent=2, include={name})
            yield whole[len(f'{{\n  "{name}": ') : -len("\n}")]
    yield "\n}"


def load_result(
    path: str | Path, extras: dict[str, Any] | None = None, spill_from: int = SPILL_FROM_ITEMS
) -> EvalResult:
    """Read a result file; a bad one is an `InputError` naming the file and the field.

    Cases, judgments and calls are validated one by one as they are read; past `spill_from`
    of them, they go to a spill file and the result holds `SpilledSeq`s over it
    (read-only sequences). Top-level members the model does not know (say, an `agreement`
    section another tool added) go into `extras` when a dict is given, else are ignored."""
    path = Path(path)
    _check_size(path)
    members: dict[str, Any] = {}
    kept = _Kept(spill_from)
    try:
        with path.open(encoding="utf-8") as handle:
            for key, value in ObjectReader(handle).members(_STREAMED):
                if isinstance(value, Iterator):  # one of the long lists, item by item
                    items = (
                        _item(_STREAMED[key], x, path, f"{key}.{i}") for i, x in enumerate(value)
                    )
                    value = kept.collect(key, items)
                if key == "schema_version":
                    _check_version(value, path)
                if key in EvalResult.model_fields:
                    members[key] = value
                elif extras is not None:
                    extras[key] = value
    except (OSError, UnicodeDecodeError, JSONStreamError) as exc:
        raise InputError(path, f"not a readable result file: {exc}") from None
    _check_version(members.get("schema_version"), path)
    result: EvalResult = validate(EvalResult, members, path)
    if result.schema_version == "1":
        _upgrade(result, kept)
    _check_consistent(result, path, kept.keys)
    return result


class _Kept:
    """The long lists of a result being read: in memory, then, once more than `spill_from`
    items were read, in a spill file (what was in memory of the list being read moves there).
    Each judgment's key is kept as its hash, for `_check_consistent`."""

    def __init__(self, spill_from: int) -> None:
        self.spill_from = spill_from
        self.file: SpillFile | None = None
        self.count = 0
        self.keys = array("q")

    def collect(self, key: str, items: Iterable[Any]) -> Sequence[Any]:
        kept: list[Any] = []
        numbers = array("q")
        for item in items:
            if key == "judgments":
                self.keys.append(hash(item.key))
            self.count += 1
            if self.file is None and self.count > self.spill_from:
                self.file = SpillFile()
            if self.file is None:
                kept.append(item)
                continue
            numbers.extend(self.file.add(k) for k in kept)
            kept = []
            numbers.append(self.file.add(item))
        if self.file is None or not numbers:
            return kept
        return self.file.sequence(_STREAMED[key], numbers)


def _upgrade(result: EvalResult, kept: _Kept) -> None:
    """A version-1 result in version 2's shape: the answers of judges other than the result's
    own (a panel's members, a cascade's stages) move to `member_judgments`, and a cascade's
    `below_guarantee` answers are marked abstained. The stage a version-1 cascade kept an
    answer from is not recorded, so `stage` stays None. Both lists are kept as the file's were
    read (in memory or spilled, by `kept`)."""
    own = (result.config.get("judge") or {}).get("label")
    if not own:
        return
    every = result.judgments
    kept.keys = array("q")
    result.judgments = kept.collect("judgments", (_own(j) for j in every if j.judge == own))
    result.member_judgments = kept.collect("member_judgments", (j for j in every if j.judge != own))


def _own(j: Judgment) -> Judgment:
    if j.answer is None and (j.unscored_reason or "").startswith(BELOW_GUARANTEE):
        j.abstained = True
    return j


def _check_consistent(result: EvalResult, path: Path, keys: array[int]) -> None:
    """A result whose cases disagree with its counts (a case given twice, by an edit or two
    files pasted together) would be reported with numbers that do not add up: refused.
    `keys` are the judgments' keys' hashes: only when two are equal are the judgments read
    again to find which."""
    first: dict[tuple[str, str], int] = {}
    for i, case in enumerate(result.cases):
        seen = first.setdefault((case.incident_id, case.trial), i)
        if seen != i:
            raise InputError(
                path,
                f"case {case.incident_id!r} trial {case.trial!r} is given twice (also "
                f"cases.{seen}); a result holds each case once (`judge merge` puts shards "
                "together)",
                field=f"cases.{i}",
            )
    if result.overall.n_cases != len(result.cases):
        raise InputError(
            path,
            f"says {result.overall.n_cases} cases, but the file holds {len(result.cases)}",
            field="overall.n_cases",
        )
    if not _repeated(keys):
        return
    answered: dict[tuple[str, str, str], int] = {}
    for i, j in enumerate(result.judgments):
        seen = answered.setdefault(j.key, i)
        if seen != i:
            raise InputError(
                path,
                f"{j.incident_id!r} trial {j.trial!r} question {j.question_id!r} is answered "
                f"twice (also judgments.{seen}); a result holds one answer per question, the "
                "judges' own answers in `member_judgments`",
                field=f"judgments.{i}",
            )


def _repeated(keys: array[int]) -> bool:
    """Whether two of `keys` are equal (sorted as 8 bytes a key, not a set's 60)."""
    if len(keys) < 10_000:
        return len(set(keys)) < len(keys)
    import numpy as np  # the scores need it anyway; ~0.07 s to import

    ordered = np.sort(np.frombuffer(keys, dtype=np.int64))
    return bool((ordered[1:] == ordered[:-1]).any())


def _item(model: type[Any], data: Any, path: Path, field: str) -> Any:
    return compact(validate(model, data, path, field))


def _check_version(version: Any, path: Path) -> None:
    if version not in READABLE_VERSIONS:
        readable = " or ".join(repr(v) for v in READABLE_VERSIONS)
        raise InputError(
            path, f"expected schema_version {readable}, got {version!r}", field="schema_version"
        )


def _check_size(path: Path) -> None:
    limit = max(max_input_bytes(), MAX_RESULT_MB * 2**20)
    size = regular_file_size(path)
    if size > limit:
        raise InputError(
            path,
            f"is {size / 2**20:.0f} MB, larger than the {limit / 2**20:g} MB a result file may "
            "be (raise --max-input-mb to read it); refused",
        )


# ------------------------------------------------------------------ the atomic writer's helpers

_IMPORTED = time.time()
"""Before this process made any temporary file of its own: only this module makes them."""


def _write_and_rename(path: Path, chunks: Iterable[str], private: bool = False) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            fcntl.flock(fd, fcntl.LOCK_EX)  # held until renamed: `remove_stale_temps` skips it
            if not private:  # mkstemp makes 0600; a result is an ordinary file
                os.fchmod(fd, 0o666 & ~_umask())
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temp_pattern(target: Path) -> re.Pattern[str]:
    """The names `_write_and_rename` gives its temporary files for `target` (mkstemp's 8
    random characters between our prefix and suffix), and nothing else."""
    return re.compile(re.escape(f".{target.name}.") + r"[a-z0-9_]{8}\.tmp")


def remove_stale_temps(target: Path) -> list[Path]:
    """Remove the temporary files a killed run left beside `target`: only names of our own
    pattern, only regular files older than this process, and only those no live writer
    holds locked. Best effort: a file that cannot be removed is left alone."""
    pattern = _temp_pattern(target)
    removed: list[Path] = []
    with contextlib.suppress(OSError), os.scandir(target.parent) as entries:
        for entry in entries:
            if pattern.fullmatch(entry.name) and _stale(entry) and _remove_unlocked(entry.path):
                removed.append(Path(entry.path))
    return removed


def _stale(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < _IMPORTED
    except OSError:
        return False


def _remove_unlocked(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.unlink(path)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True
