"""Render one prompt per (submission, dimension), or per submission, from jinja2 templates.

Every prompt of a submission starts with the same text: the system message, then the case
(`case.j2`: ground truth and fenced diagnosis); the dimension's questions and the final
instruction come last (`questions.j2` in `dimension.j2`, or every dimension's in
`submission.j2`). A provider's prefix cache can then serve the shared start of a submission's
second and third dimension call; `Prompt.cache_prefix` says where that start ends, for
providers that want it marked (Anthropic's `cache_control`, see `judge.judges.llm`).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ground_truth.errors import InputError
from ground_truth.models import IncidentSpec, Submission

from .rubric import Dimension, parts_of

if TYPE_CHECKING:
    import jinja2

TEMPLATES = Path(__file__).parents[1] / "templates"
SYSTEM_TEMPLATE = "system.j2"
CASE_TEMPLATE = "case.j2"
DIMENSION_TEMPLATE = "dimension.j2"
SUBMISSION_TEMPLATE = "submission.j2"
TEMPLATE_NAMES = (
    SYSTEM_TEMPLATE,
    CASE_TEMPLATE,
    "questions.j2",
    DIMENSION_TEMPLATE,
    SUBMISSION_TEMPLATE,
)


MAX_FRAMES = 4096
"""The (spec, dimension) frames a renderer holds at most (`_Frame`): a run has one per
incident and dimension."""


class Prompt(BaseModel):
    """A rendered prompt: chat messages and their hash (part of a stored answer's key)."""

    messages: list[dict[str, str]]
    hash: str
    cache_prefix: int = Field(
        0,
        description="Characters at the start of the last message that every prompt of this "
        "submission shares (the case); 0 when a custom template does not start with it. "
        "Not part of the hash: it only says where a provider may cache.",
    )

    def cache_marked(self) -> list[dict[str, Any]]:
        """The messages with the shared start of the last one marked cacheable, for providers
        that cache only what is marked (Anthropic: `cache_control` on a content block caches
        everything up to and including it). The text is unchanged, only split in two blocks."""
        messages: list[dict[str, Any]] = [dict(m) for m in self.messages]
        if not self.cache_prefix or not messages:
            return messages
        text, cut = messages[-1]["content"], self.cache_prefix
        messages[-1]["content"] = [
            {"type": "text", "text": text[:cut], "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": text[cut:]},
        ]
        return messages


def fence_tag(diagnosis: str) -> str:
    """A tag derived from the diagnosis itself, so the diagnosis cannot contain its own end line."""
    return hashlib.sha256(diagnosis.encode()).hexdigest()[:16]


def _template_error() -> type[Exception]:
    import jinja2

    return jinja2.TemplateError


def _model_hash(model: BaseModel) -> str:
    return hashlib.sha256(model.model_dump_json().encode()).hexdigest()


def prompt_hash(messages: list[dict[str, str]]) -> str:
    """SHA-256 hex of the messages as canonical JSON (sorted keys): equal prompts hash equal."""
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()


def _case_end(user: str, fence: str) -> int:
    """Where the shipped case ends in a user message that starts with it: after its
    diagnosis's end line, whose tag is the diagnosis's own hash (`fence_tag`) and so is not
    found earlier."""
    end = f"----- END DIAGNOSIS {fence} -----"
    at = user.find(end)
    return at + len(end) if at >= 0 else 0


class _Frame:
    """A user message rendered once for a (spec, dimension) with stand-ins for the diagnosis
    and its fence tag, cut at them: a submission's message is its pieces with the diagnosis
    and tag put back, by string joins instead of a template render (jinja2's was ~12% of a
    call's CPU at 50 in flight). Only for templates that read nothing else of the
    submission (the shipped ones); `PromptRenderer.render` checks the first message made from
    each frame against the template's own."""

    def __init__(self, rendered: str, stand_ins: dict[str, str]):
        cuts = sorted(
            (at, name)
            for name, stand_in in stand_ins.items()
            for at in _positions(rendered, stand_in)
        )
        self.pieces: list[str] = []
        self.slots: list[str] = []
        start = 0
        for at, name in cuts:
            self.pieces.append(rendered[start:at])
            self.slots.append(name)
            start = at + len(stand_ins[name])
        self.pieces.append(rendered[start:])
        self.pieces[0] = self.pieces[0].lstrip()
        self.pieces[-1] = self.pieces[-1].rstrip()
        self.checked = False

    def usable(self) -> bool:
        """Whether the stripped message starts and ends with template text, so that stripping
        the joined message strips nothing of the diagnosis."""
        return len(self.pieces) > 1 and bool(self.pieces[0]) and bool(self.pieces[-1])

    def fill(self, values: dict[str, str]) -> str:
        parts = [self.pieces[0]]
        for slot, piece in zip(self.slots, self.pieces[1:], strict=True):
            parts += (values[slot], piece)
        return "".join(parts)


def _positions(text: str, part: str) -> list[int]:
    found, at = [], text.find(part)
    while at >= 0:
        found.append(at)
        at = text.find(part, at + len(part))
    return found


class PromptRenderer:
    """Renders prompts from the shipped templates, or from a directory that overrides some of them."""

    def __init__(
        self,
        template_dir: str | Path | None = None,
        reply_order: str = "answer-first",
        *,
        first: Path | None = None,
    ):
        """`first`: a folder of templates searched before `template_dir` and the shipped ones
        (a variant of the prompt, such as `judge audit`'s diagnosis-first `case.j2`)."""
        self.reply_order = reply_order
        """Which field of an answer the system prompt asks for first; see
        `judge.judges.reply_format.EvidenceFirstItem` (the llm judge's `reply_order` should match)."""
        search = [str(TEMPLATES)]
        if template_dir is not None:
            template_dir = Path(template_dir)
            if not template_dir.is_dir():
                raise InputError(
                    template_dir, "not a directory of templates", field="--prompt-template"
                )
            search.insert(0, str(template_dir))
        if first is not None:
            search.insert(0, str(first))
        self.template_dir = template_dir
        self._search = search
        self.fingerprint = self._fingerprint()
        self._shipped_case = all(
            self._folder(name) == str(TEMPLATES)
            for name in (CASE_TEMPLATE, DIMENSION_TEMPLATE, SUBMISSION_TEMPLATE)
        )
        """The case and the user messages are the shipped templates': the case's end is found
        in the user message (`_case_end`) instead of rendering the case a second time."""
        self._hashes: dict[int, tuple[BaseModel, str]] = {}
        self._system: str | None = None
        self._frames: dict[tuple[int, int], tuple[IncidentSpec, Dimension, _Frame | None]] = {}

    def inputs_key(self, spec: IncidentSpec, submission: Submission, dimension: Dimension) -> str:
        """A hash of everything `render` reads, for a store to map to the rendered prompt's
        hash without rendering it again: the templates and reply order, the spec and the
        dimension (each hashed once) and the diagnosis, or the whole submission when the
        templates are not the shipped ones (they may read any of its fields). Equal keys
        render equal prompts."""
        read = submission.diagnosis if self.template_dir is None else _model_hash(submission)
        parts = (self.fingerprint, self.reply_order, self._hash(spec), self._hash(dimension), read)
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def _hash(self, model: BaseModel) -> str:
        """`model`'s content hash, computed once per object (specs and dimensions are shared
        by every unit of theirs)."""
        held = self._hashes.get(id(model))
        if held is None or held[0] is not model:
            held = self._hashes[id(model)] = (model, _model_hash(model))
        return held[1]

    def check_granularity(self, granularity: str) -> None:
        """Refuse a template folder whose user message for this granularity would be the
        shipped one while it changes the other's: with one call per submission (the default)
        a folder holding `dimension.j2` and no `submission.j2` would otherwise be ignored
        without a word."""
        folder = self.template_dir
        if granularity != "submission" or folder is None:
            return
        if (folder / DIMENSION_TEMPLATE).is_file() and not (folder / SUBMISSION_TEMPLATE).is_file():
            raise InputError(
                folder / DIMENSION_TEMPLATE,
                f"one call per submission (--granularity submission, the default) renders "
                f"{SUBMISSION_TEMPLATE}, not {DIMENSION_TEMPLATE}: add a {SUBMISSION_TEMPLATE} "
                f"to {folder} (the shipped one includes case.j2 and questions.j2) or ask per "
                "dimension with --granularity dimension",
                field="--prompt-template",
            )

    @cached_property
    def env(self) -> jinja2.Environment:
        """The templates' environment, made on the first render: a run whose answers all come
        from its store renders nothing and never imports jinja2."""
        import jinja2

        return jinja2.Environment(
            loader=jinja2.FileSystemLoader(self._search),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
            auto_reload=False,  # read once, like the fingerprint: no stat() of each file a prompt
        )

    def _render_system(self) -> str:
        """The system message, the same for every prompt (it reads only the reply order):
        rendered once."""
        system = self.env.get_template(SYSTEM_TEMPLATE).render(reply_order=self.reply_order)
        self._system = system.strip()
        return self._system

    def _fingerprint(self) -> str:
        """A hash of the templates' text, each read where jinja2's loader would find it."""
        sources = [self._source(name) for name in TEMPLATE_NAMES]
        return hashlib.sha256("\0".join(sources).encode()).hexdigest()[:16]

    def _source(self, name: str) -> str:
        return (Path(self._folder(name)) / name).read_text(encoding="utf-8")

    def _folder(self, name: str) -> str:
        """The folder jinja2's loader takes template `name` from."""
        for folder in self._search:
            if (Path(folder) / name).is_file():
                return folder
        raise InputError(self.template_dir or TEMPLATES, f"template {name} not found")

    def _failed_at(self, exc: BaseException) -> tuple[str | Path, int | None]:
        """The template file and line `exc` came from: a syntax error names them itself; for
        any other error jinja2 puts the template's own frames into the traceback."""
        line = getattr(exc, "lineno", None) if isinstance(exc, _template_error()) else None
        if line:
            return getattr(exc, "filename", None) or self.template_dir or TEMPLATES, line
        import traceback

        folders = [Path(folder).resolve() for folder in self._search]
        for frame in reversed(traceback.extract_tb(exc.__traceback__)):
            path = Path(frame.filename)
            if path.suffix == ".j2" and path.resolve().parent in folders:
                return path, frame.lineno
        return self.template_dir or TEMPLATES, None

    def _user(self, template: str, context: dict[str, Any]) -> str:
        """The user message: from the (spec, dimension)'s frame when the templates read only
        the diagnosis of a submission (`template_dir` is None, as `inputs_key` assumes), else
        rendered. A frame whose first message differs from the rendered one is not used."""
        frame = self._frame(template, context) if self.template_dir is None else None
        if frame is not None and frame.checked:
            return frame.fill(context)
        user = self.env.get_template(template).render(context).strip()
        if frame is not None:
            frame.checked = frame.fill(context) == user
            if not frame.checked:
                spec, dimension = context["spec"], context["dimension"]
                self._frames[id(spec), id(dimension)] = (spec, dimension, None)
        return user

    def _frame(self, template: str, context: dict[str, Any]) -> _Frame | None:
        spec, dimension = context["spec"], context["dimension"]
        key = (id(spec), id(dimension))
        held = self._frames.get(key)
        if held is not None and held[0] is spec and held[1] is dimension:
            return held[2]
        if len(self._frames) >= MAX_FRAMES:
            self._frames.clear()
        token = secrets.token_hex(16)
        stand_ins = {"diagnosis": f"\0diagnosis-{token}\0", "fence": f"\0fence-{token}\0"}
        rendered = self.env.get_template(template).render({**context, **stand_ins})
        frame = _Frame(rendered, stand_ins)
        self._frames[key] = (spec, dimension, frame if frame.usable() else None)
        return self._frames[key][2]

    def render(self, spec: IncidentSpec, submission: Submission, dimension: Dimension) -> Prompt:
        """The prompt for one dimension, or for the whole submission when `dimension` is a
        `judge.checklist.rubric.whole_submission` pseudo-dimension (`submission.j2`)."""
        parts = parts_of(dimension)
        fence = fence_tag(submission.diagnosis)
        context = {
            "spec": spec,
            "submission": submission,
            "dimension": dimension,
            "dimensions": parts or [dimension],
            "question_ids": [q.id for q in dimension.questions],
            "diagnosis": submission.diagnosis,
            "fence": fence,
        }
        try:
            system = self._system or self._render_system()
            template = SUBMISSION_TEMPLATE if parts else DIMENSION_TEMPLATE
            user = self._user(template, context)
            if self._shipped_case:
                shared = _case_end(user, fence)
            else:
                case = self.env.get_template(CASE_TEMPLATE).render(context).strip()
                shared = len(case) if case and user.startswith(case) else 0
        except Exception as exc:  # a template may raise anything (`{{ 1 / 0 }}`): bad input
            where, line = self._failed_at(exc)
            what = (
                str(exc) if isinstance(exc, _template_error()) else f"{type(exc).__name__}: {exc}"
            )
            raise InputError(
                where, f"template error: {what}", field=f"line {line}" if line else None
            ) from None
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return Prompt(messages=messages, hash=prompt_hash(messages), cache_prefix=shared)
