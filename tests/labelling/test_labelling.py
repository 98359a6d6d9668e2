"""`judge labels serve` / `export` without a browser: the store, export, ordering, sampling,
filters, the blind reveal and the server's guards. (In Chromium: test_labelling_browser.py.)"""

from __future__ import annotations

import csv
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from helpers import REPO
from helpers.labelling import serve_args

from agreement import read_labels
from agreement.ratings import VERDICT
from ground_truth import InputError
from judge.cli import main
from judge.errors import StorageError
from judge.labelling.cases import JudgeAnswer, LabelCase, LabelQuestion
from judge.labelling.export import write_export
from judge.labelling.ordering import (
    Filters,
    apply_filters,
    order_cases,
    stratified_sample,
)
from judge.labelling.server import AnswerIn
from judge.labelling.session import open_session
from judge.labelling.store import AnswerRecord, LabelStore, read_store


@pytest.fixture
def running(labelling_dataset, tmp_path) -> Iterator[tuple]:
    """A server in this process (blind mode), its app and its store path."""
    store = tmp_path / "alice.jsonl"
    with open_session(serve_args(labelling_dataset), store) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield server, server.app, store
        server.shutdown()


def request(
    url: str, data: dict | None = None, headers: dict | None = None
) -> tuple[int, dict, bytes]:
    body = json.dumps(data).encode() if data is not None else None
    req = urllib.request.Request(url, data=body, headers=headers or {})
    if data is not None and "Content-Type" not in (headers or {}):
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def record(
    question: str, answer: str | None, case: str = "inc", trial: str = "1", **kw
) -> AnswerRecord:
    return AnswerRecord(
        labeller="alice",
        incident_id=case,
        trial=trial,
        question_id=question,
        answer=answer,
        judge_seen=False,
        **kw,
    )


# --- the store -------------------------------------------------------------------------------


def test_store_appends_fsynced_lines_and_the_latest_answer_wins(tmp_path):
    path = tmp_path / "s.jsonl"
    with LabelStore(path, "alice") as store:
        store.append(record("Q1", "Yes"))
        store.append(record("Q2", "Unsure", rationale="hard to say"))
        store.append(record("Q1", "No"))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3  # append-only: the changed answer is a new line
    contents = read_store(path)
    assert contents.answers[("inc", "1", "Q1")].answer == "No"
    assert contents.answers[("inc", "1", "Q2")].rationale == "hard to say"


def test_a_line_torn_by_a_crash_is_dropped_and_the_rest_kept(tmp_path):
    path = tmp_path / "s.jsonl"
    with LabelStore(path, "alice") as store:
        store.append(record("Q1", "Yes"))
    with open(path, "ab") as handle:
        handle.write(record("Q2", "No").model_dump_json().encode()[:40])  # power cut mid-line
    assert set(read_store(path).answers) == {("inc", "1", "Q1")}
    with LabelStore(path, "alice") as store:
        store.append(record("Q3", "Yes"))
    assert set(read_store(path).answers) == {("inc", "1", "Q1"), ("inc", "1", "Q3")}


def test_a_bad_line_in_the_middle_names_the_file_and_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(
        record("Q1", "Yes").model_dump_json()
        + "\n{oops\n"
        + record("Q2", "No").model_dump_json()
        + "\n"
    )
    with pytest.raises(InputError, match=r"s\.jsonl: line 2: not a labels-store record"):
        read_store(path)


def test_one_writer_and_one_labeller_per_store(tmp_path):
    path = tmp_path / "s.jsonl"
    with LabelStore(path, "alice") as store:
        store.append(record("Q1", "Yes"))
        with pytest.raises(StorageError, match="another `judge labels serve` is writing"):
            LabelStore(path, "alice").open()
    with pytest.raises(InputError, match="holds labels by 'alice', not by 'bob'"):
        LabelStore(path, "bob").open()


# --- export ----------------------------------------------------------------------------------


