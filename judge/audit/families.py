"""Model families: which vendor's models a model string or an agent's name points to, so that
a judge grading its own family's agents (self-preference) can be said and measured.

A family is found from the words of the name, never from a provider's name (`openai/...` names
any OpenAI-compatible endpoint, whatever model it serves): `gpt-4o-mini` and `codex` are
openai's, `claude-sonnet-4` and `claudecode (Claude Code CLI)` anthropic's, `qwen2.5-7b` alibaba's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from ground_truth.models import Submission

FAMILIES: dict[str, tuple[str, ...]] = {
    "openai": ("gpt", "chatgpt", "codex", "davinci", "o1", "o3", "o4"),
    "anthropic": ("claude",),
    "google": ("gemini", "gemma", "palm", "bard"),
    "meta": ("llama",),
    "alibaba": ("qwen", "qwq"),
    "mistral": ("mistral", "mixtral", "codestral", "ministral", "magistral", "devstral"),
    "deepseek": ("deepseek",),
    "xai": ("grok",),
    "microsoft": ("phi",),
    "cohere": ("command",),
    "ibm": ("granite",),
    "moonshot": ("kimi",),
    "zhipu": ("glm",),
}
"""Each family's word stems: a word of a name is the stem itself, or the stem and then a
version (`llama3.3`, `qwen2.5`); `o1`, `o3`, `o4` only as whole words."""
EXACT = frozenset({"o1", "o3", "o4"})
EXAMPLE_MODEL = {
    "openai": "gpt-4o",
    "anthropic": "claude-sonnet-4",
    "google": "gemini-2.5-pro",
    "meta": "llama-3.3-70b",
    "alibaba": "qwen3-32b",
    "mistral": "mistral-large",
    "deepseek": "deepseek-v3",
    "xai": "grok-3",
    "microsoft": "phi-4",
    "cohere": "command-r",
    "ibm": "granite-3.3",
    "moonshot": "kimi-k2",
    "zhipu": "glm-4.5",
}
"""A model of each family, for prompts that name one (the self-grading probe's contrast)."""
_WORDS = re.compile(r"[a-z0-9]+")


def family_of(name: str | None) -> str | None:
    """The family `name` (a model string or an agent's name) points to, None when none does or
    when it names two (a panel's description, an agent built on several)."""
    if not name:
        return None
    found = {f for word in _WORDS.findall(name.lower()) for f in _families(word)}
    return found.pop() if len(found) == 1 else None


def _families(word: str) -> Iterable[str]:
    for family, stems in FAMILIES.items():
        for stem in stems:
            if word == stem or (stem not in EXACT and _versioned(word, stem)):
                yield family


def _versioned(word: str, stem: str) -> bool:
    rest = word[len(stem) :]
    return word.startswith(stem) and rest[:1].isdigit()


def submission_family(submission: Submission) -> str | None:
    """The family of the model behind a submission: its `agent_model`, else its agent's name."""
    return family_of(submission.agent_model) or family_of(submission.agent)


def other_family(family: str) -> str:
    """A family that is not `family`, the same each time (the contrast a probe names)."""
    return "anthropic" if family != "anthropic" else "openai"


class SelfGrading(BaseModel):
    """Submissions whose agent's model is of a family the judge's models belong to."""

    judge_families: dict[str, str] = Field(
        description="Each of the judge's models with a known family: model -> family."
    )
    n_submissions: int
    n_known: int = Field(description="Submissions whose agent's model family is known.")
    by_family: dict[str, int] = Field(description="Submissions per agent family.")
    n_own: int = Field(description="Submissions of a family one of the judge's models is of.")
    own_agents: list[str] = Field(default_factory=list)

    @property
    def warning(self) -> str | None:
        """The warning to print, None when no submission shares the judge's family."""
        if not self.n_own:
            return None
        judges = ", ".join(f"{m} ({f})" for m, f in self.judge_families.items())
        agents = ", ".join(self.own_agents[:3]) + (" ..." if len(self.own_agents) > 3 else "")
        return (
            f"self-grading: {self.n_own} of {self.n_submissions} submissions come from agents "
            f"of the judge's model family (judge {judges}; agents {agents}); a judge may favour "
            "its own family's answers: `judge audit` measures how much"
        )


def self_grading(submissions: Sequence[Submission], models: Sequence[str]) -> SelfGrading:
    """Which submissions share a family with one of the judge's `models` (an LLM judge's model,
    a panel's members' models)."""
    judge = {m: f for m in models if (f := family_of(m)) is not None}
    families = [submission_family(s) for s in submissions]
    own = [s for s, f in zip(submissions, families, strict=True) if f in set(judge.values())]
    return SelfGrading(
        judge_families=judge,
        n_submissions=len(submissions),
        n_known=sum(f is not None for f in families),
        by_family=dict(sorted(Counter(f for f in families if f).items())),
        n_own=len(own),
        own_agents=sorted({s.agent_model or s.agent or "?" for s in own}),
    )
