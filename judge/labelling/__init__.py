"""People label cases in the browser: `judge labels serve` and `judge labels export`.

A local page (`server`, `static/`) shows one case at a time (`cases`), in the chosen order and
sample (`ordering`); every answer goes to the labeller's append-only store (`store`) at once;
the label CSV that `judge agreement` reads is derived from the stores (`export`).
"""
