// The labelling page. Every text from a spec, a diagnosis or a judge goes into the DOM through
// textContent only (never innerHTML), so none of it can become markup or script.
"use strict";
(() => {
  const token = new URLSearchParams(location.search).get("token") || "";
  const api = (path) =>
    path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
  const $ = (id) => document.getElementById(id);
  const KEYS = { y: "Yes", n: "No", u: "Unsure" };
  let session = null;
  let index = 0;
  let current = null;
  let q = 0;
  let queue = Promise.resolve();
  let pending = 0;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function status(text, bad) {
    const node = $("status");
    node.textContent = text;
    node.className = bad ? "bad" : "ok";
  }

  async function getJSON(path) {
    const reply = await fetch(api(path), { cache: "no-store" });
    if (!reply.ok) throw new Error(`${reply.status} ${reply.statusText}`);
    return reply.json();
  }

  function interval(e) {
    if (e.value === null) return `undefined (${e.note})`;
    const v = e.value.toFixed(2);
    return e.ci_low === null ? v : `${v} [${e.ci_low.toFixed(2)}, ${e.ci_high.toFixed(2)}]`;
  }

  async function showEstimate() {
    if (!session.estimate) return;
    const e = await getJSON("/api/estimate");
    const box = $("estimate");
    const level = Math.round(100 * e.confidence);
    box.replaceChildren(
      el("span", "", `pass rate, ${level}% intervals · judge alone `),
      el("strong", "", interval(e.judge)),
      el("span", "", ` · corrected with ${e.ppi.n_labels} labels (PPI++) `),
      el("strong", "", interval(e.ppi)),
      el("span", "", ` · ${e.in_sample} cases in the largest fully labelled sample, ${e.done} labelled`),
    );
    box.hidden = false;
  }

  function answerOf(qid) {
    const a = current.answers[qid];
    return a ? a.answer : null;
  }

  function firstOpen() {
    const k = current.questions.findIndex((x) => !answerOf(x.id));
    return k < 0 ? current.questions.length - 1 : k;
  }

  function nextOpen(from) {
    const n = current.questions.length;
    for (let step = 1; step <= n; step++) {
      const k = (from + step) % n;
      if (!answerOf(current.questions[k].id)) return k;
    }
    return Math.min(from + 1, n - 1);
  }

  async function load(i) {
    index = i;
    current = await getJSON("/api/case?i=" + i);
    q = firstOpen();
    render();
  }

  function render() {
    const total = session.cases.length;
    const done = session.cases.filter((c) => c.done).length;
    $("who").textContent = `${session.labeller} · ${session.mode}`;
    $("count").textContent = `case ${index + 1} of ${total} · ${done} labelled`;
    $("bar").style.width = total ? `${(100 * done) / total}%` : "0";
    const agent = current.agent ? ` · ${current.agent}` : "";
    $("case-title").textContent = `${current.incident_id} · trial ${current.trial}${agent}`;
    $("ground-truth").textContent = current.ground_truth || "(no ground-truth text)";
    renderDiagnosis();
    renderQuestions();
    const revealed = current.judge !== null;
    document.body.dataset.revealed = revealed ? "yes" : "no";
    document.body.dataset.case = String(index);
    $("judge-note").textContent = revealed
      ? "The judge's answers are shown; where you and the judge disagree the question is marked, and the judge's evidence is marked in the diagnosis."
      : "Blind: the judge's answers appear once you have answered every question of this case.";
  }

  function renderDiagnosis() {
    const box = $("diagnosis");
    box.replaceChildren();
    const text = current.diagnosis || "";
    if (!text) box.append(el("em", "", "(no diagnosis)"));
    const spans = [];
    if (current.judge) {
      for (const [qid, a] of Object.entries(current.judge)) {
        if (a.span && a.span[1] > a.span[0]) spans.push({ s: a.span[0], e: a.span[1], qid, a: a.answer });
      }
    }
    const cuts = [...new Set([0, text.length, ...spans.flatMap((x) => [x.s, x.e])])].sort((a, b) => a - b);
    const focus = current.questions[q] ? current.questions[q].id : "";
    for (let i = 0; i + 1 < cuts.length; i++) {
      const piece = text.slice(cuts[i], cuts[i + 1]);
      const over = spans.filter((x) => x.s <= cuts[i] && cuts[i + 1] <= x.e);
      if (!over.length) {
        box.append(document.createTextNode(piece));
        continue;
      }
      const kinds = new Set(over.map((x) => (x.a || "").toLowerCase()));
      const mark = el("mark", kinds.size === 1 ? [...kinds][0] : "mixed", piece);
      mark.title = over.map((x) => x.qid).join(", ");
      if (over.some((x) => x.qid === focus)) mark.classList.add("focus");
      box.append(mark);
    }
  }

  function renderQuestions() {
    const list = $("questions");
    list.replaceChildren();
    current.questions.forEach((question, k) => {
      const mine = current.answers[question.id] || {};
      const item = el("li", "question");
      item.dataset.q = question.id;
      if (k === q) item.classList.add("current");
      if (mine.answer) item.classList.add("answered");
      if (mine.unsaved) item.classList.add("unsaved");
      const head = question.dimension_name ? `${question.dimension_id} ${question.dimension_name}` : "final verdict";
      item.append(el("div", "dimension", head), el("div", "text", question.text));
      if (question.hint) item.append(el("div", "hint", question.hint));
      const buttons = el("div", "answers");
      for (const [key, value] of Object.entries(KEYS)) {
        const button = el("button", "answer " + value.toLowerCase(), `${value} (${key})`);
        button.type = "button";
        button.setAttribute("aria-pressed", mine.answer === value ? "true" : "false");
        button.addEventListener("click", () => { q = k; give(value); });
        buttons.append(button);
      }
      item.append(buttons);
      const rationale = el("input", "rationale");
      rationale.type = "text";
      rationale.maxLength = 1000;
      rationale.placeholder = "rationale (optional, r)";
      rationale.value = mine.rationale || "";
      rationale.addEventListener("keydown", (e) => {
        if (e.key === "Enter") { e.preventDefault(); rationale.blur(); }
        if (e.key === "Escape") { rationale.value = mine.rationale || ""; rationale.blur(); }
        e.stopPropagation();
      });
      rationale.addEventListener("change", () => saveRationale(question.id, rationale.value));
      item.append(rationale);
      if (current.judge) item.append(judgeCell(question.id, mine.answer, item));
      item.addEventListener("click", (e) => {
        if (e.target === item || e.target.classList.contains("text")) { q = k; render(); }
      });
      list.append(item);
    });
    const active = list.children[q];
    if (active) active.scrollIntoView({ block: "nearest" });
  }

  function judgeCell(qid, mine, item) {
    const j = current.judge[qid];
    const cell = el("div", "judge");
    if (!j) return cell;
    cell.append(el("span", "who", "judge: "), el("strong", (j.answer || "unscored").toLowerCase(), j.answer || "unscored"));
    if (j.unscored_reason) cell.append(el("span", "reason", ` (${j.unscored_reason})`));
    if (j.evidence && !j.span) cell.append(el("span", "reason", ` quote not found in the diagnosis: “${j.evidence}”`));
    if (j.answer && (mine === "Yes" || mine === "No") && mine !== j.answer) {
      item.classList.add("disagree");
      cell.append(el("span", "flag", " disagrees with you"));
    }
    return cell;
  }

  function post(body, onDone) {
    pending += 1;
    status("saving…");
    queue = queue.then(async () => {
      let data = null;
      let error = null;
      try {
        const reply = await fetch(api("/api/answer"), {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
        data = await reply.json().catch(() => ({ error: `${reply.status} ${reply.statusText}` }));
        if (!reply.ok) throw new Error(data.error || reply.statusText);
      } catch (caught) {
        error = caught;
      }
      pending -= 1;
      onDone(error ? null : data, error);
    });
  }

  function saved(body) {
    return (data, error) => {
      const sameCase = current && current.index === body.case;
      const local = sameCase ? current.answers[body.question_id] : null;
      if (error) {
        status(`NOT SAVED (${body.question_id}: ${error.message}); the server may be down, restart it and reload`, true);
        if (local) local.unsaved = true;
        if (sameCase) render();
        return;
      }
      session.cases[body.case].done = data.done;
      if (sameCase) {
        if (local) local.unsaved = false;
        current.judge = data.judge;
        current.done = data.done;
        render();
      }
      if (pending === 0) status(`saved · ${new Date().toLocaleTimeString()}`);
      showEstimate().catch((e) => status(`cannot update the estimate: ${e.message}`, true));
    };
  }

  function give(value) {
    const question = current.questions[q];
    const mine = current.answers[question.id] || {};
    const rationale = mine.rationale || "";
    current.answers[question.id] = { answer: value, rationale, unsaved: false };
    const body = { case: index, question_id: question.id, answer: value, rationale };
    post(body, saved(body));
    q = nextOpen(q);
    render();
  }

  function saveRationale(qid, text) {
    const mine = current.answers[qid] || { answer: null };
    current.answers[qid] = { ...mine, rationale: text };
    if (!mine.answer) {
      status("the rationale is saved with the answer");
      return;
    }
    const body = { case: index, question_id: qid, answer: mine.answer, rationale: text };
    post(body, saved(body));
  }

  function move(step) {
    const target = index + step;
    if (target < 0 || target >= session.cases.length) {
      status(step > 0 ? "this is the last case" : "this is the first case");
      return;
    }
    load(target).catch((e) => status(`cannot load the case: ${e.message}`, true));
  }

  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || !current) return;
    const tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA") return;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (KEYS[key]) give(KEYS[key]);
    else if (key === "j" || key === "ArrowDown") q = Math.min(q + 1, current.questions.length - 1);
    else if (key === "k" || key === "ArrowUp") q = Math.max(q - 1, 0);
    else if (key === "l" || key === "ArrowRight") return void (e.preventDefault(), move(1));
    else if (key === "h" || key === "ArrowLeft") return void (e.preventDefault(), move(-1));
    else if (key === "r") {
      e.preventDefault();
      const input = $("questions").children[q].querySelector("input");
      input.focus();
      return;
    } else return;
    e.preventDefault();
    render();
  }

  async function start() {
    $("prev").addEventListener("click", () => move(-1));
    $("next").addEventListener("click", () => move(1));
    document.addEventListener("keydown", onKey);
    try {
      session = await getJSON("/api/session");
      await load(session.start);
      await showEstimate();
      document.body.dataset.ready = "yes";
      if (session.cases.every((c) => c.done)) {
        status("every case here is labelled; h/l to review, or export: judge labels export");
      }
    } catch (error) {
      status(`cannot reach the labelling server: ${error.message}`, true);
    }
  }

  start();
})();
