"""An OpenAI-compatible chat client: the same code talks to llama.cpp's server here and to vLLM in production."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import openai
from openai.types.chat import ChatCompletionChunk

from generator.errors import LLMResponseError, LLMUnavailableError

Message = dict[str, str]


@dataclass(frozen=True)
class LLMSettings:
    base_url: str
    model: str
    api_key: str = "not-needed"
    timeout_seconds: float = 300.0
    max_retries: int = 2


class OpenAICompatibleLLM:
    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key,
            timeout=settings.timeout_seconds,
            max_retries=settings.max_retries,
        )

    @property
    def model_id(self) -> str:
        return self.settings.model

    def stream_chat(
        self, messages: list[Message], *, max_tokens: int, temperature: float, **extra: Any
    ) -> Iterator[str]:
        """Yield text deltas as the server emits them."""
        with _translated_errors(self.settings.base_url):
            stream = self._client.chat.completions.create(
                model=self.settings.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=max_tokens,
                temperature=temperature,
                stream=True,
                extra_body=extra or None,
            )
            for chunk in cast("Iterator[ChatCompletionChunk]", stream):
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content

    def complete_chat(self, messages: list[Message], *, max_tokens: int, temperature: float = 0.0) -> str:
        with _translated_errors(self.settings.base_url):
            response = self._client.chat.completions.create(
                model=self.settings.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=max_tokens,
                temperature=temperature,
            )
        return response.choices[0].message.content or ""


@contextmanager
def _translated_errors(base_url: str) -> Iterator[None]:
    """Map the client's exceptions to ours, keeping whether a retry can help."""
    try:
        yield
    except (openai.APIConnectionError, openai.APITimeoutError) as exc:
        raise LLMUnavailableError(f"the language model server at {base_url} is unreachable: {exc}") from exc
    except openai.APIStatusError as exc:
        if exc.status_code >= 500 or exc.status_code == 429:
            raise LLMUnavailableError(f"the language model server failed ({exc.status_code}): {exc}") from exc
        raise LLMResponseError(f"the language model server refused the request ({exc.status_code}): {exc}") from exc
