"""People label cases in the browser, and labels correct the judge's numbers.

A local page (`server`, `static/`) shows one case at a time (`cases`), in the chosen order and
sample (`ordering`, or under `--order informative` a draw by the judge's uncertainty with
recorded probabilities: `active`); every answer goes to the labeller's append-only store
(`store`) at once; the label CSV that `judge agreement` reads is derived from the stores
(`export`). `labelset` reads labels back per case, and `estimate` turns a result and labels
into judge-only, labels-only and PPI++ estimates (`judge estimate`).
"""
