"""`judge rubric validate|show|list`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_OK, console


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `rubric` subcommand and its `validate`, `show` and `list` actions."""
    p = commands.add_parser("rubric", help="validate, show or list rubrics")
    sub = p.add_subparsers(dest="rubric_command", metavar="ACTION", required=True)
    v = sub.add_parser("validate", help="check a rubric file")
    v.add_argument("file")
    v.set_defaults(handler=cmd_rubric_validate)
    s = sub.add_parser("show", help="print a rubric")
    s.add_argument("name", nargs="?", default="sregym-v3")
    s.set_defaults(handler=cmd_rubric_show)
    ls = sub.add_parser("list", help="list shipped rubrics")
    ls.set_defaults(handler=cmd_rubric_list)


def cmd_rubric_validate(args: argparse.Namespace) -> int:
    """Validate; warn (on stderr, exit 0) where the rules judge would answer a question with a
    rule its text does not ask for, or with none."""
    from ..checklist.rubric import load_rubric
    from ..judges.rules import binding_warnings

    rubric = load_rubric(args.file)
    print(
        f"{args.file}: valid rubric v{rubric.version}, {len(rubric.dimensions)} dimensions, "
        f"{rubric.question_count} questions, threshold {rubric.scoring.threshold}, hash {rubric.hash}"
    )
    questions = [(q.id, q.rule, q.text) for d in rubric.dimensions for q in d.questions]
    for warning in binding_warnings(questions):
        print(f"warning: {args.file}: rules judge: {warning}", file=sys.stderr)
    return EXIT_OK


def check_answerable(judge: Any, rubric: Any, given: str) -> None:
    """Refuse (`InputError`, exit 2) a run whose rules judge (alone or in a panel) has no rule
    for some of the rubric's questions: each would be unscored in every case, and a run of
    nothing but unscored questions would end as if it had worked."""
    from ground_truth.errors import InputError

    from ..judges import is_rules_judge
    from ..run.cache import leaves

    if not any(is_rules_judge(leaf) for leaf in leaves(judge)):
        return
    from ..judges.rules import RULES, bind

    questions = [q for d in rubric.dimensions for q in d.questions]
    unanswerable = [q for q in questions if RULES.get(bind(q.rule, q.text) or "") is None]
    if not unanswerable:
        return
    shown = "; ".join(f"{q.id} ({_short(q.text)})" for q in unanswerable[:10])
    more = f" and {len(unanswerable) - 10} more" if len(unanswerable) > 10 else ""
    raise InputError(
        given,
        f"the rules judge has no rule for {len(unanswerable)} of the {len(questions)} questions, "
        f"which every case would leave unscored: {shown}{more}. Give each a `rule:` (one of "
        f"{', '.join(sorted(RULES))}; `judge rubric validate` checks them), leave them out "
        "with --dimensions, or use an LLM judge (--judge-model)",
        field="--rubric",
    )


def _short(text: str, most: int = 60) -> str:
    return repr(text if len(text) <= most else text[: most - 1] + "…")


def cmd_rubric_show(args: argparse.Namespace) -> int:
    """`judge rubric show`: print a rubric's dimensions, weights and questions as a table."""
    from rich.table import Table

    from ..checklist.rubric import load_rubric

    rubric = load_rubric(args.name)
    title = f"{rubric.name} v{rubric.version} (threshold {rubric.scoring.threshold}, hash {rubric.hash})"
    table = Table(title=title)
    for col in ("dimension", "weight", "question", "text"):
        table.add_column(col, overflow="fold")
    for dim in rubric.dimensions:
        for i, q in enumerate(dim.questions):
            head = (
                (f"{dim.id} {dim.name}", f"{rubric.scoring.weights[dim.id]:.2f}")
                if i == 0
                else ("", "")
            )
            table.add_row(*head, q.id, q.text)
    console().print(table)
    return EXIT_OK


def cmd_rubric_list(args: argparse.Namespace) -> int:
    """`judge rubric list`: print the shipped rubrics' names, one a line."""
    from ..checklist.rubric import available_rubrics

    print("\n".join(available_rubrics()))
    return EXIT_OK
