"""The rules judge on text-only SREGym truths: one test per failure mode of issues 15 and 10."""

from __future__ import annotations

import pytest
import yaml

from ground_truth import ComponentRef, IncidentSpec, Submission
from judge import JudgeTask, PromptRenderer, RulesJudge, evaluate_submission, load_rubric
from judge.checklist.prompts import Prompt
from judge.judges.rules import bind, binding_warnings, rule_for_text
from judge.judges.rules.names import mentions
from judge.judges.rules.truth import parse_truth

CHECKOUT_PORT = (
    "[fault_spec] component=deployment/checkout; namespace=astronomy-shop || The PRODUCT_CATALOG_ADDR "
    "environment variable points to the wrong backend port (8082 instead of 8080), so checkout cannot "
    "reach product-catalog and related requests fail. Symptoms include connection-refused errors and "
    "elevated failed request rates on checkout endpoints."
)
READINESS = (
    "[fault_spec] component=user-service; namespace=social-network || The deployment `user-service` "
    "has a misconfigured readiness probe that targets a non-existent health endpoint (`/healthz` on "
    "port `8080`), so pods fail readiness checks and remain NotReady."
)
EXPIRED_TLS = (
    "[fault_spec] component=frontend-ingress; namespace=hotel-reservation || The frontend Ingress "
    "resource is configured with a TLS secret named `hotel-frontend-tls` which contains an expired TLS "
    "certificate. This breaks HTTPS connections."
)
INCORRECT_IMAGE = (
    "[fault_spec] component=deployment/product-catalog; namespace=astronomy-shop || The "
    "product-catalog deployment is configured to pull a non-existent image tag (app-image:latest), so "
    "pods fail with image pull errors and the catalog path becomes unavailable. Symptoms typically "
    "include ImagePullBackOff events and upstream checkout calls timing out or failing."
)
GOGC = (
    "[fault_spec] component=deployments/all; namespace=blueprint-hotel-reservation || All workloads "
    "run with an aggressively low GOGC setting, forcing frequent garbage collection cycles that consume "
    "CPU."
)
PSA = (
    "[fault_spec] component=namespace/hotel-reservation; namespace=hotel-reservation || The "
    "`hotel-reservation` namespace has the Pod Security Admission label "
    "`pod-security.kubernetes.io/enforce=restricted`, so pods that run as root are rejected."
)
DNS_POLICY = (
    "[fault_spec] component=profile; namespace=hotel-reservation || Deployment `profile` is configured "
    "with an invalid DNS policy (`dnsPolicy: None`) and external resolver (`8.8.8.8`), so it cannot "
    "reliably resolve cluster-internal service names."
)
AGGRESSIVE_PROBE = (
    "[fault_spec] component=aux-service; namespace=astronomy-shop || The deployment `aux-service` uses "
    "an overly aggressive liveness probe (`initialDelaySeconds=0`, `periodSeconds=1`, "
    "`failureThreshold=1`), so pods are killed and restarted."
)
SCALED_TO_ZERO = (
    "[fault_spec] component=deployment/user-service; namespace=social-network || The deployment is "
    "scaled to zero replicas, removing all serving pods for this dependency and producing immediate "
    "request failures."
)


def answers(ground_truth: str, diagnosis: str) -> dict[str, str | None]:
    spec = IncidentSpec(id="case", ground_truth=ground_truth)
    case = evaluate_submission(spec, Submission(incident_id="case", diagnosis=diagnosis))
    return {j.question_id: j.answer for j in case.judgments}


def composite(ground_truth: str, diagnosis: str) -> float | None:
    spec = IncidentSpec(id="case", ground_truth=ground_truth)
    return evaluate_submission(spec, Submission(incident_id="case", diagnosis=diagnosis)).composite


# 1 -------------------------------------------------------------------------------- namespaces


def test_1_the_right_name_in_another_namespace_is_another_component() -> None:
    wrong = answers(
        READINESS,
        "user-service in the default namespace has a readiness probe on /healthz that always fails.",
    )
    assert wrong["D1-Q1"] == "No" and wrong["D1-Q3"] == "No" and wrong["D3-Q2"] == "No"
    right = answers(
        READINESS,
        "user-service in the social-network namespace has a readiness probe on /healthz that always fails.",
    )
    assert right["D1-Q1"] == "Yes" and right["D1-Q3"] == "Yes"
    prefixed = answers(READINESS, "staging/user-service has a misconfigured readiness probe.")
    assert prefixed["D1-Q1"] == "No"