def test_export_feeds_agreement_with_unsure_as_missing(tmp_path):
    stores = []
    for name, answers in (("alice", ["Yes", "Unsure", "No"]), ("bob", ["Yes", "No", "No"])):
        path = tmp_path / f"{name}.jsonl"
        with LabelStore(path, name) as store:
            for q, a in zip(("Q1", "Q2", VERDICT), answers, strict=True):
                store.append(record(q, a).model_copy(update={"labeller": name}))
            store.append(record("Q3", None).model_copy(update={"labeller": name}))  # cleared
        stores.append(path)
    out = tmp_path / "labels.csv"
    assert write_export(stores, out) == 6
    rows = list(csv.DictReader(out.open(encoding="utf-8-sig")))
    unsure = next(r for r in rows if r["annotator"] == "alice" and r["question_id"] == "Q2")
    assert unsure["answer"] == "" and unsure["notes"] == "unsure"
    table = read_labels(out)
    alice = next(r for r in table.raters if r.name == "alice")
    assert alice.labels["question"][("inc", "1", "Q2")] is None
    assert alice.labels["question"][("inc", "1", "Q1")] == "Yes"
    assert alice.labels["verdict"][("inc", "1", VERDICT)] == "No"
    assert {r.name for r in table.raters} == {"alice", "bob"}


# --- ordering, sampling, filters -------------------------------------------------------------


def case(
    incident: str,
    trial: str = "1",
    composite: float | None = 0.5,
    verdict: str | None = "No",
    split: int = 0,
    agent: str | None = None,
    unscored: bool = False,
) -> LabelCase:
    judge = {
        "Q1": JudgeAnswer(answer=None if unscored else "Yes"),
        VERDICT: JudgeAnswer(answer=verdict),
    }
    return LabelCase(
        incident_id=incident,
        trial=trial,
        agent=agent,
        composite=composite,
        judges_split=split,
        questions=[
            LabelQuestion(id="Q1", dimension_id="D1", text="q"),
            LabelQuestion(id=VERDICT, dimension_id="", text="v"),
        ],
        judge=judge,
    )


def test_orders_as_is_and_random_seeded():
    cases = [case(f"i{k}", composite=0.1 * k) for k in range(10)]
    assert order_cases(cases, "as-is", 0) == cases
    shuffled = order_cases(cases, "random", 1)
    assert sorted(c.incident_id for c in shuffled) == sorted(c.incident_id for c in cases)
    assert shuffled == order_cases(cases, "random", 1) != cases
    assert shuffled != order_cases(cases, "random", 2)
    with pytest.raises(ValueError, match="as-is or random"):
        order_cases(cases, "informative", 0)  # a draw with probabilities: test_labelling_active


def test_sample_is_stratified_seeded_and_described():
    cases = [case(f"i{k % 5}", trial=str(k), verdict="Yes" if k < 4 else "No") for k in range(40)]
    picked, about = stratified_sample(cases, 6, seed=3)
    assert len(picked) == 6 and about["n"] == 6 and about["population"] == 40
    assert about["by_verdict"] == {"No": 3, "Yes": 3}  # 4 passes in 40, still half the sample
    assert len({c.incident_id for c in picked}) >= 4
    assert about["cases"] == [c.key for c in picked]
    assert stratified_sample(cases, 6, seed=3)[0] == picked
    assert stratified_sample(cases, 6, seed=4)[0] != picked
    assert len(stratified_sample(cases, 99, seed=3)[0]) == 40


def test_filters_unlabelled_disagreements_incident_agent(tmp_path):
    cases = [case("a", agent="x"), case("b", agent="y"), case("c", split=1, agent="y")]
    with LabelStore(tmp_path / "s.jsonl", "alice") as store:
        store.append(record("Q1", "Yes", case="a"))
        store.append(
            record(VERDICT, "Yes", case="a")
        )  # a is labelled, and disagrees on the verdict
        store.append(record("Q1", "Yes", case="b"))
        contents = store.contents
    keys = lambda f: [c.incident_id for c in apply_filters(cases, f, contents)]  # noqa: E731
    assert keys(Filters()) == ["a", "b", "c"]
    assert keys(Filters(unlabelled=True)) == ["b", "c"]
    assert keys(Filters(disagreements=True)) == ["a", "c"]
    assert keys(Filters(incident="b")) == ["b"]
    assert keys(Filters(agent="y", unlabelled=True)) == ["b", "c"]


