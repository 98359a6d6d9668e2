"""Prompt tokens per submission (all dimensions' prompts), counted with litellm's tokenizer
for a model (default gpt-4o-mini), over the example set; and the share that every prompt of a
submission shares (system message + the case: ground truth and fenced diagnosis, up to
`Prompt.cache_prefix`), which provider prefix caches can reuse on its second and third call.

    python benchmarks/tokens.py [MODEL]
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def main() -> None:
    import litellm

    from benchmarks.synth import EXAMPLE
    from ground_truth import load_specs, load_submissions
    from judge import load_rubric, render_prompts

    model = sys.argv[1] if len(sys.argv) > 1 else "gpt-4o-mini"
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")
    per_submission: dict[tuple[str, str], int] = {}
    shared = total = 0
    for sub, _dim, prompt in render_prompts(specs, subs, load_rubric()):
        tokens = litellm.token_counter(model=model, messages=prompt.messages)
        per_submission[sub.key] = per_submission.get(sub.key, 0) + tokens
        prefix = prompt.messages[-1]["content"][: prompt.cache_prefix]
        shared += litellm.token_counter(
            model=model, messages=[prompt.messages[0], {"role": "user", "content": prefix}]
        )
        total += tokens
    counts = list(per_submission.values())
    print(
        f"{model}: {statistics.mean(counts):.0f} prompt tokens per submission "
        f"(min {min(counts)}, max {max(counts)}, {len(counts)} submissions x "
        f"{len(load_rubric().dimensions)} dimensions); shared prefix {shared / total:.0%}"
    )


if __name__ == "__main__":
    main()
