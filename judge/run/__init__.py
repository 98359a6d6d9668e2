"""The run machinery: the loop that asks the judges, and what it needs on the way.

- `loop`: the run (`Run`): wrap each leaf judge for the store, plan, start the workers, keep
  every answer; `units` (what is asked), `plan` (what the store already answers),
  `answers` (a verdict as the result keeps it), `sink` (kept in memory or spilled to a file),
  `result` (the finished run as an `EvalResult`, with the sections computed beside the judge).
- `options`: `Limits`, `Control`, `Storage`, the groups of `judge.api.EvalOptions`.
- `cache`: each leaf judge's calls through the store; `leases`: one store, many processes.
- `control` (the gate, pause, signals), `limits` (rates, cooldown, budgets), `progress`.
- `isolated`: the rules judge in a child process (`rules_child`), which a stop kills at once.
- `granularity`, `validation`, `deferred`, `remembered_formats`: what a verdict must be and
  how a call is asked; `shard` and `merge`: a run cut in shares and put back together.
"""
