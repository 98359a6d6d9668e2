"""What a batch costs: the provider's batch price, from litellm's price map when it has one,
else the regular price less the provider's documented batch discount."""

from __future__ import annotations

from typing import Any

BATCH_DISCOUNT = {"openai": 0.5, "litellm_proxy": 0.5, "hosted_vllm": 0.0}
"""The share of the regular price a provider takes off for batch jobs, used when litellm has no
batch price for the model: OpenAI's Batch API costs 50% less (openai.com/api/pricing); a
litellm proxy forwards to such providers; a self-hosted vLLM server has no price to discount."""


def _litellm() -> Any:
    from ...judges.clients.litellm_client import import_litellm

    return import_litellm()


def _model_info(model: str) -> dict[str, Any] | None:
    try:
        return dict(_litellm().get_model_info(model=model))
    except Exception:  # no price known for the model
        return None


def batch_cost(model: str, provider: str, prompt: int, completion: int) -> float | None:
    """What `prompt` + `completion` tokens cost in a batch: litellm's batch prices when it has
    them, else its regular prices less `BATCH_DISCOUNT`; None when the model has no price."""
    info = _model_info(model)
    if info is None:
        return None
    batch_in, batch_out = (
        info.get("input_cost_per_token_batches"),
        info.get("output_cost_per_token_batches"),
    )
    if batch_in is not None and batch_out is not None:
        return prompt * batch_in + completion * batch_out
    regular_in, regular_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if regular_in is None or regular_out is None:
        return None
    return (prompt * regular_in + completion * regular_out) * (
        1 - BATCH_DISCOUNT.get(provider, 0.0)
    )


def batch_discount(model: str, provider: str) -> float | None:
    """The share taken off the regular input price for a batch: litellm's, else ours."""
    info = _model_info(model) or {}
    batch_in, regular_in = (
        info.get("input_cost_per_token_batches"),
        info.get("input_cost_per_token"),
    )
    if batch_in is not None and regular_in:
        return round(1 - batch_in / regular_in, 4)
    return BATCH_DISCOUNT.get(provider)
