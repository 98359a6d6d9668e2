"""Rebuild the agent text of collector C1's cases whose source has no licence file.

Those cases ship `diagnosis: null` in `cases/<source>.yaml`; this script reads each one's
`origin` (repository, commit, path, locator) and writes the text, byte for byte as the locator
defines it, into `.cache/` beside this file (git-ignored, never committed):

    .cache/<case>.txt              the diagnosis text of one case
    .cache/cases/<source>.yaml     the source's cases with `diagnosis` filled in

    python benchmarks/validity/real/extract_c1.py [--mirror DIR ...] [--corpus DIR]
                                                  [--raw-dir DIR] [--download] [CASE ...]

Where a file is read from, first that works:
- `--corpus DIR` (default ../shared/corpus of the main checkout): the files the shared corpus
  holds verbatim (`CORPUS_COPIES` below);
- `--mirror DIR`: a git directory as the `fetch` tool leaves it
  (`/work/.mirror/<owner>+<name>/repo`), read with `git show <commit>:<path>`;
- `--raw-dir DIR`: files saved as `DIR/<owner>+<name>/<commit>/<path>`;
- `--download`: https://raw.githubusercontent.com/<owner>/<name>/<commit>/<path>.

Locators (`origin.locator`):
- `file`: the whole file;
- `json:<key>.<key>...`: one JSON value (a key, or a list index), re-serialised with indent 2;
- `csv-column:<column>`: that column of the file's only row, whose `problem_id` must equal the
  case's `incident_id`;
- `codex-final-message`: the last assistant message of a Codex CLI rollout (`.jsonl`);
- `codex-add-file:<name>`: the content of the rollout's `apply_patch` call that added file
  `<name>` and was answered "Success".

A case with `diagnosis_sha256` is checked against it. Exit 0 when every requested case was
rebuilt, 1 when some could not be (each one named with the reason), 2 on a bad case file.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
CACHE = HERE / ".cache"
DEFAULT_CORPUS = Path("/work/shared/corpus")

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


class BadCaseFile(Exception):
    """A case file that does not have the shape this script reads."""


class Unavailable(Exception):
    """The source file could not be read from any place offered, or the locator failed."""


@dataclass(frozen=True)
class Origin:
    repo: str
    commit: str
    path: str
    locator: str


@dataclass(frozen=True)
class Sources:
    corpus: Path
    mirrors: dict[str, Path]
    raw_dir: Path | None
    download: bool


def read_cases(path: Path) -> list[dict[str, Any]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(isinstance(c, dict) for c in data):
        raise BadCaseFile(f"{path}: expected a YAML list of case mappings")
    for i, case in enumerate(data):
        origin = case.get("origin")
        if not isinstance(case.get("case"), str) or not isinstance(origin, dict):
            raise BadCaseFile(f"{path}: [{i}] needs a string `case` and an `origin` mapping")
        missing = [k for k in ("repo", "commit", "path", "locator") if not origin.get(k)]
        if missing:
            raise BadCaseFile(f"{path}: [{i}].origin lacks {', '.join(missing)}")
    return data


def fetch_bytes(origin: Origin, sources: Sources) -> bytes:
    """The file at `origin`, from the first place that has it."""
    tried: list[str] = []
    copy = CORPUS_COPIES.get((origin.repo, origin.commit, origin.path))
    if copy is not None:
        if (sources.corpus / copy).is_file():
            return (sources.corpus / copy).read_bytes()
        tried.append(f"corpus {sources.corpus / copy} (absent)")
    mirror = sources.mirrors.get(origin.repo)
    if mirror is not None:
        shown = subprocess.run(
            ["git", "--git-dir", str(mirror), "show", f"{origin.commit}:{origin.path}"],
            capture_output=True,
        )
        if shown.returncode == 0:
            return shown.stdout
        tried.append(f"mirror {mirror} ({shown.stderr.decode(errors='replace').strip()})")
    if sources.raw_dir is not None:
        raw = sources.raw_dir / origin.repo.replace("/", "+") / origin.commit / origin.path
        if raw.is_file():
            return raw.read_bytes()
        tried.append(f"raw dir {raw} (absent)")
    if sources.download:
        url = f"https://raw.githubusercontent.com/{origin.repo}/{origin.commit}/{origin.path}"
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                return bytes(response.read())
        except OSError as exc:
            tried.append(f"download {url} ({exc})")
    raise Unavailable("no source holds the file: " + ("; ".join(tried) or "none offered"))


def locate(text: str, locator: str, incident_id: str) -> str:
    """The diagnosis inside a file's text, as `locator` names it."""
    kind, _, arg = locator.partition(":")
    if kind == "file":
        return text
    if kind == "json":
        return json.dumps(json_at(json.loads(text), arg), indent=2, ensure_ascii=False)
    if kind == "csv-column":
        return csv_cell(text, arg, incident_id)
    if kind == "codex-final-message":
        return codex_final_message(text)
    if kind == "codex-add-file":
        return codex_added_file(text, arg)
    raise Unavailable(f"unknown locator {locator!r}")


