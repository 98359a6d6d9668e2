"""The format adapters, named in one explicit list, and how an input finds its adapter.

An adapter is any object with the small `FormatAdapter` protocol. The native format and the
built-in benchmark adapters are listed here; a third-party package adds its own through an entry
point in the group `diagnosis_judge.formats` (its value: an adapter object, or a class to
instantiate without arguments):

    [project.entry-points."diagnosis_judge.formats"]
    mybench = "mybench_judge:MyBenchAdapter"

Detection asks every adapter how confident it is that it can read the input; the most confident
wins (ties: the order below, native first). An adapter that cannot be imported, loaded or that
crashes while sniffing fails loudly (`AdapterError`): it never silently makes an input look like
another format. An input no adapter claims is an `InputError` listing what each one looked for.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import InputError
from ..reading import RefusedInput

Kind = Literal["specs", "submissions"]
ENTRY_POINT_GROUP = "diagnosis_judge.formats"
KIND_NOUN = {"specs": "ground truth", "submissions": "agent outputs"}
EMPTY_MEANS = {"specs": "no incident spec", "submissions": "no submission to score"}


class AdapterError(RuntimeError):
    """A format adapter is broken (cannot be loaded, or crashed): a bug, not bad input."""


@runtime_checkable
class FormatAdapter(Protocol):
    """What a format adapter provides. `sniff` returns a confidence in [0, 1] that the adapter
    can read `path` as `kind` (0: not mine); it may raise `InputError` to say why not.
    An adapter may also define `cross_check(specs, submissions)`, warnings only, and
    `looks_for`, a mapping from kind to a short description of what `sniff` looks for."""

    @property
    def name(self) -> str: ...

    def sniff(self, path: Path, kind: Kind) -> float: ...

    def load_specs(self, path: Path) -> list[Any]: ...

    def load_submissions(self, path: Path) -> list[Any]: ...


@dataclass(frozen=True)
class FunctionAdapter:
    """An adapter made of plain functions: a yes/no check and a loader per kind."""

    name: str
    looks_for: Mapping[str, str]
    specs_check: Callable[[Path], bool]
    submissions_check: Callable[[Path], bool]
    specs_loader: Callable[[Path], list[Any]]
    submissions_loader: Callable[[Path], list[Any]]
    cross_checker: Callable[[list[Any], list[Any]], object] | None = None

    def sniff(self, path: Path, kind: Kind) -> float:
        check = self.specs_check if kind == "specs" else self.submissions_check
        return 1.0 if check(path) else 0.0

    def load_specs(self, path: Path) -> list[Any]:
        return self.specs_loader(path)

    def load_submissions(self, path: Path) -> list[Any]:
        return self.submissions_loader(path)

    def cross_check(self, specs: list[Any], submissions: list[Any]) -> None:
        if self.cross_checker is not None:
            self.cross_checker(specs, submissions)


def builtin_adapters() -> list[FormatAdapter]:
    """The native format and the shipped benchmark adapters, in detection-tie order. Imported
    here, not looked up by name: an adapter that cannot be imported is an error, not a gap."""
    from ..loaders import NATIVE
    from . import aiopslab, cloudopsbench, forge, itbench, openrca, sregym, srezero

    return [
        NATIVE,
        FunctionAdapter(
            "itbench",
            {
                "specs": "ground_truth*/groundtruth* YAML/JSON (v1 groups and propagations, or v2"
                " entities), alone or in scenario folders",
                "submissions": "<incident>/<trial>/agent_output.json with entities, or an"
                " AgentBeats leaderboard JSON",
            },
            itbench.looks_like_itbench_specs,
            itbench.looks_like_itbench_submissions,
            itbench.load_itbench_specs,
            itbench.load_itbench_submissions,
        ),
        FunctionAdapter(
            "sregym",
            {
                "specs": "a SREGym checkout (sregym/conductor/problems/registry.py and its"
                " problem modules), or YAML/JSON mapping problem ids to root-cause strings",
                "submissions": "result CSV or JSON with per-problem diagnosis text",
            },
            sregym.looks_like_sregym_specs,
            sregym.looks_like_sregym_submissions,
            sregym.load_sregym_specs,
            sregym.load_sregym_submissions,
        ),
        FunctionAdapter(
            "srezero",
            {
                "specs": "task-config JSON (task_id, correct_fix, root_cause_keywords)",
                "submissions": "run-record JSON (records with task_id and trajectory)",
            },
            srezero.looks_like_srezero_specs,
            srezero.looks_like_srezero_submissions,
            srezero.load_srezero_specs,
            srezero.load_srezero_submissions,
        ),
        FunctionAdapter(
            "aiopslab",
            {
                "specs": "an AIOpsLab checkout (aiopslab/orchestrator/problems/registry.py and"
                " its problem modules), or YAML/JSON of AIOpsLab problems",
                "submissions": "session JSON (problem_id, trace, submission)",
            },
            aiopslab.looks_like_aiopslab_specs,
            aiopslab.looks_like_aiopslab_submissions,
            aiopslab.load_aiopslab_specs,
            aiopslab.load_aiopslab_submissions,
            aiopslab.cross_check_aiopslab,
        ),
        FunctionAdapter(
            "openrca",
            {
                "specs": "CSV with instruction, prediction, groundtruth (agent-*.csv) or with"
                " instruction, scoring_points, task_index (query.csv)",
                "submissions": "CSV with instruction, prediction, groundtruth (agent-*.csv)",
            },
            openrca.looks_like_openrca_specs,
            openrca.looks_like_openrca_submissions,
            openrca.load_openrca_specs,
            openrca.load_openrca_submissions,
        ),
        FunctionAdapter(
            "forge",
            {
                "specs": "label_*.csv (fault_id, fault_level, fault_entity, fault_type) or a"
                " diagnoses JSON",
                "submissions": "diagnoses JSON (hypotheses with type, location, justification)",
            },
            forge.looks_like_forge_specs,
            forge.looks_like_forge_submissions,
            forge.load_forge_specs,
            forge.load_forge_submissions,
        ),
        cloudopsbench.ADAPTER,
    ]


def plugin_adapters() -> list[FormatAdapter]:
    """Adapters other packages register under the `diagnosis_judge.formats` entry point."""
    found = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            obj = point.load()
            adapter = obj() if isinstance(obj, type) else obj
        except Exception as exc:
            raise AdapterError(
                f"format adapter entry point {point.name!r} ({point.value}) cannot be loaded:"
                f" {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(adapter, FormatAdapter) or not isinstance(adapter.name, str):
            raise AdapterError(
                f"format adapter entry point {point.name!r} ({point.value}) is not a format"
                " adapter: it needs name, sniff(path, kind), load_specs(path) and"
                " load_submissions(path)"
            )
        found.append(adapter)
    return found


def adapters() -> list[FormatAdapter]:
    """Every adapter: built-in first, then third-party ones. Two with one name is an error."""
    every = builtin_adapters() + plugin_adapters()
    seen: set[str] = set()
    for adapter in every:
        if adapter.name in seen:
            raise AdapterError(f"two format adapters are named {adapter.name!r}")
        seen.add(adapter.name)
    return every


def get_adapter(name: str, path: Path | None = None) -> FormatAdapter:
    """The format adapter called `name`; else InputError (naming `path`) listing the known ones."""
    every = adapters()
    for adapter in every:
        if adapter.name == name:
            return adapter
    names = ", ".join(a.name for a in every)
    raise InputError(path, f"unknown format {name!r} (expected one of: {names})", field="format")


def detect(path: Path, kind: Kind) -> FormatAdapter:
    """The adapter most confident it can read `path` as `kind`."""
    if not path.exists():
        raise InputError(path, "no such file or directory")
    if _is_empty(path):
        raise InputError(path, f"is empty: {EMPTY_MEANS[kind]}")
    every = adapters()
    best: tuple[float, FormatAdapter] | None = None
    reasons: dict[str, InputError] = {}
    for adapter in every:
        confidence, reason = _sniff(adapter, path, kind)
        if reason:
            reasons[adapter.name] = reason
        if confidence > 0 and (best is None or confidence > best[0]):
            best = (confidence, adapter)
    if best is not None:
        return best[1]
    if path.is_file() and "native" in reasons:
        raise reasons["native"]  # a file of ours that does not parse: say where, exactly
    raise InputError(path, _unclaimed(every, kind, reasons), field="format")


def _is_empty(path: Path) -> bool:
    """A folder with no entries at all, or a regular file of whitespace only (small files only:
    a large file is never read here)."""
    if path.is_dir():
        return next(path.iterdir(), None) is None
    if path.is_file() and path.stat().st_size <= 4096:
        return not path.read_bytes().strip()
    return False


def _sniff(adapter: FormatAdapter, path: Path, kind: Kind) -> tuple[float, InputError | None]:
    """(confidence, why not) of one adapter; a crash other than unreadable input is loud."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the loader reports what matters, once
            return float(adapter.sniff(path, kind)), None
    except RefusedInput:
        raise
    except InputError as exc:
        return 0.0, exc
    except (OSError, ValueError) as exc:
        return 0.0, InputError(path, f"{type(exc).__name__}: {exc}")
    except Exception as exc:
        raise AdapterError(
            f"format adapter {adapter.name!r} crashed while sniffing {path}:"
            f" {type(exc).__name__}: {exc}"
        ) from exc


def _unclaimed(
    every: Sequence[FormatAdapter], kind: Kind, reasons: Mapping[str, InputError]
) -> str:
    lines = [f"not a recognised {KIND_NOUN[kind]} format; each format looked for:"]
    for adapter in every:
        wanted = (getattr(adapter, "looks_for", None) or {}).get(kind) or "(no description)"
        why = f" [{_reason(reasons[adapter.name])}]" if adapter.name in reasons else ""
        lines.append(f"  {adapter.name}: {wanted}{why}")
    return "\n".join(lines)


def _reason(error: InputError) -> str:
    return str(error) if error.path else error.message