def test_other_judges_answering_apart_make_a_case_a_disagreement(labelling_dataset, tmp_path):
    result = json.loads(labelling_dataset[0].read_text(encoding="utf-8"))
    last = result["cases"][-1]
    for j in result["judgments"]:
        if (j["incident_id"], j["trial"], j["question_id"]) == (
            last["incident_id"],
            last["trial"],
            "D1-Q1",
        ):
            j["answer"] = "No" if j["answer"] == "Yes" else "Yes"
    last["passed"] = not last["passed"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps(result), encoding="utf-8")
    args = serve_args(labelling_dataset, compare=[other], disagreements=True)
    with open_session(args, tmp_path / "a.jsonl") as server:
        cases = server.app.cases
    assert [(c.incident_id, c.trial, c.judges_split, c.split_questions) for c in cases] == [
        (last["incident_id"], last["trial"], 2, ["D1-Q1", VERDICT])
    ]


# --- the server --------------------------------------------------------------------------------


def test_every_request_needs_the_token_and_a_local_host(running):
    server, app, _ = running
    base = server.url.split("?")[0]
    for path in ("", "app.js", "api/session", "api/case?i=0"):
        assert request(base + path)[0] == 403
        assert request(f"{base}{path}{'&' if '?' in path else '?'}token=wrong")[0] == 403
    status, headers, body = request(server.url)
    assert status == 200 and b"app.js?token=" + app.token.encode() in body
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert headers["Referrer-Policy"] == "no-referrer"
    assert request(server.url, headers={"Host": "evil.example:80"})[0] == 403
    post = base + f"api/answer?token={app.token}"
    assert (
        request(base + "api/answer", {"case": 0, "question_id": "D1-Q1", "answer": "Yes"})[0] == 403
    )
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    assert request(post, {"case": 0, "question_id": "D1-Q1", "answer": "Yes"}, form)[0] == 415
    assert request(post, {"case": 0, "question_id": "D1-Q1", "answer": "Maybe"})[0] == 400
    assert request(post, {"case": 99, "question_id": "D1-Q1", "answer": "Yes"})[0] == 400
    huge = {"case": 0, "question_id": "D1-Q1", "answer": "Yes", "rationale": "x" * 70_000}
    assert request(post, huge)[0] == 400
    assert request(post, {"case": 0, "question_id": "D1-Q1", "answer": "Yes"})[0] == 200


def test_blind_until_the_case_is_done_and_each_answer_on_disk_at_once(running):
    server, app, store = running
    token = f"token={app.token}"
    base = server.url.split("?")[0]
    view = json.loads(request(f"{base}api/case?i=0&{token}")[2])
    assert view["judge"] is None and "composite" not in view
    questions = [q["id"] for q in view["questions"]]
    assert questions[-1] == VERDICT and len(questions) == 10
    for k, qid in enumerate(questions):
        status, _, body = request(
            f"{base}api/answer?{token}", {"case": 0, "question_id": qid, "answer": "Yes"}
        )
        assert status == 200
        assert read_store(store).answers[(view["incident_id"], view["trial"], qid)].answer == "Yes"
        reply = json.loads(body)
        assert (reply["judge"] is None) == (k < len(questions) - 1)
    assert reply["done"] and reply["judge"][VERDICT]["answer"] in ("Yes", "No")
    assert json.loads(request(f"{base}api/session?{token}")[2])["start"] == 1
    records = read_store(store).answers
    assert not any(r.judge_seen for r in records.values())
    changed = {"case": 0, "question_id": questions[0], "answer": "No"}  # after seeing the judge
    assert request(f"{base}api/answer?{token}", changed)[0] == 200
    latest = read_store(store).answers[(view["incident_id"], view["trial"], questions[0])]
    assert latest.answer == "No" and latest.judge_seen


def test_show_judge_shows_it_from_the_start_and_records_the_mode(labelling_dataset, tmp_path):
    store = tmp_path / "a.jsonl"
    with open_session(
        serve_args(labelling_dataset, show_judge=True, order="random", seed=5), store
    ) as server:
        assert server.app.case_view(0)["judge"] is not None
    session = read_store(store).sessions[-1]
    assert session.mode == "show-judge" and session.order == "random" and session.seed == 5
    assert len(session.cases) == 9
    assert session.rubric["name"] == "sregym-v3" and session.judge == "rules"