# 2 -------------------------------------------------------------------------------- common words


def test_2_an_all_deployments_origin_needs_a_phrase_that_says_all() -> None:
    assert (
        answers(GOGC, "The frontend is slow and all of it is broken because its GOGC is too low.")[
            "D1-Q1"
        ]
        == "No"
    )
    assert (
        answers(GOGC, "All deployments run with GOGC=10, which is misconfigured.")["D1-Q1"] == "Yes"
    )


def test_2_a_namespace_origin_is_named_only_as_a_namespace() -> None:
    victim = "The geo pod in hotel-reservation is misconfigured: its image tag is wrong."
    assert answers(PSA, victim)["D1-Q1"] == "No"
    right = "The hotel-reservation namespace enforces the restricted Pod Security Standard, so root pods are rejected."
    assert answers(PSA, right)["D1-Q1"] == "Yes"


def test_2_a_common_word_name_needs_its_kind() -> None:
    rpc = ComponentRef(name="rpc", kind="configmap")
    assert not mentions("rpc calls time out", rpc)
    assert mentions("the rpc ConfigMap sets a 50ms timeout", rpc)
    assert mentions("configmap/rpc has 30 retries", rpc)
    basic = ComponentRef(name="basic", kind="tidbcluster")
    assert not mentions("a basic misconfiguration", basic)
    assert mentions("the tidbcluster basic sets 100000 replicas", basic)


# 3 -------------------------------------------------------------------------------- qualified names


@pytest.mark.parametrize(
    ("component", "diagnosis"),
    [
        (
            "vpa-updater CronJob (kube-system)",
            "The vpa-updater CronJob in kube-system patches memory limits too low.",
        ),
        (
            "postgresql (table catalog.products)",
            "Postgres holds an exclusive lock on the products table, which is the root cause.",
        ),
        (
            "search-to-rate RPC path",
            "The root cause is the retry policy on the search to rate path: search retries rate three times.",
        ),
    ],
)
def test_3_qualified_origins_are_matched_after_normalisation(
    component: str, diagnosis: str
) -> None:
    namespace = "kube-system" if "kube-system" in component else "hotel-reservation"
    truth = f"[fault_spec] component={component}; namespace={namespace} || A fault."
    assert answers(truth, diagnosis)["D1-Q1"] == "Yes"


# 4 -------------------------------------------------------------------------------- aliases


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("user-svc is down", "user-service", True),
        ("userservice is down", "user-service", True),
        ("the user service is down", "user-service", True),
        ("user requests fail", "user-service", False),
        ("Postgres is locked", "postgresql", True),
        ("mongo-geo refuses queries", "mongodb-geo", True),
        ("the geo-db refuses queries", "mongodb-geo", True),
        ("geo-db is down", "geo", False),
        ("the profile databases are down", "profile", False),
        ("redis-cart is full", "valkey-cart", True),
        ("user-timeline-service is slow", "user-service", False),
        ("the pod-policy webhook times out", "pod-policy.validation.k8s.io", True),
        ("tidb-operator is rolled to a bad image", "tidb-operator-controller-manager", True),
    ],
)
def test_4_shorthand_aliases(text: str, name: str, expected: bool) -> None:
    assert mentions(text, ComponentRef(name=name)) is expected


def test_4_the_only_store_of_its_kind_answers_to_the_store_name() -> None:
    truth = "[fault_spec] component=service/valkey-cart; namespace=astronomy-shop || The valkey password is invalid."
    got = answers(truth, "The Redis password was changed, so the cart service cannot authenticate.")
    assert got["D1-Q1"] == "Yes" and got["D1-Q3"] == "Yes"


def test_4_a_service_named_by_a_common_word_is_not_every_use_of_the_word() -> None:
    from judge.judges.rules.names import find

    rate = ComponentRef(name="rate")
    assert not find("the error rate doubled", rate, strict=True)
    assert not find("rate limits were hit", rate, strict=True)
    assert find("rate is crash-looping", rate, strict=True)