def json_at(value: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        try:
            value = value[int(key)] if isinstance(value, list) else value[key]
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise Unavailable(f"json path {dotted!r}: no {key!r}") from exc
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
        patch = json.loads(p["arguments"])["input"]
        lines = patch.splitlines()
        if header in lines:
            start = lines.index(header) + 1
            body = []
            for line in lines[start:]:
                if not line.startswith("+"):
                    break
                body.append(line[1:])
            return "\n".join(body) + "\n"
    raise Unavailable(f"no successful apply_patch added {name}")


def rebuild(case: dict[str, Any], sources: Sources) -> str:
    o = case["origin"]
    origin = Origin(str(o["repo"]), str(o["commit"]), str(o["path"]), str(o["locator"]))
    raw = fetch_bytes(origin, sources).decode("utf-8")
    text = locate(raw, origin.locator, str(case.get("incident_id", "")))
    expected = case.get("diagnosis_sha256")
    if expected and hashlib.sha256(text.encode("utf-8")).hexdigest() != expected:
        raise Unavailable("rebuilt text does not match diagnosis_sha256")
    return text


def mirror_map(dirs: list[Path]) -> dict[str, Path]:
    """Repository owner/name -> mirror git dir, from `.../<owner>+<name>/repo` paths."""
    found = {}
    for d in dirs:
        name = d.parent.name if d.name == "repo" else d.name
        if "+" not in name:
            raise BadCaseFile(f"--mirror {d}: expected a directory named <owner>+<name>[/repo]")
        found[name.replace("+", "/", 1)] = d
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case ids to rebuild (default: every null one)")
    parser.add_argument("--mirror", type=Path, action="append", default=[])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--raw-dir", type=Path)
    parser.add_argument("--download", action="store_true")
    args = parser.parse_args(argv)
    try:
        sources = Sources(args.corpus, mirror_map(args.mirror), args.raw_dir, args.download)
        files = {p: read_cases(p) for p in sorted(CASES.glob("*.yaml"))}
    except (BadCaseFile, yaml.YAMLError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    wanted = set(args.cases)
    known = {c["case"] for cases in files.values() for c in cases}
    if unknown := wanted - known:
        print(f"error: unknown case(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    failed = 0
    (CACHE / "cases").mkdir(parents=True, exist_ok=True)
    for path, cases in files.items():
        for case in cases:
            if case.get("diagnosis") is not None or (wanted and case["case"] not in wanted):
                continue
            try:
                text = rebuild(case, sources)
            except (Unavailable, UnicodeDecodeError, json.JSONDecodeError, KeyError) as exc:
                failed += 1
                print(f"{case['case']}: not rebuilt: {exc}", file=sys.stderr)
                continue
            (CACHE / f"{case['case']}.txt").write_text(text, encoding="utf-8")
            case["diagnosis"] = text
        out = CACHE / "cases" / path.name
        out.write_text(yaml.safe_dump(cases, sort_keys=False, allow_unicode=True, width=100))
    print(f"rebuilt into {CACHE}; {failed} case(s) not rebuilt")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
