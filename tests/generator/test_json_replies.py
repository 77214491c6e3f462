"""Replies held to a JSON schema (the deep check's claim extraction): each server is asked in its own dialect."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from generator.base import LLMSettings, ServerKind
from generator.llm import OpenAICompatibleLLM

SCHEMA = {"type": "object", "properties": {"sentences": {"type": "array"}}, "required": ["sentences"]}


class Streamed:
    """The chunks of a streamed reply, as the client's stream gives them (and closes)."""

    def __init__(self, pieces: list[str]) -> None:
        self.chunks = [SimpleNamespace(choices=[SimpleNamespace(delta=SimpleNamespace(content=p))]) for p in pieces]
        self.closed = False

    def __iter__(self) -> Iterator[SimpleNamespace]:
        return iter(self.chunks)

    def __enter__(self) -> Streamed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed = True


@pytest.mark.parametrize(
    ("kind", "response_format"),
    [
        # llama-cpp-python's server compiles `schema` into a grammar for `json_object`.
        ("llama.cpp", {"type": "json_object", "schema": SCHEMA}),
        # vLLM takes OpenAI's structured-output format.
        ("vllm", {"type": "json_schema", "json_schema": {"name": "reply", "schema": SCHEMA, "strict": True}}),
    ],
)
def test_the_schema_goes_to_each_server_in_its_own_format(
    kind: ServerKind, response_format: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = OpenAICompatibleLLM(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", server_kind=kind))
    sent: dict[str, Any] = {}

    def create(**request: Any) -> Streamed:
        sent.update(request)
        return Streamed(['{"sentences"', ": ", "[]}"])

    monkeypatch.setattr(llm._client.chat.completions, "create", create)

    reply = llm.complete_json([{"role": "user", "content": "Split."}], schema=SCHEMA, max_tokens=64)

    assert reply == '{"sentences": []}'
    assert sent["extra_body"] == {"response_format": response_format}
    assert (sent["max_tokens"], sent["temperature"], sent["stream"]) == (64, 0.0, True)