def test_4_a_victim_named_by_a_common_word_is_still_seen_as_the_victim() -> None:
    truth = (
        "[fault_spec] component=deployment/profile; namespace=hotel-reservation || The container "
        "entrypoint points to the wrong service binary, so profile exits at startup."
    )
    got = answers(
        truth,
        "search is failing because its requests to profile time out; search's timeout is too low.",
    )
    assert got["D1-Q1"] == "No" and got["D1-Q3"] == "No"


def test_4_a_list_of_the_origins_is_blame_not_a_list_of_everything() -> None:
    truth = (
        "[fault_spec] component=deployments/mongodb-geo, mongodb-profile, mongodb-rate, mongodb-user; "
        "namespace=hotel-reservation || Multiple MongoDB backends are upgraded to an incompatible image "
        "version (mongo:8.0.14-rc0)."
    )
    got = answers(
        truth,
        "mongodb-geo, mongodb-profile, mongodb-rate and mongodb-user were upgraded to the incompatible image mongo:8.0.14-rc0.",
    )
    assert got["D1-Q1"] == got["D3-Q2"] == "Yes"


def test_4_every_deployment_counts_as_the_origin_when_the_truth_says_all() -> None:
    truth = (
        "[fault_spec] component=all hotel-reservation deployments; namespace=hotel-reservation || All "
        "hotel-reservation pods set net.ipv4.ip_local_port_range to '32000 32003'."
    )
    assert (
        answers(truth, "The frontend runs out of ephemeral ports because of a narrow port range.")[
            "D1-Q1"
        ]
        == "Yes"
    )


def test_4_a_node_level_origin_is_also_the_node() -> None:
    truth = "[fault_spec] component=node/system-clock; namespace=kube-system || A worker node's clock is skewed."
    assert (
        answers(truth, "The root cause is clock drift on the worker node: NTP was stopped.")[
            "D1-Q1"
        ]
        == "Yes"
    )


# 5 -------------------------------------------------------------------------------- healthy others


def test_5_a_sentence_blaming_the_origin_and_clearing_others_keeps_the_origin() -> None:
    got = answers(
        CHECKOUT_PORT,
        "The checkout deployment is misconfigured with the wrong product-catalog port 8082, while frontend and cart are healthy.",
    )
    assert got["D1-Q1"] == got["D1-Q2"] == got["D1-Q3"] == got["D3-Q1"] == "Yes"


# 6 -------------------------------------------------------------------------------- blame needs a cue


def test_6_a_dependency_named_inside_the_origins_cause_is_not_blamed() -> None:
    got = answers(
        CHECKOUT_PORT,
        "Root cause: checkout's PRODUCT_CATALOG_ADDR points to product-catalog.astronomy-shop.svc:8082, "
        "but product-catalog listens on 8080.",
    )
    assert got["D1-Q1"] == got["D1-Q3"] == got["D3-Q1"] == "Yes"


def test_6_a_victim_named_in_a_symptom_is_not_blamed() -> None:
    got = answers(
        CHECKOUT_PORT,
        "Users see errors on the product-catalog page. The root cause is checkout: its catalog address uses port 8082.",
    )
    assert got["D1-Q3"] == got["D3-Q1"] == "Yes"


def test_6_the_origin_as_the_object_of_another_culprit_is_not_blamed() -> None:
    got = answers(
        CHECKOUT_PORT, "The root cause is product-catalog, which refuses connections from checkout."
    )
    assert got["D1-Q1"] == "No" and got["D1-Q3"] == "No"


def test_6_x_is_the_root_cause_blames_x_not_what_x_uses() -> None:
    truth = (
        "[fault_spec] component=ad; namespace=astronomy-shop || The Kubernetes Service `ad` has been "
        "deleted, so frontend cannot resolve it."
    )
    got = answers(
        truth, "frontend is the root cause: it has a bug in its ad client and throws exceptions."
    )
    assert got["D1-Q1"] == "No" and got["D1-Q3"] == "No"


def test_6_blaming_a_victim_beside_the_origin_is_over_attribution() -> None:
    got = answers(
        CHECKOUT_PORT,
        "The checkout deployment uses the wrong port 8082. In addition, product-catalog is misconfigured and also at fault.",
    )
    assert got["D1-Q1"] == "Yes" and got["D1-Q3"] == "No" and got["D3-Q1"] == "No"


