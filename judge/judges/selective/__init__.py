"""Selective and cascaded judging with a guarantee of agreement with labels (issue 23).

`judge calibrate --target-agreement T --alpha A` fits, from judged runs and labels, each judge's
map from raw confidence to the probability of agreeing with the labels and the threshold above
which its answers agree at >= T with probability >= 1 - A (`fit.py`, on the statistics in
`agreement.reliability` and `agreement.selective`), and writes them to a calibration file
(`file.py`). `judge eval --judge-model cascade:A,B,C --calibration FILE` then asks the cheapest
judge first and escalates what it is not sure enough of (`judge.judges.cascade`, `route.py`);
the result's `cascade` block says what each stage answered and cost (`summary.py`).

- `identity.py`: what a judge is for a calibration (so a file made for one is refused for another)
- `file.py`: the calibration file (a pydantic model; `judge schema calibration`)
- `verdict.py`: a verdict's confidence from its answers' calibrated confidences
- `fit.py`: results and labels -> the calibration file, or a refusal saying what is missing
- `route.py`: which stage's answer a cascade keeps, question by question or case by case
- `summary.py`: fills the result's `cascade` block (coverage, stages, cost against the strongest
  judge)

Their terminal tables and HTML page are the report's (`judge.report.calibration_tables`,
`judge.report.calibration`).
"""
