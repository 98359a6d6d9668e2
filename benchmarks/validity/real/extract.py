"""Rebuild the agent text of every real-agent case that ships `diagnosis: null`.

    python benchmarks/validity/real/extract.py [--corpus DIR] [--mirror DIR ...]
                                               [--raw-dir DIR] [--download] [CASE ...]

A source without a licence ships its cases with `diagnosis: null`; each case's `origin` records
the repository, commit, path and a locator of the agent's text. This script reads that file from
the first place that has it, cuts the text out as the locator says, checks it against the case's
`diagnosis_sha256`, and writes it beside this file, git-ignored and never committed:

    .cache/<case>.txt              the diagnosis text of one case
    .cache/cases/<source>.yaml     the source's cases with `diagnosis` filled in

Where a file is read from, in this order:
- the shared corpus (`--corpus`, default $DIAGNOSIS_JUDGE_CORPUS, else ../shared/corpus beside the
  checkout): the files it holds verbatim (`CORPUS_COPIES`);
- `--mirror DIR` (repeatable): a git directory as the `fetch` tool leaves it
  (`MIRRORS/<owner>+<name>/repo`), or a folder of such mirrors (`MIRRORS`), read
  with `git show <commit>:<path>`;
- `--raw-dir DIR`: files saved as `DIR/<owner>+<name>/<commit>/<path>`;
- `--download`: https://raw.githubusercontent.com/<owner>/<name>/<commit>/<path>.

Locators (`origin.locator`; what follows a space is a note):
- `file`: the whole file;
- `json:<key>.<key>...`: one JSON value (a key, or a list index), re-serialised with indent 2;
- `json-string:<key>.<key>...`: one JSON string, unchanged;
- `csv-column:<column>`: that column of the file's only row, whose `problem_id` is the case's
  `incident_id`;
- `codex-final-message`: the last assistant message of a Codex CLI rollout (`.jsonl`);
- `codex-add-file:<name>`: what the rollout's `apply_patch` call that added `<name>` and was
  answered "Success" wrote;
- `session <id>: ...`: the last assistant message of an AIOpsLab session's trace that calls
  `submit(`.

Prints one line per source. Exit 0 when every requested case was rebuilt, 1 when some could not
be (each named with the reason), 2 on a bad argument or case file.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
CASES = HERE / "cases"
CACHE = HERE / ".cache"
CORPUS_ENV = "DIAGNOSIS_JUDGE_CORPUS"
RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"
REBUILD = "python benchmarks/validity/real/extract.py --mirror MIRRORS --raw-dir DIR"

# (repo, commit, path) -> the verbatim copy of that file in the shared corpus.
CORPUS_COPIES: dict[tuple[str, str, str], str] = {
    **{
        (
            "itbench-hub/ITBench-Evaluations",
            "7223c940fae815e2daac903194fd70a4c33002e1",
            f"data/{i}/{t}/outputs/agent_output.json",
        ): f"itbench/agent_outputs/itbench-evaluations_data/{i}/{t}/outputs/agent_output.json"
        for i in (1, 2)
        for t in (1, 2)
    },
    (
        "itbench-hub/ITBench-SRE-Agent",
        "29c782af74f4f204457e3c7a87084f925a3919f9",
        "agent_outputs/2/1/agent_output.json",
    ): "itbench/agent_outputs/itbench-sre-agent_pr11/2/1/agent_output.json",
    (
        "itbench-hub/ITBench-Agentbeats-Leaderboard-v2",
        "6dc403cb0ec8a5e22e39dd38ea17ab7ab319dd68",
        "results/itbench-hub-20260130-211252.json",
    ): "itbench/judge_results/agentbeats-leaderboard-v2/itbench-hub-20260130-211252.json",
    (
        "itbench-hub/ITBench-Agentbeats-Leaderboard-v2",
        "b1ea5b7744f7d989f12bc2fd0053b89ffa3d2b01",
        "results/itbench-hub-20260130-214037.json",
    ): "itbench/judge_results/agentbeats-leaderboard-v2/itbench-hub-20260130-214037.json",
}


class BadInput(Exception):
    """A case file or argument this script cannot use."""


class Unavailable(Exception):
    """No place offered holds the file, or the locator or the checksum failed."""


def default_corpus() -> Path:
    configured = os.environ.get(CORPUS_ENV)
    return Path(configured).expanduser() if configured else REPO.parent / "shared" / "corpus"


@dataclass(frozen=True)
class Origin:
    repo: str
    commit: str
    path: str
    locator: str

    @classmethod
    def of(cls, case: dict[str, Any]) -> Origin:
        o = case.get("origin")
        if not isinstance(o, dict):
            raise BadInput(f"{case.get('case')}: no `origin` mapping")
        missing = [k for k in ("repo", "commit", "path", "locator") if not o.get(k)]
        if missing:
            raise BadInput(f"{case.get('case')}: origin lacks {', '.join(missing)}")
        return cls(str(o["repo"]), str(o["commit"]), str(o["path"]), str(o["locator"]))


@dataclass(frozen=True)
class Sources:
    """The places a file may be read from, in the order they are tried."""

    corpus: Path | None = None
    mirrors: dict[str, Path] = field(default_factory=dict)
    raw_dir: Path | None = None
    download: bool = False


@dataclass(frozen=True)
class Rebuilt:
    text: str
    place: str  # corpus, mirror, raw-dir or download


# --- reading a file at a commit --------------------------------------------------------------


def fetch_bytes(origin: Origin, sources: Sources) -> tuple[bytes, str]:
    """The file at `origin` and the kind of place it came from."""
    tried: list[str] = []
    copy = CORPUS_COPIES.get((origin.repo, origin.commit, origin.path))
    if sources.corpus is not None:
        if copy is None:
            tried.append("the corpus holds no copy")
        elif (sources.corpus / copy).is_file():
            return (sources.corpus / copy).read_bytes(), "corpus"
        else:
            tried.append(f"corpus {sources.corpus / copy} (absent)")
    mirror = sources.mirrors.get(origin.repo)
    if mirror is not None:
        shown = subprocess.run(
            ["git", "--git-dir", str(mirror), "show", f"{origin.commit}:{origin.path}"],
            capture_output=True,
            check=False,
        )
        if shown.returncode == 0:
            return shown.stdout, "mirror"
        tried.append(f"mirror {mirror} ({shown.stderr.decode(errors='replace').strip()})")
    if sources.raw_dir is not None:
        raw = sources.raw_dir / origin.repo.replace("/", "+") / origin.commit / origin.path
        if raw.is_file():
            return raw.read_bytes(), "raw-dir"
        tried.append(f"raw dir {raw} (absent)")
    if sources.download:
        url = RAW_URL.format(
            repo=origin.repo, commit=origin.commit, path=urllib.parse.quote(origin.path)
        )
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                return bytes(response.read()), "download"
        except OSError as exc:
            tried.append(f"download {url} ({exc})")
    raise Unavailable("no place offered holds the file: " + ("; ".join(tried) or "none offered"))


def mirror_map(dirs: Sequence[Path]) -> dict[str, Path]:
    """`owner/name` -> git dir, from mirrors (`<owner>+<name>[/repo]`) or folders of them."""
    found: dict[str, Path] = {}
    for d in dirs:
        if not d.is_dir():
            raise BadInput(f"--mirror {d}: not a directory")
        named = d.parent.name if d.name == "repo" else d.name
        if "+" in named:
            found[named.replace("+", "/", 1)] = d
            continue
        children = sorted(c for c in d.iterdir() if "+" in c.name and (c / "repo").is_dir())
        if not children:
            raise BadInput(
                f"--mirror {d}: expected <owner>+<name>[/repo], or a folder holding such mirrors"
            )
        found.update({c.name.replace("+", "/", 1): c / "repo" for c in children})
    return found


# --- cutting the diagnosis out of a file: one function per locator kind ----------------------


def json_at(value: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        try:
            value = value[int(key)] if isinstance(value, list) else value[key]
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise Unavailable(f"json path {dotted!r}: no {key!r}") from exc
    return value


def json_value(text: str, dotted: str) -> str:
    return json.dumps(json_at(json.loads(text), dotted), indent=2, ensure_ascii=False)


def json_string(text: str, dotted: str) -> str:
    value = json_at(json.loads(text), dotted)
    if not isinstance(value, str):
        raise Unavailable(f"{dotted} is not a string")
    return value


def csv_cell(text: str, column: str, incident_id: str) -> str:
    rows = list(csv.DictReader(io.StringIO(text)))
    if len(rows) != 1:
        raise Unavailable(f"expected one CSV row, found {len(rows)}")
    row = rows[0]
    if row.get("problem_id") != incident_id:
        raise Unavailable(f"row is problem {row.get('problem_id')!r}, not {incident_id!r}")
    if not row.get(column):
        raise Unavailable(f"column {column!r} is missing or empty")
    return row[column]


def rollout_payloads(text: str) -> list[dict[str, Any]]:
    payloads = []
    for line in text.splitlines():
        if line.strip():
            payload = json.loads(line).get("payload")
            if isinstance(payload, dict):
                payloads.append(payload)
    return payloads


def codex_final_message(text: str) -> str:
    messages = [
        "".join(
            part.get("text", "")
            for part in p.get("content", [])
            if part.get("type") == "output_text"
        )
        for p in rollout_payloads(text)
        if p.get("type") == "message" and p.get("role") == "assistant"
    ]
    messages = [m for m in messages if m]
    if not messages:
        raise Unavailable("the rollout has no assistant message")
    return messages[-1]


def codex_added_file(text: str, name: str) -> str:
    payloads = rollout_payloads(text)
    succeeded = {
        p.get("call_id")
        for p in payloads
        if p.get("type") == "function_call_output" and "Success" in str(p.get("output", ""))
    }
    header = f"*** Add File: {name}"
    for p in payloads:
        if p.get("type") != "function_call" or p.get("name") != "apply_patch":
            continue
        if p.get("call_id") not in succeeded:
            continue
        lines = json.loads(p["arguments"])["input"].splitlines()
        if header in lines:
            body = []
            for line in lines[lines.index(header) + 1 :]:
                if not line.startswith("+"):
                    break
                body.append(line[1:])
            return "\n".join(body) + "\n"
    raise Unavailable(f"no successful apply_patch added {name}")


def aiopslab_final_submit(text: str) -> str:
    """The last assistant message of the session's trace that calls submit(, unchanged."""
    session = json.loads(text)
    calls = [
        item["content"]
        for item in session.get("trace") or []
        if item.get("role") == "assistant" and "submit(" in str(item.get("content"))
    ]
    if not calls:
        raise Unavailable(f"session {session.get('session_id')} never calls submit(")
    return str(calls[-1])


