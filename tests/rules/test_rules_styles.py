"""The rules judge on diagnosis styles the tune half lacks (the validity set's dev half): JSON
and YAML outputs, ranked hypotheses, hedged claims, symptoms first and the cause last, impact in
users' terms, paraphrased mechanisms. Each test fails without the rule change it covers."""

from __future__ import annotations

from ground_truth import IncidentSpec, Submission
from judge import evaluate_submission

INCORRECT_IMAGE = (
    "[fault_spec] component=deployment/product-catalog; namespace=astronomy-shop || The "
    "product-catalog deployment is configured to pull a non-existent image tag (app-image:latest), so "
    "pods fail with image pull errors and the catalog path becomes unavailable. Symptoms typically "
    "include ImagePullBackOff events and upstream checkout calls timing out or failing."
)
BUGGY_GEO = (
    "[fault_spec] component=deployment/geo; namespace=hotel-reservation || The geo deployment is "
    "rolled to a buggy image tag (yinfangchen/geo:app3), which crashes at runtime and drives repeated "
    "restart loops, leaving the service unhealthy and breaking geo-dependent request paths."
)
MISSING_ENV = (
    "[fault_spec] component=deployment/frontend; namespace=astronomy-shop || The required environment "
    "variable CART_ADDR is removed from the deployment, so the application cannot resolve the cart "
    "dependency endpoint and frontend flows fail. Symptoms include runtime configuration errors and "
    "partial frontend outages for cart-related actions."
)
SMALL_MEMORY = (
    "[fault_spec] component=frontend; namespace=hotel-reservation || Deployment `frontend` has an "
    "extremely low memory limit (`10Mi`), so normal runtime usage quickly exceeds cgroup limits and "
    "triggers OOM kills. Pods restart repeatedly and exhibit unstable uptime with CrashLoop-like "
    "behavior under ordinary traffic. Users observe intermittent outages, latency spikes, and failed "
    "requests."
)


def answers(ground_truth: str, diagnosis: str) -> dict[str, str | None]:
    spec = IncidentSpec(id="case", ground_truth=ground_truth)
    case = evaluate_submission(spec, Submission(incident_id="case", diagnosis=diagnosis))
    return {j.question_id: j.answer for j in case.judgments}


def test_a_container_that_cannot_find_its_image_is_not_a_no_fault_finding() -> None:
    got = answers(
        INCORRECT_IMAGE,
        "The product-catalog container can't find its image in the registry, so it never starts.",
    )
    assert got["D1-Q1"] == "Yes" and got["D1-Q3"] == "Yes"
    assert answers(INCORRECT_IMAGE, "I could not find any faulty component.")["D1-Q1"] == "No"


def test_a_json_root_cause_key_blames_its_component() -> None:
    got = answers(
        BUGGY_GEO,
        '{"root_cause": {"component": "geo", "namespace": "hotel-reservation"}, '
        '"symptoms": ["geo pods restart"]}',
    )
    assert got["D1-Q1"] == "Yes" and got["D1-Q3"] == "Yes"
    listed = answers(BUGGY_GEO, '{"faulty_components": ["geo"], "confidence": 0.8}')
    assert listed["D1-Q1"] == "Yes"


def test_the_cause_written_last_after_a_colon_is_the_cause() -> None:
    got = answers(
        MISSING_ENV,
        "Observations:\n- frontend pods are Running but log `CART_ADDR is not set`\n"
        "- the cart service itself is healthy\n"
        "So the cause: the CART_ADDR env var was removed from the frontend deployment.",
    )
    assert got["D1-Q1"] == "Yes" and got["D1-Q3"] == "Yes" and got["D3-Q1"] == "Yes"


def test_i_suspect_x_is_the_root_cause_blames_x() -> None:
    got = answers(
        SMALL_MEMORY,
        "The search and reservation services return errors whenever the frontend calls them; "
        "I suspect the reservation deployment is the root cause (it shows elevated latency).",
    )
    assert got["D1-Q1"] == "No" and got["D1-Q3"] == "No" and got["D3-Q1"] == "No"


CHECKOUT_PORT = (
    "[fault_spec] component=deployment/checkout; namespace=astronomy-shop || The PRODUCT_CATALOG_ADDR "
    "environment variable points to the wrong backend port (8082 instead of 8080), so checkout cannot "
    "reach product-catalog and related requests fail. Symptoms include connection-refused errors and "
    "elevated failed request rates on checkout endpoints."
)


def test_ranked_hypotheses_claim_only_the_most_likely_one() -> None:
    right_first = answers(
        CHECKOUT_PORT,
        "Hypotheses, most likely first:\n1. checkout's PRODUCT_CATALOG_ADDR points at port 8082 "
        "while product-catalog listens on 8080.\n2. Less likely: product-catalog is overloaded.\n"
        "3. Unlikely: a network policy blocks checkout.",
    )
    assert right_first["D1-Q3"] == "Yes" and right_first["D3-Q1"] == "Yes"
    wrong_first = answers(
        CHECKOUT_PORT,
        "Most likely: product-catalog is crashing and refusing connections (checkout sees "
        "connection refused). Less likely: the port in checkout's PRODUCT_CATALOG_ADDR is wrong.",
    )
    assert wrong_first["D1-Q1"] == "No" and wrong_first["D2-Q2"] == "No"


