"""`judge eval --batch`: the calls the store cannot answer go to the provider as one batch job.

OpenAI-compatible Batch API (`/v1/files` + `/v1/batches`, litellm's `acreate_file`,
`acreate_batch`, `aretrieve_batch`, `afile_content`), for the providers litellm runs it for
(`openai`, `hosted_vllm`, `litellm_proxy`; any `--api-base` of theirs). The phase runs before the
run's workers start:

1. every unit's store key is computed; the ones the store answers are left to it;
2. open batches in the store that hold any of the other keys (a run that was killed while it
   polled) are polled again instead of submitting their calls a second time;
3. the rest go out as ONE batch: a JSONL file whose lines carry `custom_id` = the store key and
   the request the live call would send (`LLMJudge.request`); the batch id and the calls it holds
   are written to the store at once, before the first poll;
4. the batch is polled with backoff and a progress line (status, completed, failed); when it
   ends, each line's reply is read like a live reply (`parse_reply`, `checked_verdict`) and its
   answer, or its error, is written to the store with the call's state in one transaction;
5. calls lost to an expired, failed or cancelled batch, or to a failed line that a live call
   would have retried (429, 5xx, timeout), are reported (how many, and why) and asked again in
   a new batch, at most `rounds` times; so are unusable replies, with the live call's re-ask
   chat (`reask_messages`, at most `max_reasks` times). A line's other errors (400) are errors.
6. reply format: lines ask in the judge's negotiated mode (the one the store remembers for the
   endpoint, else `json_schema`). A line the server refused for its format (the live call's
   detector, `is_format_refusal`) steps the negotiation down, and exactly those calls are asked
   again in the weaker mode, in a new batch (at most one per mode); a line answered in the
   current mode confirms it, so it is remembered and named in the result as a live run's is.

So the batch fills the store before the run (`fill_store`), and the run then serves every
unit from the store and asks nothing live: an answer this run's batches wrote counts as a call
made (the result's calls and usage say which batch), an older one as a store hit, a call
that failed in a batch as that failed call, and a call no batch answered as not judged.

Cost: the provider's batch price. litellm's `*_batches` prices when it has them, else the
regular price less the provider's documented batch discount (`cost.BATCH_DISCOUNT`);
`--max-cost` keeps each batch's worst case within the budget (`budget`).
"""

from .cost import batch_cost, batch_discount
from .fill import fill_store
from .phase import BatchOptions, batch_provider
from .report import BatchReport, merge_batch_usage

__all__ = [
    "BatchOptions",
    "BatchReport",
    "batch_cost",
    "batch_discount",
    "batch_provider",
    "fill_store",
    "merge_batch_usage",
]
