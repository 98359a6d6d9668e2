"""Rebuild the diagnoses of C3's unlicensed cases and check their specs (issue 22).

    python benchmarks/validity/real/extract_c3.py [--mirror GIT_DIR] [--raw-dir DIR]
                                                  [--download] [--corpus DIR] [--check]

The run reports of github.com/martinimarcello00/SRE-agent carry no licence, so C3's cases hold
`diagnosis: null`. For each case whose `origin.repo` is that repository, this script reads the
report at the recorded commit from the first place that has it: a git mirror as `fetch` leaves it
(`--mirror`, default /work/.mirror/martinimarcello00+SRE-agent/repo when present), files saved
as `DIR/<owner>+<name>/<commit>/<path>` (`--raw-dir`), or raw.githubusercontent.com
(`--download`). The locator `json-string:<key>.<key>...` names the JSON string that is the
diagnosis, taken unchanged; it must match the case's `diagnosis_sha256`.

Writes `.cache/<case>.txt` and `.cache/cases/<source>.yaml` (git-ignored) for C3's sources only,
so the other collectors' rebuilt files are left alone. `--check` loads every C3 case's spec with
the project's adapter and fails when the incident id is not among the ids it gives.
Exit 0 when every case was rebuilt (and checked), 1 when some were not, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import hashlib
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
CACHE = HERE / ".cache"
REPO = "martinimarcello00/SRE-agent"
DEFAULT_MIRROR = Path("/work/.mirror/martinimarcello00+SRE-agent/repo")
RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


class Unavailable(Exception):
    """The report could not be read from any place offered, or its text does not match."""


def c3_sources(folder: Path) -> dict[Path, list[dict[str, Any]]]:
    """Case files holding at least one case from REPO."""
    found = {}
    for file in sorted(folder.glob("*.yaml")):
        cases = yaml.safe_load(file.read_text(encoding="utf-8"))
        if any(c.get("origin", {}).get("repo") == REPO for c in cases):
            found[file] = cases
    return found


def report_bytes(
    origin: dict[str, str], mirror: Path | None, raw_dir: Path | None, download: bool
) -> bytes:
    tried = []
    if mirror is not None:
        shown = subprocess.run(
            ["git", "--git-dir", str(mirror), "show", f"{origin['commit']}:{origin['path']}"],
            capture_output=True,
        )
        if shown.returncode == 0:
            return shown.stdout
        tried.append(f"mirror {mirror} ({shown.stderr.decode(errors='replace').strip()})")
    if raw_dir is not None:
        raw = raw_dir / REPO.replace("/", "+") / origin["commit"] / origin["path"]
        if raw.is_file():
            return raw.read_bytes()
        tried.append(f"raw dir {raw} (absent)")
    if download:
        url = RAW.format(
            repo=REPO, commit=origin["commit"], path=urllib.parse.quote(origin["path"])
        )
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                return bytes(response.read())
        except OSError as exc:
            tried.append(f"download {url} ({exc})")
    raise Unavailable("no source holds the report: " + ("; ".join(tried) or "none offered"))


def diagnosis(case: dict[str, Any], report: bytes) -> str:
    kind, _, dotted = case["origin"]["locator"].split(" ")[0].partition(":")
    if kind != "json-string":
        raise Unavailable(f"unknown locator {case['origin']['locator']!r}")
    value: Any = json.loads(report)
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            raise Unavailable(f"the report has no {dotted}")
        value = value[key]
    if not isinstance(value, str):
        raise Unavailable(f"{dotted} is not a string")
    if hashlib.sha256(value.encode("utf-8")).hexdigest() != case.get("diagnosis_sha256"):
        raise Unavailable("rebuilt text does not match diagnosis_sha256")
    return value


def spec_file(spec_path: str, corpus: Path) -> Path:
    """`corpus:<path>` under the shared corpus, anything else relative to the repository."""
    if spec_path.startswith("corpus:"):
        return corpus / spec_path.removeprefix("corpus:")
    return ROOT / spec_path


def check(sources: dict[Path, list[dict[str, Any]]], corpus: Path) -> int:
    from ground_truth import load_specs

    loaded: dict[tuple[str, str], set[str]] = {}
    bad = 0
    for file, cases in sources.items():
        unknown = []
        for case in cases:
            path, fmt = case["spec_path"], case["format"]
            if (path, fmt) not in loaded:
                specs = load_specs(spec_file(path, corpus), format=fmt)
                loaded[(path, fmt)] = {spec.id for spec in specs}
            if case["incident_id"] not in loaded[(path, fmt)]:
                unknown.append(case["case"])
        bad += len(unknown)
        status = "ok" if not unknown else f"incident id not in spec: {', '.join(unknown)}"
        print(f"{file.stem}: {len(cases)} cases, format {cases[0]['format']}: {status}")
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, help=f"git dir of {REPO}")
    parser.add_argument("--raw-dir", type=Path)
    parser.add_argument("--download", action="store_true", help="fetch raw files from GitHub")
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus"))
    parser.add_argument("--cases", type=Path, default=HERE / "cases")
    parser.add_argument("--check", action="store_true", help="load every spec with its adapter")
    args = parser.parse_args()
    mirror = args.mirror or (DEFAULT_MIRROR if DEFAULT_MIRROR.is_dir() else None)
    if mirror is not None and not mirror.is_dir():
        print(f"--mirror {mirror}: not a directory (expected a git dir)", file=sys.stderr)
        return 2
    sources = c3_sources(args.cases)
    failed = 0
    (CACHE / "cases").mkdir(parents=True, exist_ok=True)
    for file, cases in sources.items():
        for case in cases:
            if case.get("diagnosis") is not None or case["origin"]["repo"] != REPO:
                continue
            try:
                raw = report_bytes(case["origin"], mirror, args.raw_dir, args.download)
                case["diagnosis"] = diagnosis(case, raw)
            except (Unavailable, json.JSONDecodeError, UnicodeDecodeError) as exc:
                failed += 1
                print(f"{case['case']}: not rebuilt: {exc}", file=sys.stderr)
                continue
            (CACHE / f"{case['case']}.txt").write_text(case["diagnosis"], encoding="utf-8")
        text = yaml.safe_dump(cases, sort_keys=False, allow_unicode=True, width=100)
        (CACHE / "cases" / file.name).write_text(text, encoding="utf-8")
    total = sum(len(c) for c in sources.values())
    print(f"rebuilt {total - failed} of {total} cases into {CACHE}")
    if args.check:
        failed += check(sources, args.corpus)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
