"""Incident specs and agent submissions: pydantic models, loaders and format adapters; and the
`Registry` every extension point uses (formats here, judges and resolution checks in `judge`)."""

from __future__ import annotations

import importlib

from .errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` is not imported by `judge --help`
    from typing import Any

# Names load on first use, so a command that only needs InputError stays fast.
_EXPORTS = {
    "ground_truth.fault_spec": ["parse_fault_spec"],
    "ground_truth.loaders": ["iter_submissions", "load_specs", "load_submissions"],
    "ground_truth.matching": ["Matching", "match_submissions"],
    "ground_truth.registry": ["PluginError", "PluginWarning", "Registry", "UnknownName"],
    "ground_truth.models": [
        "Action",
        "ComponentRef",
        "Entity",
        "IncidentSpec",
        "Submission",
        "Trajectory",
        "parse_component_string",
    ],
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "Action",
    "ComponentRef",
    "Entity",
    "IncidentSpec",
    "InputError",
    "Matching",
    "PluginError",
    "PluginWarning",
    "Registry",
    "Submission",
    "Trajectory",
    "UnknownName",
    "iter_submissions",
    "load_specs",
    "load_submissions",
    "match_submissions",
    "parse_component_string",
    "parse_fault_spec",
]

if TYPE_CHECKING:
    from .fault_spec import parse_fault_spec
    from .loaders import iter_submissions, load_specs, load_submissions
    from .matching import Matching, match_submissions
    from .models import (
        Action,
        ComponentRef,
        Entity,
        IncidentSpec,
        Submission,
        Trajectory,
        parse_component_string,
    )
    from .registry import PluginError, PluginWarning, Registry, UnknownName


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'ground_truth' has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value
