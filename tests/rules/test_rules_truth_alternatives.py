"""How the rules judge reads a description written for a class of problems (AIOpsLab's, facts
from microsoft/AIOpsLab, MIT: tests/fixtures/formats/aiopslab/ground_truth.excerpt.yaml): the
instance it could have hit instead (`mongodb-geo or mongodb-rate`) is not part of this fault,
what fails after a `;` is affected, not a cause, and "the admin user" is no `user` service."""

from __future__ import annotations

import warnings

from helpers import FIXTURES

from ground_truth import load_specs
from judge.judges.rules.truth import parse_truth

EXCERPT = FIXTURES / "formats" / "aiopslab" / "ground_truth.excerpt.yaml"


def test_the_other_instance_and_the_admin_user_are_not_involved() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = next(
            s
            for s in load_specs(EXCERPT, format="aiopslab")
            if s.id == "revoke_auth_mongodb-localization-2"
        )
    truth = parse_truth(spec)
    assert [c.name for c in truth.origins] == ["mongodb-rate"]
    assert truth.contributing == []
    assert [c.name for c in truth.affected] == ["rate"]
