"""Rebuild the diagnoses of C2's unlicensed cases and check every case's spec (issue 22).

    python benchmarks/validity/real/extract_c2.py [--corpus DIR] [--mirror GIT_DIR]
                                                  [--download] [--check]

The AIOpsLab sessions of github.com/n1k0ver3E/ai_sre_data carry no licence, so their cases in
`cases/*.yaml` hold `diagnosis: null`. This script reads each such session at the commit the
case records, from (in this order) a verbatim copy in the shared corpus (`--corpus`, default
/work/shared/corpus), a git mirror of the repository as `fetch` leaves it (`--mirror`, e.g.
/work/.mirror/n1k0ver3E+ai_sre_data/repo), or, with `--download`, raw.githubusercontent.com; it
takes the last assistant message of the trace that calls `submit(` (the case's `cut`), and writes
every case file, with the text filled in, to `.cache/cases/<source>.yaml` (git-ignored).

`--check` then loads every case's spec with the project's format adapter (`spec_path`:
repo-relative, or `corpus:<path>` under `--corpus`) and fails (exit 1) when the case's
`incident_id` is not among the ids the adapter gives. Exit 2 when a session cannot be found.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def read_cases(folder: Path) -> dict[str, list[dict[str, Any]]]:
    return {f.stem: yaml.safe_load(f.read_text()) for f in sorted(folder.glob("*.yaml"))}


def corpus_sessions(corpus: Path) -> dict[str, str]:
    """Session id -> text of the verbatim session files in the corpus."""
    out = {}
    for file in sorted((corpus / "aiopslab").glob("ai_sre_data_session_*.json")):
        text = file.read_text(encoding="utf-8")
        out[json.loads(text)["session_id"]] = text
    return out


def session_text(
    origin: dict[str, str], copies: dict[str, str], mirror: Path | None, download: bool
) -> str | None:
    session_id = origin["locator"].split()[1].rstrip(":")
    if session_id in copies:
        return copies[session_id]
    if mirror is not None:
        shown = subprocess.run(
            ["git", "--git-dir", str(mirror), "show", f"{origin['commit']}:{origin['path']}"],
            capture_output=True,
            text=True,
        )
        if shown.returncode == 0:
            return shown.stdout
    if download:
        url = RAW.format(
            repo=origin["repo"], commit=origin["commit"], path=urllib.parse.quote(origin["path"])
        )
        with urllib.request.urlopen(url, timeout=60) as response:
            return str(response.read().decode("utf-8"))
    return None


def final_submit(session: dict[str, Any]) -> str:
    """The last assistant message of the trace that calls submit(, unchanged."""
    calls = [
        item["content"]
        for item in session.get("trace") or []
        if item.get("role") == "assistant" and "submit(" in str(item.get("content"))
    ]
    if not calls:
        raise ValueError(f"session {session.get('session_id')} never calls submit(")
    return str(calls[-1])


def fill(
    cases: dict[str, list[dict[str, Any]]],
    corpus: Path,
    mirror: Path | None,
    download: bool,
) -> list[str]:
    """Fill every null diagnosis in place; the case ids whose session was not found."""
    copies = corpus_sessions(corpus) if (corpus / "aiopslab").is_dir() else {}
    missing = []
    for entries in cases.values():
        for case in entries:
            if case.get("diagnosis") is not None:
                continue
            text = session_text(case["origin"], copies, mirror, download)
            if text is None:
                missing.append(case["case"])
                continue
            case["diagnosis"] = final_submit(json.loads(text))
    return missing


def spec_ids(
    case: dict[str, Any], corpus: Path, cache: dict[tuple[str, str], set[str]]
) -> set[str]:
    from ground_truth import load_specs

    path, fmt = case["spec_path"], case["format"]
    if (path, fmt) not in cache:
        file = corpus / path[len("corpus:") :] if path.startswith("corpus:") else ROOT / path
        cache[(path, fmt)] = {spec.id for spec in load_specs(file, format=fmt)}
    return cache[(path, fmt)]


def check(cases: dict[str, list[dict[str, Any]]], corpus: Path) -> int:
    cache: dict[tuple[str, str], set[str]] = {}
    bad = 0
    for source, entries in cases.items():
        unknown = [c["case"] for c in entries if c["incident_id"] not in spec_ids(c, corpus, cache)]
        bad += len(unknown)
        status = "ok" if not unknown else f"incident id not in spec: {', '.join(unknown)}"
        print(f"{source}: {len(entries)} cases, format {entries[0]['format']}: {status}")
    return 1 if bad else 0


def write(cases: dict[str, list[dict[str, Any]]], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for source, entries in cases.items():
        text = yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=100)
        (out / f"{source}.yaml").write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus"))
    parser.add_argument("--mirror", type=Path, help="git dir of n1k0ver3E/ai_sre_data")
    parser.add_argument("--download", action="store_true", help="fetch raw files from GitHub")
    parser.add_argument("--cases", type=Path, default=HERE / "cases")
    parser.add_argument("--out", type=Path, default=HERE / ".cache" / "cases")
    parser.add_argument("--check", action="store_true", help="load every spec with its adapter")
    args = parser.parse_args()
    if args.mirror is not None and not args.mirror.is_dir():
        print(f"--mirror {args.mirror}: not a directory (expected a git dir)", file=sys.stderr)
        return 2
    cases = read_cases(args.cases)
    missing = fill(cases, args.corpus, args.mirror, args.download)
    if missing:
        print(
            f"{len(missing)} sessions not found (give --mirror or --download): "
            + ", ".join(missing),
            file=sys.stderr,
        )
        return 2
    write(cases, args.out)
    print(f"wrote {sum(map(len, cases.values()))} cases to {args.out}")
    return check(cases, args.corpus) if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