# 7 -------------------------------------------------------------------------------- taxonomy


def test_7_the_truths_mechanism_not_its_context_sets_the_fault_type() -> None:
    """`timing out` is an impact of the truth, not its mechanism."""
    got = answers(
        INCORRECT_IMAGE, "product-catalog fails because its request timeout is configured too low."
    )
    assert got["D2-Q1"] == "No" and got["D2-Q3"] == "No"


def test_7_dns_policy_is_a_dns_mechanism() -> None:
    got = answers(
        DNS_POLICY,
        "The profile deployment sets dnsPolicy: None with 8.8.8.8 as resolver, so profile cannot resolve mongodb-profile.",
    )
    assert got["D2-Q1"] == got["D2-Q2"] == got["D2-Q3"] == "Yes"


def test_7_a_category_is_not_the_mechanism_but_is_a_compatible_type() -> None:
    got = answers(EXPIRED_TLS, "The frontend-ingress has a TLS issue, so HTTPS requests fail.")
    assert got["D2-Q1"] == "No" and got["D2-Q3"] == "Yes"
    right = answers(
        EXPIRED_TLS,
        "The frontend-ingress TLS certificate in secret hotel-frontend-tls has expired.",
    )
    assert right["D2-Q1"] == right["D2-Q2"] == right["D2-Q3"] == "Yes"


def test_7_a_cause_outside_the_taxonomy_is_no_characterisation() -> None:
    assert answers(EXPIRED_TLS, "The frontend-ingress is broken.")["D2-Q3"] == "No"


# 8 -------------------------------------------------------------------------------- no fault found


def test_8_no_faulty_component_found_fails_localisation_and_type() -> None:
    got = answers(
        CHECKOUT_PORT, "No faulty components were found. All pods are running as expected."
    )
    assert got["D1-Q1"] == got["D1-Q3"] == got["D2-Q3"] == got["D3-Q1"] == "No"


def test_8_an_origin_in_a_list_of_healthy_services_is_not_named() -> None:
    got = answers(
        CHECKOUT_PORT,
        "checkout, cart, frontend and product-catalog are all healthy; I found no faulty component.",
    )
    assert got["D1-Q1"] == "No" and got["D3-Q2"] == "No"


def test_8_an_origin_in_a_list_of_every_service_is_not_named() -> None:
    got = answers(
        CHECKOUT_PORT,
        "Could be any of: frontend, cart, checkout, currency, email, payment, product-catalog, quote.",
    )
    assert got["D1-Q1"] == "No" and got["D3-Q2"] == "No"


def test_8_four_named_culprits_are_blame_not_a_list_of_everything() -> None:
    got = answers(
        CHECKOUT_PORT,
        "checkout has the wrong PRODUCT_CATALOG_ADDR port; cart, currency, email and payment are faulty as well.",
    )
    assert got["D1-Q1"] == "Yes" and got["D1-Q3"] == "No" and got["D3-Q1"] == "No"


# 9 -------------------------------------------------------------------------------- outside namespaces


def test_9_blame_on_a_component_the_catalog_does_not_know_is_visible() -> None:
    got = answers(
        CHECKOUT_PORT,
        "checkout is fine. The root cause is deployment/nginx-gateway in the ingress-nginx namespace, which is misconfigured.",
    )
    assert got["D1-Q3"] == "No" and got["D3-Q1"] == "No"
    infra = answers(CHECKOUT_PORT, "The root cause is kube-proxy, which drops packets to checkout.")
    assert infra["D1-Q3"] == "No" and infra["D3-Q1"] == "No"


# 10 ------------------------------------------------------------------------------- values


def test_10_zero_and_one_count_beside_their_key() -> None:
    assert answers(SCALED_TO_ZERO, "user-service was scaled to 0 replicas.")["D2-Q2"] == "Yes"
    assert (
        answers(SCALED_TO_ZERO, "user-service has replicas: 0, so nothing serves requests.")[
            "D2-Q2"
        ]
        == "Yes"
    )
    assert (
        answers(AGGRESSIVE_PROBE, "aux-service's liveness probe has failureThreshold: 1.")["D2-Q2"]
        == "Yes"
    )
    stray = answers(
        AGGRESSIVE_PROBE, "aux-service restarted 1 time after the liveness probe failed."
    )
    assert stray["D2-Q2"] == "No"