def test_a_heading_for_alternatives_holds_no_claim() -> None:
    got = answers(
        CHECKOUT_PORT,
        "## Root cause\ncheckout's PRODUCT_CATALOG_ADDR uses port 8082 instead of 8080.\n\n"
        "## Alternative hypotheses\n- product-catalog is overloaded\n- a bad deploy of cart\n",
    )
    assert got["D1-Q3"] == "Yes" and got["D3-Q1"] == "Yes"


SCALED_TO_ZERO = (
    "[fault_spec] component=deployment/user-service; namespace=social-network || The deployment is "
    "scaled to zero replicas, removing all serving pods for this dependency and producing immediate "
    "request failures for traffic that requires this service."
)


def test_impact_in_users_terms_is_an_impact() -> None:
    for said in (
        "Nobody can sign in.",
        "Users cannot log in or load their timelines.",
        "The login page returns errors.",
    ):
        assert (
            answers(SCALED_TO_ZERO, f"user-service was scaled to 0 replicas. {said}")["D3-Q3"]
            == "Yes"
        )
    assert answers(SCALED_TO_ZERO, "user-service was scaled to 0 replicas.")["D3-Q3"] == "No"


DNS_POLICY = (
    "[fault_spec] component=user-service; namespace=social-network || Deployment `user-service` is "
    "configured with an invalid DNS policy (`dnsPolicy: None`) and external resolver (`8.8.8.8`), so "
    "it cannot reliably resolve cluster-internal service names."
)


def test_a_comma_separated_list_of_keywords_claims_nothing() -> None:
    salad = answers(
        DNS_POLICY,
        "dnsPolicy, None, 8.8.8.8, user-service, social-network, svc.cluster.local, resolution errors.",
    )
    assert salad["D1-Q1"] == "No" and salad["D2-Q1"] == "No"
    terse = answers(DNS_POLICY, "user-service: dnsPolicy None, resolver 8.8.8.8 -> lookups fail.")
    assert terse["D1-Q1"] == "Yes" and terse["D2-Q1"] == "Yes"


def test_a_caller_opening_its_clause_is_blamed_not_the_origin_it_calls() -> None:
    got = answers(
        BUGGY_GEO,
        "Search results are empty. Most likely search exhausts its connection pool to geo.",
    )
    assert got["D1-Q1"] == "No" and got["D1-Q3"] == "No" and got["D3-Q1"] == "No"


READINESS = (
    "[fault_spec] component=frontend; namespace=astronomy-shop || The deployment `frontend` has a "
    "misconfigured readiness probe that targets a non-existent health endpoint (`/healthz` on port "
    "`8080`), so pods fail readiness checks and remain NotReady."
)
TARGET_PORT = (
    "[fault_spec] component=service/user-service; namespace=social-network || The Service targetPort "
    "is misconfigured from 9090 to 9999, so cluster requests reach no listening process inside "
    "backend pods and callers observe connection failures and upstream timeouts."
)


def test_a_vague_but_compatible_characterisation_fits_the_fault_type() -> None:
    assert answers(READINESS, "The frontend looks unhealthy; maybe a bad deploy.")["D2-Q3"] == "Yes"
    assert answers(TARGET_PORT, "Possibly user-service is misconfigured.")["D2-Q3"] == "Yes"
    assert answers(TARGET_PORT, "user-service has a memory leak.")["D2-Q3"] == "No"


def test_an_image_reference_in_a_json_field_is_a_value_not_a_component() -> None:
    got = answers(
        BUGGY_GEO,
        '{"root_cause": {"component": "geo", "kind": "Deployment"},\n'
        ' "mechanism": "rolled to a buggy image yinfangchen/geo:app3 that crashes at start",\n'
        ' "symptoms": ["geo pods in CrashLoopBackOff", "search requests that need geo fail"]}',
    )
    assert got["D1-Q3"] == "Yes" and got["D3-Q1"] == "Yes" and got["D2-Q2"] == "Yes"


def test_a_container_that_cannot_find_its_image_is_the_image_mechanism() -> None:
    got = answers(
        INCORRECT_IMAGE, "The product-catalog container can't find its image, so it never starts."
    )
    assert got["D2-Q1"] == "Yes" and got["D2-Q3"] == "Yes"
    assert answers(INCORRECT_IMAGE, "product-catalog: manifest unknown on pull.")["D2-Q1"] == "Yes"


CPU_THROTTLING = (
    "[fault_spec] component=deployment/geo; namespace=hotel-reservation || The `geo` deployment has a "
    "CPU limit set too low for its normal operation, causing intermittent tail latency on search paths."
)


def test_the_bottleneck_is_blamed() -> None:
    assert answers(CPU_THROTTLING, "geo is the bottleneck. Search latency is up.")["D1-Q1"] == "Yes"


REVOKED = (
    "[fault_spec] component=service/mongodb-geo-db; namespace=hotel-reservation || Database access "
    "for mongodb-geo is explicitly revoked, so the service can start but fails on database-backed "
    "operations due to authorization errors from MongoDB."
)


def test_a_remedy_in_the_imperative_states_no_impact() -> None:
    assert answers(REVOKED, "geo svc broken, restart geo.")["D3-Q3"] == "No"
    assert answers(REVOKED, "geo errors whenever it queries mongodb-geo.")["D3-Q3"] == "Yes"