LOCATORS: dict[str, Callable[[str, str, str], str]] = {
    "file": lambda text, _arg, _incident: text,
    "json": lambda text, arg, _incident: json_value(text, arg),
    "json-string": lambda text, arg, _incident: json_string(text, arg),
    "csv-column": csv_cell,
    "codex-final-message": lambda text, _arg, _incident: codex_final_message(text),
    "codex-add-file": lambda text, arg, _incident: codex_added_file(text, arg),
    "session": lambda text, _arg, _incident: aiopslab_final_submit(text),
}


def locate(text: str, locator: str, incident_id: str) -> str:
    """The diagnosis inside a file's text, as `locator` names it (text after a space is a note,
    except for `session`, whose id follows the space)."""
    head = locator.split(" ", 1)[0]
    kind, _, arg = head.partition(":")
    if kind not in LOCATORS:
        raise Unavailable(f"unknown locator {locator!r}")
    return LOCATORS[kind](text, arg, incident_id)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def rebuild(case: dict[str, Any], sources: Sources) -> Rebuilt:
    """The case's text, checked against its `diagnosis_sha256` when it has one."""
    origin = Origin.of(case)
    raw, place = fetch_bytes(origin, sources)
    try:
        text = locate(raw.decode("utf-8"), origin.locator, str(case.get("incident_id", "")))
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError) as exc:
        raise Unavailable(
            f"{place} copy cannot be read by locator {origin.locator!r}: {exc}"
        ) from exc
    expected = case.get("diagnosis_sha256")
    if expected and sha256(text) != expected:
        raise Unavailable(f"the text from the {place} does not match diagnosis_sha256")
    return Rebuilt(text, place)


