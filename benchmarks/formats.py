"""Every upstream tree the format adapters read, loaded as published at its newest commit.

    python benchmarks/formats.py MIRROR [MIRROR ...] [--scratch DIR] [--only TEXT]

MIRROR is a bare git directory of an anchor's repository (`<owner>+<name>/repo`, as a git mirror
leaves it) or a folder of such directories. For each set below whose repository is given, the
set's files are exported from the repository's HEAD into a scratch folder (default: a new
temporary one, never inside this checkout), then detected and loaded as `judge eval` and
`judge check` would (`--format auto`). Printed per set: the commit, how many files were
exported, the format detected for ground truth and for agent outputs (or why none), how many
specs and submissions were read, how many submissions found their spec, and the warnings (their
number and the first few). A set whose load fails prints the error; the script goes on.

Nothing is written into the repository; the scratch folder is left for inspection.
"""

from __future__ import annotations

import argparse
import fnmatch
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ground_truth import load_specs, load_submissions, match_submissions  # noqa: E402
from ground_truth.errors import InputError, collecting_bad_files  # noqa: E402
from ground_truth.formats.registry import detect  # noqa: E402


@dataclass(frozen=True)
class Set:
    """Files of one repository read as one input: `path` is what `--ground-truth` and/or
    `--outputs` would be given; the files under it whose path matches `include` (fnmatch's, by
    default all) are exported."""

    label: str
    repo: str
    path: str
    kinds: tuple[str, ...]
    include: str = "*"


BOTH = ("specs", "submissions")
SETS = [
    Set(
        "ITBench roles/scenarios/ (one level above files/)",
        "itbench-hub+ITBench",
        "scenarios/sre/project/roles/scenarios",
        ("specs",),
    ),
    Set(
        "ITBench scenario folders",
        "itbench-hub+ITBench",
        "scenarios/sre/project/roles/scenarios/files",
        ("specs",),
    ),
    Set(
        "ITBench-Scenarios roles/scenarios/ (one level above files/)",
        "itbench-hub+ITBench-Scenarios",
        "sre/roles/scenarios",
        ("specs",),
    ),
    Set(
        "ITBench AgentBeats leaderboard results",
        "itbench-hub+ITBench-Agentbeats-Leaderboard-v2",
        "results",
        ("submissions",),
    ),
    Set("SREGym checkout (problem registry)", "SREGym+SREGym", ".", ("specs",), "sregym/*"),
    Set("SREGym agent traces", "SREGym+SREGym", "tests/traces/fixtures", ("submissions",)),
    Set(
        "SRE-Zero srezero/ (one level above task_configs/)",
        "DevaanshPathak+SRE-Zero",
        "srezero",
        ("specs",),
    ),
    Set(
        "AIOpsLab checkout (problem registry)", "microsoft+AIOpsLab", ".", ("specs",), "aiopslab/*"
    ),
    Set("OpenRCA archive", "microsoft+OpenRCA", "rca/archive", BOTH),
    Set(
        "OpenRCA fork: three runs of Bank",
        "biqibaomiaomiaowu+openrca_rca100",
        "test/result/Bank",
        BOTH,
    ),
    Set(
        "OpenRCA fork: RCA-100 runs", "biqibaomiaomiaowu+openrca_rca100", "test/result/rca100", BOTH
    ),
    Set("FORGE fault labels", "boerste+rca-llm-reasoning", "data/fault-alerts", ("specs",)),
    Set(
        "FORGE responses (one model: deepseek-r1:70b, 78 MB)",
        "boerste+rca-llm-reasoning",
        "results/v4/deepseek-r1:70b",
        ("submissions",),
    ),
    Set(
        "Cloud-OpsBench cases (metadata.json only)",
        "LLM4Ops+Cloud-OpsBench",
        "benchmark",
        ("specs",),
        "*/metadata.json",
    ),
]
SHOWN_WARNINGS = 3


def git(git_dir: Path, *args: str, output: Path | None = None) -> str:
    run = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args],
        check=True,
        capture_output=output is None,
        stdout=output.open("wb") if output is not None else None,
        text=output is None,
    )
    return run.stdout if output is None else ""


