"""Which reply formats the fake provider accepts, and how it refuses the others.

Real OpenAI-compatible servers differ: OpenAI and vLLM take `json_schema`; llama-cpp-python
takes `text` or `json_object` (with an optional `schema`, enforced by a grammar) and answers
`json_schema` with HTTP 500; others refuse with a 400 naming `response_format`, or a FastAPI
422. The bodies below are those servers' shapes; `llama-cpp-python` is the exact body of
llama-cpp-python 0.3.36 (only the install path in its traceback line is shortened).
"""

from __future__ import annotations

from typing import Any, Literal

from judge.testing import replies
from judge.testing.replies import Reply

FormatName = Literal["json_schema", "json_object+schema", "json_object", "text"]
FORMATS: tuple[FormatName, ...] = ("json_schema", "json_object+schema", "json_object", "text")
RefusalShape = Literal["llama-cpp-python", "openai-400", "pydantic-422", "server-500"]
REFUSAL_SHAPES: tuple[RefusalShape, ...] = (
    "llama-cpp-python",
    "openai-400",
    "pydantic-422",
    "server-500",
)

LLAMA_CPP_PYTHON_FORMATS: tuple[FormatName, ...] = ("json_object+schema", "json_object", "text")
"""What llama-cpp-python's server accepts (its `response_format.type` is 'text' or
'json_object'; a `schema` key beside `json_object` is honoured)."""


def request_format(response_format: Any) -> FormatName:
    """The format a request's `response_format` field asks for (`text` when there is none)."""
    if not isinstance(response_format, dict):
        return "text"
    kind = response_format.get("type")
    if kind == "json_object":
        return "json_object+schema" if response_format.get("schema") else "json_object"
    if kind == "json_schema":
        return "json_schema"
    return "text"


def refusal(shape: RefusalShape, asked: FormatName, raw_type: str) -> Reply:
    """The reply of a server of this shape that cannot do `asked`."""
    if shape == "llama-cpp-python":
        return Reply(500, _llama_cpp_python(raw_type))
    if shape == "openai-400":
        message = (
            f"Invalid parameter: 'response_format' of type '{raw_type}' is not supported "
            "with this model."
        )
        if asked == "json_object+schema":
            message = "Unrecognized request argument supplied: response_format.schema"
        body = replies.error(message, "invalid_request_error")
        body["error"]["param"] = "response_format"
        return Reply(400, body)
    if shape == "pydantic-422":
        return Reply(
            422,
            {
                "detail": [
                    {
                        "type": "literal_error",
                        "loc": ["body", "response_format", "type"],
                        "msg": "Input should be 'text'",
                        "input": raw_type,
                        "ctx": {"expected": "'text'"},
                    }
                ]
            },
        )
    return Reply(
        500,
        replies.error(
            f"Internal error: this backend cannot produce response_format {raw_type!r}",
            "server_error",
        ),
    )


def _llama_cpp_python(raw_type: str) -> dict[str, Any]:
    expected = "\"'text' or 'json_object'\""
    detail = (
        "{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
        f"'msg': \"Input should be 'text' or 'json_object'\", 'input': '{raw_type}', "
        f"'ctx': {{'expected': {expected}}}}}"
    )
    message = (
        f"1 validation error:\n  {detail}\n\n"
        '  File "/venv/lib/python3.11/site-packages/llama_cpp/server/app.py", line 376, '
        "in create_chat_completion\n    POST /v1/chat/completions"
    )
    return {
        "error": {"message": message, "type": "internal_server_error", "param": None, "code": None}
    }


def schema_ignored(content: str) -> str:
    """A reply from a server that accepted a schema and did not enforce it: the answers under
    another key, in lower case, in a code fence."""
    return (
        '```json\n{"result": '
        + content.replace('"Yes"', '"yes"').replace('"No"', '"no"')
        + "}\n```"
    )
