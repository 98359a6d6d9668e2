"""`judge audit`: a judge's own failure modes measured before its numbers are trusted: order,
verbosity and anchoring bias, self-grading, run-to-run noise (`audit_judge`)."""

PROBES = ("order", "verbosity", "anchoring", "self", "noise")
"""The probes `judge audit --probes` names (`judge.audit.arms`), here so that naming them loads
no judge."""
