"""The probes `judge selftest` derives from specs: every mention of the fault origin renamed
(aliases, `Kind/Name` notations, never inside a longer name), a mechanism of another fault
family, the same probes for the same seed, expectations keyed by any rubric's question ids,
and what cannot be derived listed with its reason."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from helpers import EXAMPLE

from ground_truth import ComponentRef, IncidentSpec, load_specs
from judge import load_rubric
from judge.judges.rules import taxonomy
from judge.selftest.components import mentions, rename, renames_for
from judge.selftest.derive import derive_probes, rewrite
from judge.selftest.mechanisms import SWAPS, families_of

RUBRIC = load_rubric()


@pytest.fixture(scope="module")
def example_specs() -> list[IncidentSpec]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_specs(EXAMPLE / "ground_truth")


def spec(**fields) -> IncidentSpec:
    return IncidentSpec.model_validate({"id": "s", "ground_truth": "x", **fields})


def test_renaming_is_one_pass_and_never_inside_a_longer_name() -> None:
    text = "geo calls mongodb-geo; rate calls geo. Deployment/geo and app/rate restart."
    renamed, count = rename(text, {"geo": "rate", "rate": "profile"})
    assert renamed == (
        "rate calls mongodb-geo; profile calls rate. Deployment/rate and app/profile restart."
    )
    assert count == 5


def test_renaming_covers_aliases_and_names_written_without_separators() -> None:
    origin = spec(fault_origin=[{"name": "product-catalog", "aliases": ["productcatalogservice"]}])
    text = "Product-catalog is down; productcatalog pods and productcatalogservice fail."
    renamed, count = rename(text, renames_for(origin.fault_origin, ["cart"]))
    assert renamed == "Cart is down; cart pods and cart fail." and count == 3
    assert mentions(renamed, origin.fault_origin) == 0


def test_renaming_covers_spaced_names_and_conventional_suffixes() -> None:
    origin = spec(fault_origin=["frontend-ingress", "user"])
    text = "The frontend  Ingress breaks; user-service and user-7d9f8b6c4-x2x9z fail, usertimeline not."
    renamed, count = rename(text, renames_for(origin.fault_origin, ["edge", "geo"]))
    assert renamed == "The edge breaks; geo and geo fail, usertimeline not." and count == 3


def test_a_short_form_is_renamed_where_it_names_what_one_reads_of_a_component() -> None:
    """SRE-Zero writes `Web logs`, `Web TIMEOUT_MS` of `web_server`: the first word alone,
    where no other component of the system has it, before what one reads of a component."""
    origin = spec(fault_origin=[{"name": "web_server", "aliases": ["web server"]}])
    system = [
        *origin.fault_origin,
        ComponentRef(name="message_queue"),
        ComponentRef(name="message-bus"),
    ]
    text = "web server timeout too low. Web logs show timeouts; Web TIMEOUT_MS is low; web demand."
    short = renames_for(origin.fault_origin, ["cache"], system)
    renamed, count = rename(text, renames_for(origin.fault_origin, ["cache"]), short)
    assert renamed == (
        "cache timeout too low. Cache logs show timeouts; Cache TIMEOUT_MS is low; web demand."
    )
    assert count == 3
    queue = spec(fault_origin=["message_queue"])
    assert renames_for(queue.fault_origin, ["cache"], system) == {}


def test_a_swapped_in_component_is_never_named_by_the_spec_nor_confusable() -> None:
    specs = [
        spec(
            id="a",
            ground_truth="user fails; frontend is slow.",
            fault_origin=["user"],
            mechanism="x",
        ),
        spec(id="b", ground_truth="y", fault_origin=["user-service"], mechanism="x"),
        spec(id="c", ground_truth="y", fault_origin=["frontend"], mechanism="x"),
        spec(id="d", ground_truth="y", fault_origin=["search"], mechanism="x"),
    ]
    for seed in range(10):
        [probe] = [p for p in derive_probes(specs, RUBRIC, seed).probes if p.id == "a/origin-swap"]
        assert probe.diagnosis == "search fails; frontend is slow."


def test_an_origin_without_a_name_gives_no_swap() -> None:
    derived = derive_probes(
        [spec(ground_truth="all pods", fault_origin=["*"], mechanism="x")], RUBRIC
    )
    reasons = {s.kind: s.reason for s in derived.skipped}
    assert reasons["origin-swap"] == reasons["mechanism-swap"].replace("blame", "rename")
    assert "'*'" in reasons["origin-swap"]


@pytest.mark.parametrize("family", sorted(SWAPS))
def test_each_swapped_mechanism_names_its_own_family_and_no_other(family: str) -> None:
    text = SWAPS[family][0].format(c="checkout").lower()
    assert taxonomy.families_in(text) == {family}


def test_every_example_spec_gives_the_probes_it_can(example_specs) -> None:
    derived = derive_probes(example_specs, RUBRIC)
    kinds = [p.kind for p in derived.probes]
    for kind in ("truth", "rewrite", "origin-swap", "mechanism-swap", "vague", "empty"):
        assert kinds.count(kind) == len(example_specs), kind
    victims = kinds.count("victim-only")
    assert victims + len(derived.skipped) == len(example_specs)
    assert {s.reason for s in derived.skipped} == {
        "the spec names no affected component or distractor"
    }
    assert len({p.id for p in derived.probes}) == len(derived.probes)


def test_a_swapped_origin_is_never_named_and_a_victim_blamed_alone(example_specs) -> None:
    by_id = {s.id: s for s in example_specs}
    for probe in derive_probes(example_specs, RUBRIC).probes:
        if probe.kind in ("origin-swap", "victim-only"):
            origin = by_id[probe.spec_id].fault_origin
            assert mentions(probe.diagnosis, origin) == 0, probe.id
            assert probe.expected["D1-Q1"] == "No" and probe.verdict == "fail"


def test_a_swapped_mechanism_is_of_a_family_the_spec_never_names(example_specs) -> None:
    by_id = {s.id: s for s in example_specs}
    for probe in derive_probes(example_specs, RUBRIC).probes:
        if probe.kind != "mechanism-swap":
            continue
        family = probe.note.removeprefix("mechanism -> ")
        families, groups = families_of(by_id[probe.spec_id])
        assert family not in families and taxonomy.FAMILY[family].group not in groups
        assert probe.expected == {"D1-Q1": "Yes", "D2-Q1": "No", "D2-Q2": "No", "D2-Q3": "No"}


def test_the_same_seed_gives_the_same_probes(example_specs) -> None:
    first = derive_probes(example_specs, RUBRIC, seed=7)
    assert first == derive_probes(example_specs, RUBRIC, seed=7)
    others = [derive_probes(example_specs, RUBRIC, seed=s) for s in range(5)]
    assert len({tuple(p.diagnosis for p in d.probes) for d in others}) > 1


def test_the_rewrite_states_origin_mechanism_details_and_symptoms() -> None:
    made = spec(
        fault_origin=[{"name": "checkout", "kind": "Deployment", "namespace": "shop"}],
        mechanism="the CART_ADDR env var is missing",
        parameters={"env_var": "CART_ADDR", "nested": [{"port": 8080}], "condition": "TBD"},
        affected_components=["frontend"],
        symptoms=["CrashLoopBackOff|crash loop"],
    )
    text, _ = rewrite(made) or ("", "")
    assert text == (
        "Root cause: checkout (Deployment) in namespace shop. The CART_ADDR env var is missing. "
        "Details: env_var: CART_ADDR; port: 8080. Affected: frontend. Symptoms: CrashLoopBackOff."
    )
    [probe] = [p for p in derive_probes([made], RUBRIC).probes if p.kind == "rewrite"]
    assert probe.expected["D2-Q2"] == probe.expected["D3-Q2"] == probe.expected["D3-Q3"] == "Yes"


def test_a_spec_without_an_origin_skips_the_probes_that_need_one() -> None:
    derived = derive_probes([spec(mechanism="something broke")], RUBRIC)
    made = {p.kind for p in derived.probes}
    assert made == {"truth", "vague", "empty", "injection"}
    skipped = {s.kind: s.reason for s in derived.skipped}
    assert skipped["origin-swap"] == "the spec names no fault origin"
    assert set(skipped) == {"rewrite", "origin-swap", "mechanism-swap", "victim-only"}


def test_a_lone_spec_swaps_in_a_made_up_component() -> None:
    lone = spec(ground_truth="checkout fails.", fault_origin=["checkout"], mechanism="bad env")
    [probe] = [p for p in derive_probes([lone], RUBRIC).probes if p.kind == "origin-swap"]
    assert "made-up components" in probe.note and "checkout" not in probe.diagnosis.lower()


def test_expectations_follow_a_rubrics_own_question_ids(tmp_path) -> None:
    text = Path(RUBRIC.path or "").read_text(encoding="utf-8")
    renamed = text.replace("D1-Q1", "ORIGIN").replace(
        "id: D2-Q1", "id: WHAT\n        rule: mechanism_matched"
    )
    path = tmp_path / "mine.yaml"
    path.write_text(renamed, encoding="utf-8")
    mine = load_rubric(path)
    lone = spec(ground_truth="checkout fails.", fault_origin=["checkout"], mechanism="bad env")
    by_kind = {p.kind: p for p in derive_probes([lone], mine).probes}
    assert by_kind["origin-swap"].expected["ORIGIN"] == "No"
    assert by_kind["mechanism-swap"].expected["WHAT"] == "No"
    assert "D1-Q1" not in by_kind["truth"].expected


@pytest.mark.parametrize(
    "kind, fitting",
    [
        ("Node", {"disk_space", "cpu", "packet_loss"}),
        ("Namespace", {"packet_loss", "network_policy"}),
        ("ConfigMap", {"image", "auth"}),
        ("Ingress", {"image", "auth"}),
        (
            "deployments",
            {
                "memory",
                "image",
                "dns",
                "scheduling",
                "auth",
                "code",
                "disk_space",
                "cpu",
                "packet_loss",
                "network_policy",
            },
        ),
    ],
)
def test_a_swapped_mechanism_fits_what_the_origin_is(kind: str, fitting: set[str]) -> None:
    for seed in range(8):
        made = spec(
            ground_truth="it broke",
            fault_origin=[{"name": "x1", "kind": kind}],
            mechanism="it broke",
        )
        [probe] = [
            p for p in derive_probes([made], RUBRIC, seed).probes if p.kind == "mechanism-swap"
        ]
        assert probe.note.removeprefix("mechanism -> ") in fitting
