"""Selective and cascaded judging with a guarantee of agreement with labels (issue 23).

`judge calibrate --target-agreement T --alpha A` fits, from judged runs and labels, each judge's
map from raw confidence to the probability of agreeing with the labels and the threshold above
which its answers agree at >= T with probability >= 1 - A (`fit.py`, on the statistics in
`agreement.reliability` and `agreement.selective`), and writes them to a calibration file
(`file.py`), which a cascade of judges reads to decide which answers to keep (`route.py`).

- `identity.py`: what a judge is for a calibration (so a file made for one is refused for another)
- `file.py`: the calibration file (a pydantic model; `judge schema calibration`)
- `verdict.py`: a verdict's confidence from its answers' calibrated confidences
- `fit.py`: results and labels -> the calibration file, or a refusal saying what is missing
- `route.py`: which stage's answer a cascade keeps, question by question or case by case
- `render.py`: the terminal tables
"""
