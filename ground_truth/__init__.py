"""Incident specs and agent submissions: pydantic models, loaders and format adapters."""

from .errors import InputError
from .fault_spec import parse_fault_spec
from .loaders import load_specs, load_submissions
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

__all__ = [
    "Action",
    "ComponentRef",
    "Entity",
    "IncidentSpec",
    "InputError",
    "Matching",
    "Submission",
    "Trajectory",
    "load_specs",
    "load_submissions",
    "match_submissions",
    "parse_component_string",
    "parse_fault_spec",
]