def mirrors(given: list[Path]) -> dict[str, Path]:
    """`owner+name` -> git directory, from git directories or folders of them."""
    found = {}
    for path in given:
        candidates = [path] if (path / "HEAD").is_file() else sorted(path.glob("*/repo"))
        for git_dir in candidates:
            name = git_dir.parent.name if git_dir.name == "repo" else git_dir.name
            found[name] = git_dir
    return found


def export(git_dir: Path, spec: Set, scratch: Path) -> tuple[Path, str, int, int]:
    """Write the set's files at HEAD under `scratch/<repo>/`; (the set's path there, commit,
    files written, files the mirror lacks: a mirror may leave out its largest objects)."""
    target = scratch / spec.repo
    commit = git(git_dir, "rev-parse", "HEAD").strip()
    listing = git(git_dir, "ls-tree", "-r", "HEAD", "--", spec.path)
    blobs = [line.split(None, 3) for line in listing.splitlines()]
    blobs = [
        (sha, path)
        for _mode, kind, sha, path in blobs
        if kind == "blob" and fnmatch.fnmatch(path, spec.include)
    ]
    batch = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in blobs).encode(),
        capture_output=True,
        check=True,
    ).stdout
    written = missing = 0
    at = 0
    for _sha, path in blobs:
        end = batch.index(b"\n", at)
        header = batch[at:end].split()
        at = end + 1
        if header[-1] == b"missing":
            missing += 1
            continue
        size = int(header[2])
        file = target / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(batch[at : at + size])
        at += size + 1
        written += 1
    return target / spec.path, commit, written, missing


def load(kind: str, path: Path) -> tuple[str, list, list[str], list[str]]:
    """(format or why not, items, warnings, bad files) of loading `path` as `kind`."""
    with warnings.catch_warnings(record=True) as caught, collecting_bad_files() as bad:
        warnings.simplefilter("always")
        try:
            if kind == "specs":
                fmt = detect(path, "specs").name
                items = load_specs(path)
            else:
                fmt = detect(path, "submissions").name
                items = load_submissions(path)
        except InputError as exc:
            lines = str(exc).splitlines()
            why = [line.strip() for line in lines[1:] if line.rstrip().endswith("]")]  # reasons
            shown = "\n    ".join([lines[0], *why])
            return f"not loaded: {shown}", [], [str(w.message) for w in caught], []
    return fmt, items, [str(w.message) for w in caught], [str(e) for e in bad]


def report(spec: Set, git_dir: Path, scratch: Path) -> None:
    root, commit, files, missing = export(git_dir, spec, scratch)
    absent = f" ({missing} absent from the mirror)" if missing else ""
    print(
        f"\n{spec.label}\n  {spec.repo.replace('+', '/')} @ {commit[:12]}: {spec.path},"
        f" {files} files{absent}"
    )
    loaded = {}
    for kind in spec.kinds:
        fmt, items, found, bad = load(kind, root)
        loaded[kind] = items
        noun = "specs" if kind == "specs" else "submissions"
        print(f"  {noun}: {len(items)}, detected as {fmt}")
        print(f"  warnings ({kind}): {len(found)}; bad files: {len(bad)}")
        for message in (found + bad)[:SHOWN_WARNINGS]:
            print(f"    {message[:220]}")
    if len(loaded) == 2 and loaded["specs"] and loaded["submissions"]:
        matching = match_submissions(loaded["specs"], loaded["submissions"])
        print(
            f"  matched: {len(matching.pairs)} submissions to a spec; {len(matching.orphans)}"
            f" without one; {len(matching.missing)} specs without a submission"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirrors", nargs="+", type=Path)
    parser.add_argument("--scratch", type=Path, help="where to export (default: a temp folder)")
    parser.add_argument("--only", help="only the sets whose label or repository contains this")
    args = parser.parse_args()
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="judge-formats-"))
    if scratch.resolve().is_relative_to(REPO):
        parser.error("--scratch must be outside the checkout")
    given = mirrors(args.mirrors)
    print(f"scratch: {scratch}")
    for spec in SETS:
        if args.only and args.only not in spec.label and args.only not in spec.repo:
            continue
        if spec.repo not in given:
            print(f"\n{spec.label}\n  {spec.repo.replace('+', '/')}: not given, skipped")
            continue
        report(spec, given[spec.repo], scratch)


if __name__ == "__main__":
    main()