def test_10_three_words_of_a_quoted_message_state_it() -> None:
    truth = (
        "[fault_spec] component=deployment/recommendation; namespace=hotel-reservation || Pod creation "
        "fails with `Timeout: request did not complete within requested timeout - context deadline "
        "exceeded` because webhooks are slow."
    )
    assert (
        answers(truth, "recommendation pods fail admission: 'context deadline exceeded'.")["D2-Q2"]
        == "Yes"
    )


def test_10_a_wrong_value_for_the_right_key_is_not_the_detail() -> None:
    assert (
        answers(AGGRESSIVE_PROBE, "aux-service's liveness probe has failureThreshold: 5.")["D2-Q2"]
        == "No"
    )


# 11 ------------------------------------------------------------------------------- impact from text


def test_11_impact_is_read_from_the_ground_truth_text() -> None:
    assert (
        answers(INCORRECT_IMAGE, "product-catalog pods are in ImagePullBackOff.")["D3-Q3"] == "Yes"
    )
    assert answers(INCORRECT_IMAGE, "product-catalog has a wrong image tag.")["D3-Q3"] == "No"


# 12 ------------------------------------------------------------------------------- prose truths


def test_12_a_prose_truth_names_its_origin() -> None:
    prose = (
        "The deployment `checkout` has the environment variable `PRODUCT_CATALOG_ADDR` configured with "
        "an incorrect port `8082` instead of `8080`."
    )
    assert [c.name for c in parse_truth(IncidentSpec(id="p", ground_truth=prose)).origins] == [
        "checkout"
    ]
    got = answers(
        prose,
        "checkout's PRODUCT_CATALOG_ADDR uses port 8082, so checkout cannot reach the catalog.",
    )
    assert None not in got.values()
    assert got["D1-Q1"] == got["D2-Q1"] == got["D2-Q2"] == "Yes"


@pytest.mark.parametrize(
    ("prose", "origin"),
    [
        (
            "The password in valkey is invalidated, therefore dependent services cannot work",
            "valkey-cart",
        ),
        ("The ConfigMap `rpc` has a misconfigured RPC timeout (50ms) and 30 retries.", "rpc"),
    ],
)
def test_12_a_prose_origin_named_by_its_store_or_beside_its_kind(prose: str, origin: str) -> None:
    assert [c.name for c in parse_truth(IncidentSpec(id="p", ground_truth=prose)).origins] == [
        origin
    ]


def test_12_a_prose_truth_with_a_list_of_origins() -> None:
    prose = "The MongoDB deployments (mongodb-geo, mongodb-profile) are updated to an incompatible image 'mongo:8.0.14-rc0'."
    truth = parse_truth(IncidentSpec(id="p", ground_truth=prose))
    assert [c.name for c in truth.origins] == ["mongodb-geo", "mongodb-profile"]
    assert truth.namespaces == {"hotel-reservation"}


# 13 ------------------------------------------------------------------------------- binding by text


def test_13_rules_bind_by_question_text_not_id() -> None:
    rubric = load_rubric()
    by_text = {q.id: rule_for_text(q.text) for d in rubric.dimensions for q in d.questions}
    assert by_text == {
        "D1-Q1": "origin_named",
        "D1-Q2": "origin_distinguished",
        "D1-Q3": "no_healthy_component_blamed",
        "D2-Q1": "mechanism_matched",
        "D2-Q2": "parameters_named",
        "D2-Q3": "fault_type_consistent",
        "D3-Q1": "no_uninvolved_component_blamed",
        "D3-Q2": "all_components_named",
        "D3-Q3": "symptoms_matched",
    }
    impact_text = rubric.dimensions[2].questions[2].text
    assert bind(None, impact_text) == "symptoms_matched"
    assert bind("origin_named", impact_text) == "origin_named"


