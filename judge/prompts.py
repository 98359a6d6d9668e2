"""Render one prompt per (submission, dimension) from jinja2 templates.

Static text (instructions, the dimension's questions) comes first and the case (ground truth,
diagnosis) last, so provider prefix caches can reuse the start of every prompt of a dimension.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jinja2
from pydantic import BaseModel

from ground_truth.errors import InputError
from ground_truth.models import IncidentSpec, Submission

from .rubric import Dimension

TEMPLATES = Path(__file__).parent / "templates"
SYSTEM_TEMPLATE = "system.j2"
DIMENSION_TEMPLATE = "dimension.j2"


class Prompt(BaseModel):
    """A rendered prompt: chat messages and their hash (part of a stored answer's key)."""

    messages: list[dict[str, str]]
    hash: str


def fence_tag(diagnosis: str) -> str:
    """A tag derived from the diagnosis itself, so the diagnosis cannot contain its own end line."""
    return hashlib.sha256(diagnosis.encode()).hexdigest()[:16]


def prompt_hash(messages: list[dict[str, str]]) -> str:
    """SHA-256 hex of the messages as canonical JSON (sorted keys): equal prompts hash equal."""
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()


class PromptRenderer:
    """Renders prompts from the shipped templates, or from a directory that overrides some of them."""

    def __init__(self, template_dir: str | Path | None = None):
        search = [str(TEMPLATES)]
        if template_dir is not None:
            template_dir = Path(template_dir)
            if not template_dir.is_dir():
                raise InputError(
                    template_dir, "not a directory of templates", field="--prompt-template"
                )
            search.insert(0, str(template_dir))
        self.template_dir = template_dir
        self._loader = jinja2.FileSystemLoader(search)
        self.env = jinja2.Environment(
            loader=self._loader,
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
            auto_reload=False,  # read once, like the fingerprint: no stat() of each file a prompt
        )
        self.fingerprint = self._fingerprint()

    def _fingerprint(self) -> str:
        sources = [
            self._loader.get_source(self.env, n)[0] for n in (SYSTEM_TEMPLATE, DIMENSION_TEMPLATE)
        ]
        return hashlib.sha256("\0".join(sources).encode()).hexdigest()[:16]

    def render(self, spec: IncidentSpec, submission: Submission, dimension: Dimension) -> Prompt:
        try:
            system = self.env.get_template(SYSTEM_TEMPLATE).render()
            user = self.env.get_template(DIMENSION_TEMPLATE).render(
                spec=spec,
                submission=submission,
                dimension=dimension,
                diagnosis=submission.diagnosis,
                fence=fence_tag(submission.diagnosis),
            )
        except jinja2.TemplateError as exc:
            where = getattr(exc, "filename", None) or self.template_dir or TEMPLATES
            raise InputError(
                where,
                f"template error: {exc}",
                field=(lineno := getattr(exc, "lineno", None)) and f"line {lineno}",
            ) from None
        messages = [
            {"role": "system", "content": system.strip()},
            {"role": "user", "content": user.strip()},
        ]
        return Prompt(messages=messages, hash=prompt_hash(messages))
