"""The checklist and its answers: rubrics, prompts, scores and the result file."""