def test_the_sample_is_recorded_in_the_store_and_said_on_export(
    labelling_dataset, tmp_path, capsys
):
    store = tmp_path / "a.jsonl"
    with open_session(serve_args(labelling_dataset, sample=4, seed=1), store) as server:
        assert len(server.app.cases) == 4
    sample = read_store(store).sessions[-1].sample
    assert sample["n"] == 4 and sample["population"] == 9 and len(sample["cases"]) == 4
    with open_session(
        serve_args(labelling_dataset, sample=4, seed=1, unlabelled=True), store
    ) as server:
        app = server.app
        first = app.cases[0]
        for q in first.questions:
            app.answer(AnswerIn(case=0, question_id=q.id, answer="Yes"))
    again = serve_args(labelling_dataset, sample=4, seed=1, unlabelled=True)
    with open_session(again, store) as server:  # resumed: the rest of the same sample
        assert [c.key for c in server.app.cases] == sample["cases"][1:]
    assert main(["labels", "export", str(store), "-o", str(tmp_path / "l.csv")]) == 0
    assert "a stratified sample of 4 of 9 cases (seed 1" in capsys.readouterr().out


# --- the commands ------------------------------------------------------------------------------


def test_two_labellers_export_then_agreement_and_calibrate(labelling_dataset, tmp_path, capsys):
    stores = []
    for name, flip in (("alice", 0), ("bob", 1)):
        store = tmp_path / f"{name}.jsonl"
        with open_session(serve_args(labelling_dataset, labeller=name), store) as server:
            for index, labelled in enumerate(server.app.cases):
                for k, q in enumerate(labelled.questions):
                    answer = "No" if (index + k * flip) % 2 else "Yes"
                    server.app.answer(AnswerIn(case=index, question_id=q.id, answer=answer))
        stores.append(store)
    out = tmp_path / "labels.csv"
    assert main(["labels", "export", *map(str, stores), "-o", str(out)]) == 0
    capsys.readouterr()
    report = tmp_path / "agreement.json"
    args = [
        "agreement",
        str(labelling_dataset[0]),
        str(out),
        "--bootstrap",
        "50",
        "-o",
        str(report),
    ]
    assert main(args) == 0
    assert json.loads(report.read_text(encoding="utf-8"))["human_ceiling"]  # people vs people
    assert (
        main(["calibrate", str(labelling_dataset[0]), "--human", str(out), "--bootstrap", "50"])
        == 0
    )
    printed = capsys.readouterr().out
    assert "alice" in printed and "bob" in printed


def test_bad_input_exits_2_naming_what_is_wrong(labelling_dataset, tmp_path, capsys):
    result, gt, outputs = labelling_dataset
    common = [str(result), "--ground-truth", str(gt), "--outputs", str(outputs), "--no-browser"]
    assert main(["labels", "serve", *common, "--labeller", "../evil"]) == 2
    assert "--labeller '../evil'" in capsys.readouterr().err
    assert main(["labels", "serve", *common, "--labeller", "a", "--incident", "nope"]) == 2
    assert "matches the filters" in capsys.readouterr().err
    assert (
        main(["labels", "export", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "x.csv")]) == 2
    )
    assert "no such labels store" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_the_readme_documents_the_final_verdict_question_as_the_page_asks_it() -> None:
    """The page's last question of a case is the final verdict; the README quotes its words
    and says how it is used (issue 24), so they cannot drift apart unnoticed."""
    from agreement.readers import VERDICT_TEXT
    from judge.labelling.cases import VERDICT_HINT

    readme = " ".join((REPO / "README.md").read_text().split())
    section = readme[readme.index("## Label in the browser") :]
    section = section[: section.index("## ", 3)]
    assert f'*"{VERDICT_TEXT}"*' in section
    assert f'"{VERDICT_HINT}"' in section
    assert "`verdict` row" in section and "composite against the rubric's threshold" in section