# --- the command -----------------------------------------------------------------------------


def read_case_files(folder: Path = CASES) -> dict[str, list[dict[str, Any]]]:
    """`{source: cases}` from `folder/<source>.yaml`."""
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise BadInput(f"{path}: cannot read: {exc}") from exc
        if not isinstance(data, list) or not all(
            isinstance(c, dict) and isinstance(c.get("case"), str) for c in data
        ):
            raise BadInput(f"{path}: expected a YAML list of cases, each with a string `case`")
        out[path.stem] = data
    return out


def rebuild_source(
    cases: list[dict[str, Any]], sources: Sources, wanted: set[str], cache: Path
) -> tuple[Counter[str], list[str]]:
    """Rebuild a source's null cases into `cache`: (cases per place, failures with reasons)."""
    places: Counter[str] = Counter()
    failures = []
    for case in cases:
        if case.get("diagnosis") is not None or (wanted and case["case"] not in wanted):
            continue
        try:
            rebuilt = rebuild(case, sources)
        except (Unavailable, BadInput) as exc:
            failures.append(f"{case['case']}: {exc}")
            continue
        (cache / f"{case['case']}.txt").write_text(rebuilt.text, encoding="utf-8")
        case["diagnosis"] = rebuilt.text
        places[rebuilt.place] += 1
    return places, failures


