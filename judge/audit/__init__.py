"""`judge audit`: a judge's own failure modes measured before its numbers are trusted: order,
verbosity and anchoring bias, self-grading, run-to-run noise (`audit_judge`)."""
