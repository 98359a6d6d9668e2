"""A labelling dataset for the labelling page's tests: example runs scored by the rules judge."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ground_truth import Submission, load_specs, load_submissions
from judge import evaluate, write_result

from . import EXAMPLE

HOSTILE_INCIDENT = "incorrect_port_assignment"
HOSTILE = (
    "Root cause: PRODUCT_CATALOG_ADDR points at port 8082. "
    "<script>window.__pwned = 1</script>"
    "<img src=x onerror=\"window.__pwned = 2; document.body.setAttribute('data-pwned', '1')\">"
    " &lt;b&gt; </pre> {{ 7*7 }}"
)


def make_dataset(folder: Path, n: int = 8) -> tuple[Path, Path, Path]:
    """The first `n` example submissions plus a hostile one, scored by the rules judge."""
    folder.mkdir(parents=True, exist_ok=True)
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")[:n]
    subs.append(Submission(incident_id=HOSTILE_INCIDENT, trial="hostile", diagnosis=HOSTILE))
    outputs = folder / "submissions.jsonl"
    outputs.write_text("".join(s.model_dump_json() + "\n" for s in subs), encoding="utf-8")
    result = folder / "results.json"
    write_result(evaluate(specs, subs), result)
    return result, EXAMPLE / "ground_truth", outputs


def serve_args(
    dataset: tuple[Path, Path, Path], labeller: str = "alice", **extra: Any
) -> argparse.Namespace:
    """The arguments `judge labels serve` parses, for `make_dataset`'s files (`extra` overrides)."""
    result, gt, outputs = dataset
    values: dict[str, Any] = dict(
        result=result,
        ground_truth=gt,
        outputs=outputs,
        format="auto",
        labeller=labeller,
        rubric=None,
        show_judge=False,
        order="as-is",
        seed=0,
        sample=None,
        unlabelled=False,
        disagreements=False,
        incident=None,
        agent=None,
        port=0,
        compare=[],
    )
    values.update(extra)
    return argparse.Namespace(**values)