def source_line(source: str, cases: list[dict[str, Any]], places: Counter[str], failed: int) -> str:
    null = sum(c.get("diagnosis") is None for c in cases) + sum(places.values())
    unchecked = sum(
        1 for c in cases if c.get("diagnosis") is not None and not c.get("diagnosis_sha256")
    )
    if not null:
        return f"{source}: {len(cases)} cases, text shipped"
    where = ", ".join(f"{n} from the {p}" for p, n in sorted(places.items())) or "none"
    line = f"{source}: {len(cases)} cases, {sum(places.values())} of {null} rebuilt ({where})"
    if failed:
        line += f"; {failed} NOT rebuilt"
    if unchecked and places:
        line += f"; {unchecked} without diagnosis_sha256 (not checked)"
    return line


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cases", nargs="*", help="case ids to rebuild (default: every null one)")
    p.add_argument("--corpus", type=Path, default=default_corpus(), help="the shared corpus")
    p.add_argument("--mirror", type=Path, action="append", default=[], help="git mirror(s)")
    p.add_argument("--raw-dir", type=Path, help="files saved as <owner>+<name>/<commit>/<path>")
    p.add_argument("--download", action="store_true", help="fetch from raw.githubusercontent.com")
    p.add_argument("--cases-dir", type=Path, default=CASES, help=argparse.SUPPRESS)
    p.add_argument("--cache", type=Path, default=CACHE, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        sources = Sources(args.corpus, mirror_map(args.mirror), args.raw_dir, args.download)
        files = read_case_files(args.cases_dir)
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    wanted = set(args.cases)
    if unknown := wanted - {c["case"] for cases in files.values() for c in cases}:
        print(f"error: unknown case(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    (args.cache / "cases").mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    for source, cases in files.items():
        places, failed = rebuild_source(cases, sources, wanted, args.cache)
        failures += failed
        print(source_line(source, cases, places, len(failed)))
        if places:
            text = yaml.safe_dump(cases, sort_keys=False, allow_unicode=True, width=100)
            (args.cache / "cases" / f"{source}.yaml").write_text(text, encoding="utf-8")
    for failure in failures:
        print(f"not rebuilt: {failure}", file=sys.stderr)
    print(f"{len(failures)} case(s) not rebuilt; texts in {args.cache}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
