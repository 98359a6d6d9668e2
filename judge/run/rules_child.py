"""The child side of `judge.run.isolated`: a process that answers rules-judge tasks read
from its pipe, in order, until the pipe closes. It imports the rules judge and little else,
so it starts fast.

Tasks come in batches, a list per message, and the answers go back in lists of at most
`REPLY_EVERY`: the parent settles the first calls of a batch (and its workers send the next
batch) while the child answers the rest."""

from __future__ import annotations

import signal
from multiprocessing.connection import Connection
from typing import Any

from ground_truth.models import IncidentSpec, Submission

from ..checklist.prompts import Prompt
from ..checklist.rubric import Dimension
from ..judges.base import JudgeTask
from ..judges.rules import RulesJudge

REPLY_EVERY = 8


def serve(conn: Connection) -> None:
    """The child: answer each batch of tasks sent until the pipe closes. The terminal's Ctrl-C is the
    parent's to handle; the parent kills this process when it gives up on its calls."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    judge: RulesJudge = conn.recv()
    specs: dict[int, IncidentSpec] = {}
    dimensions: dict[int, Dimension] = {}
    empty = Prompt(messages=[], hash="")
    submission: Submission | None = None
    while True:
        try:
            batch = conn.recv()
        except EOFError:
            return
        replies = []
        for (spec_ref, spec), (dimension_ref, dimension), sent in batch:
            spec = specs.setdefault(spec_ref, spec)
            dimension = dimensions.setdefault(dimension_ref, dimension)
            submission = sent if sent is not None else submission  # None: the one before
            assert submission is not None
            replies.append(_answer(judge, JudgeTask(spec, submission, dimension, empty)))
            if len(replies) == REPLY_EVERY:
                conn.send(replies)
                replies = []
        if replies:
            conn.send(replies)


def _answer(judge: RulesJudge, task: JudgeTask) -> tuple[bool, Any]:
    try:
        return True, judge.answer(task)
    except Exception as exc:  # the parent turns it into that call's unscored questions
        return False, (type(exc).__name__, str(exc))