def test_13_a_question_with_another_questions_id_gets_the_rule_its_text_asks_for() -> None:
    rubric = load_rubric()
    impact = rubric.dimensions[2].questions[2]
    swapped = impact.model_copy(update={"id": "D2-Q1"})
    dimension = rubric.dimensions[1].model_copy(update={"questions": [swapped]})
    spec = IncidentSpec(id="case", ground_truth=INCORRECT_IMAGE)
    sub = Submission(
        incident_id="case", diagnosis="product-catalog pods are stuck in ImagePullBackOff."
    )
    task = JudgeTask(spec, sub, dimension, PromptRenderer().render(spec, sub, dimension))
    assert RulesJudge().answer(task).answers[0].answer == "Yes"


def test_13_binding_warnings() -> None:
    rubric = load_rubric()
    questions = [(q.id, q.rule, q.text) for d in rubric.dimensions for q in d.questions]
    assert binding_warnings(questions) == []
    impact_text = rubric.dimensions[2].questions[2].text
    [warning] = binding_warnings([("X", "origin_named", impact_text)])
    assert "origin_named" in warning and "symptoms_matched" in warning
    [none] = binding_warnings([("Y", None, "Is the diagnosis polite?")])
    assert "unscored" in none
    [unknown] = binding_warnings([("Z", "nope", "Is it polite?")])
    assert "unknown rule" in unknown


# issue 10 ------------------------------------------------------------------------ nothing rewarded


def test_avoid_questions_need_a_positive_claim() -> None:
    got = answers(CHECKOUT_PORT, "Something is wrong with the network.")
    assert got["D1-Q3"] == got["D3-Q1"] == "No"


@pytest.mark.parametrize(
    "truth", [CHECKOUT_PORT, READINESS, EXPIRED_TLS, INCORRECT_IMAGE, GOGC, PSA]
)
def test_gibberish_fails_every_question(truth: str) -> None:
    got = answers(truth, "asdf qwerty lorem ipsum.")
    assert set(got.values()) == {"No"}


@pytest.mark.parametrize(
    ("truth", "salad"),
    [
        (
            CHECKOUT_PORT,
            "checkout PRODUCT_CATALOG_ADDR environment variable port 8082 8080 product-catalog connection-refused",
        ),
        (
            INCORRECT_IMAGE,
            "product-catalog deployment image tag app-image:latest ImagePullBackOff checkout unavailable",
        ),
        (READINESS, "user-service readiness probe /healthz 8080 NotReady social-network"),
    ],
)
def test_a_diagnosis_made_of_the_specs_keywords_does_not_pass(truth: str, salad: str) -> None:
    assert (composite(truth, salad) or 0) < 0.7


def test_a_terse_note_is_not_a_keyword_salad() -> None:
    terse = "user-service-5b8c7f9d6-p2xvw: readiness probe GET /healthz:8080 -> 404, pod never Ready; callers time out."
    assert (composite(READINESS, terse) or 0) >= 0.7


def test_correct_text_only_diagnoses_pass() -> None:
    assert (
        composite(
            CHECKOUT_PORT,
            "The root cause is the checkout deployment: its PRODUCT_CATALOG_ADDR env var points to port 8082 instead of 8080, so checkout gets connection refused from product-catalog.",
        )
        or 0
    ) >= 0.7
    assert (
        composite(
            INCORRECT_IMAGE,
            "deployment/product-catalog was changed to the non-existent image app-image:latest; its pods are stuck in ImagePullBackOff and checkout calls time out.",
        )
        or 0
    ) >= 0.7


def test_parameters_flattening_is_bounded() -> None:
    bomb = yaml.safe_load(
        'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
        "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
        "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    )
    # Specs refuse nesting beyond MAX_DEPTH (100); just under it is the deepest the judge meets.
    deep: dict = {"v": "8082"}
    for _ in range(95):
        deep = {"k": deep}
    rubric = load_rubric()
    for parameters in (bomb, deep):
        spec = IncidentSpec(id="p", ground_truth=CHECKOUT_PORT, parameters=parameters)
        truth = parse_truth(spec)
        assert len(truth.values) <= 210
        sub = Submission(incident_id="p", diagnosis="checkout uses port 8082.")
        task = JudgeTask(spec, sub, rubric.dimensions[1], Prompt(messages=[], hash=""))
        assert RulesJudge().answer(task).answers[1].answer == "Yes"
