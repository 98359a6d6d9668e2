"""`benchmarks/validity/real/extract.py`: one rebuild of every unlicensed real-agent case, from the
corpus, a git mirror, saved raw files or a download, each text checked against its sha256."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers import BENCHMARKS, load_script

EXTRACT = BENCHMARKS / "validity" / "real" / "extract.py"


extract = load_script(EXTRACT, "real_extract")

REPORT = {"final_report": {"root_cause": "geo points at MongoDB port 27777, not 27017."}}
SESSION = {
    "session_id": "s-1",
    "trace": [
        {"role": "assistant", "content": "I will look at the pods."},
        {"role": "assistant", "content": 'It is user-service.\n```\nsubmit(["user-service"])\n```'},
        {"role": "user", "content": "submit(ok)"},
    ],
}
JUDGE_CSV = 'problem_id,Diagnosis.submission\nport_conflict,"hostPort 9100\nis taken"\n'
ROLLOUT = "\n".join(
    json.dumps({"payload": p})
    for p in [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]},
        {
            "type": "function_call",
            "name": "apply_patch",
            "call_id": "c1",
            "arguments": json.dumps({"input": "*** Add File: out.json\n+{\n+}\n*** End Patch"}),
        },
        {"type": "function_call_output", "call_id": "c1", "output": "Success"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "b"}]},
    ]
)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    ("text", "locator", "expected"),
    [
        ("whole\n", "file", "whole\n"),
        (json.dumps({"r": [{"x": 1}]}), "json:r.0", '{\n  "x": 1\n}'),
        (json.dumps(REPORT), "json-string:final_report.root_cause (run 1)", "geo points at"),
        (JUDGE_CSV, "csv-column:Diagnosis.submission", "hostPort 9100\nis taken"),
        (ROLLOUT, "codex-final-message", "b"),
        (ROLLOUT, "codex-add-file:out.json", "{\n}\n"),
        (json.dumps(SESSION), "session s-1: last assistant trace item calling submit(", "It is"),
    ],
)
def test_every_locator_cuts_the_agent_text(text, locator, expected):
    got = extract.locate(text, locator, "port_conflict")
    assert got.startswith(expected)


def test_a_locator_that_does_not_fit_the_file_is_unavailable_not_a_crash():
    with pytest.raises(extract.Unavailable, match="not 'other'"):
        extract.locate(JUDGE_CSV, "csv-column:Diagnosis.submission", "other")
    with pytest.raises(extract.Unavailable, match="never calls submit"):
        extract.locate(json.dumps({"trace": []}), "session s: ...", "x")
    with pytest.raises(extract.Unavailable, match="unknown locator"):
        extract.locate("x", "xpath:/a", "x")


def _git_mirror(root: Path, files: dict[str, str]) -> tuple[Path, str]:
    """A bare-like git dir `root/<owner>+<name>/repo` holding `files` at one commit."""
    work = root / "work"
    work.mkdir(parents=True)
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "runs"], check=True)
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    mirror = root / "mirrors" / "someone+runs" / "repo"
    mirror.parent.mkdir(parents=True)
    (work / ".git").rename(mirror)
    return root / "mirrors", commit


def _case(name: str, commit: str, path: str, locator: str, text: str, **extra) -> dict:
    return {
        "case": name,
        "incident_id": "port_conflict",
        "diagnosis": None,
        "diagnosis_sha256": _sha(text),
        "origin": {"repo": "someone/runs", "commit": commit, "path": path, "locator": locator},
        **extra,
    }


def test_main_rebuilds_every_source_from_the_places_offered_and_reports_each(tmp_path, capsys):
    mirrors, commit = _git_mirror(
        tmp_path, {"r/report.json": json.dumps(REPORT), "s/session.json": json.dumps(SESSION)}
    )
    raw = tmp_path / "raw" / "someone+runs" / "abc" / "by-case" / "judge_raw.csv"
    raw.parent.mkdir(parents=True)
    raw.write_text(JUDGE_CSV, encoding="utf-8")
    cases = tmp_path / "cases"
    cases.mkdir()
    report_text = REPORT["final_report"]["root_cause"]
    session_text = SESSION["trace"][1]["content"]
    files = {
        "c3-like": [
            _case(
                "c3-1", commit, "r/report.json", "json-string:final_report.root_cause", report_text
            )
        ],
        # C2's locator once made C1's script crash (IndexError) on the other collectors' cases
        "c2-like": [_case("c2-1", commit, "s/session.json", "session s-1: last ...", session_text)],
        "c1-like": [
            _case(
                "c1-1",
                "abc",
                "by-case/judge_raw.csv",
                "csv-column:Diagnosis.submission",
                "hostPort 9100\nis taken",
            )
        ],
        "shipped": [{"case": "s-1", "diagnosis": "text", "origin": {}}],
    }
    for source, entries in files.items():
        (cases / f"{source}.yaml").write_text(yaml.safe_dump(entries), encoding="utf-8")
    cache = tmp_path / "cache"
    args = ["--mirror", str(mirrors), "--raw-dir", str(tmp_path / "raw")]
    code = extract.main([*args, "--cases-dir", str(cases), "--cache", str(cache)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert (cache / "c3-1.txt").read_text(encoding="utf-8") == report_text
    assert (cache / "c2-1.txt").read_text(encoding="utf-8") == session_text
    assert (cache / "c1-1.txt").read_text(encoding="utf-8") == "hostPort 9100\nis taken"
    assert "c3-like: 1 cases, 1 of 1 rebuilt (1 from the mirror)" in out
    assert "c1-like: 1 cases, 1 of 1 rebuilt (1 from the raw-dir)" in out
    assert "shipped: 1 cases, text shipped" in out
    filled = yaml.safe_load((cache / "cases" / "c2-like.yaml").read_text(encoding="utf-8"))
    assert filled[0]["diagnosis"] == session_text


def test_a_text_that_does_not_match_its_sha256_is_refused_and_named(tmp_path, capsys):
    mirrors, commit = _git_mirror(tmp_path, {"r/report.json": json.dumps(REPORT)})
    case = _case("c-1", commit, "r/report.json", "json-string:final_report.root_cause", "other")
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "src.yaml").write_text(yaml.safe_dump([case]), encoding="utf-8")
    cache = tmp_path / "cache"
    argv = ["--mirror", str(mirrors / "someone+runs" / "repo"), "--cases-dir", str(cases)]
    assert extract.main([*argv, "--cache", str(cache)]) == 1
    captured = capsys.readouterr()
    assert "src: 1 cases, 0 of 1 rebuilt (none); 1 NOT rebuilt" in captured.out
    assert "c-1: the text from the mirror does not match diagnosis_sha256" in captured.err
    assert not (cache / "c-1.txt").exists()


def test_nothing_offered_names_every_place_tried(tmp_path):
    case = _case("c-1", "abc", "x.json", "file", "t")
    with pytest.raises(extract.Unavailable, match=r"raw dir .* \(absent\)"):
        extract.rebuild(case, extract.Sources(raw_dir=tmp_path))
    with pytest.raises(extract.Unavailable, match="none offered"):
        extract.rebuild(case, extract.Sources())


def test_bad_arguments_exit_2(tmp_path, capsys):
    assert extract.main(["--mirror", str(tmp_path / "absent")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert extract.main(["no-such-case", "--cache", str(tmp_path / "c")]) == 2
    assert "unknown case(s): no-such-case" in capsys.readouterr().err


def test_corpus_copies_are_read_first(tmp_path):
    repo, commit, path = next(iter(extract.CORPUS_COPIES))
    copy = tmp_path / extract.CORPUS_COPIES[(repo, commit, path)]
    copy.parent.mkdir(parents=True)
    copy.write_text('{"entities": []}', encoding="utf-8")
    case = {
        "case": "c",
        "origin": {"repo": repo, "commit": commit, "path": path, "locator": "file"},
    }
    rebuilt = extract.rebuild(case, extract.Sources(corpus=tmp_path, raw_dir=tmp_path))
    assert rebuilt == extract.Rebuilt('{"entities": []}', "corpus")
