"""An OpenAI-compatible client: the same code talks to llama.cpp's server here and to vLLM in production.

Two request shapes: chat messages (general instruct models, with their chat template applied by the server) and
a raw completion prompt (the fine-tuned VerifAI model, trained on a plain-text prompt without a chat template).
Streams are generators that close their HTTP response when the caller stops iterating, which is how a cancelled
answer stops the server's generation: both llama.cpp's server and vLLM abort a request whose client went away.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

import httpx
import openai
from openai.types import Completion
from openai.types.chat import ChatCompletionChunk

from generator.base import LLMSettings, Message, SamplingOptions
from generator.errors import LLMResponseError, LLMUnavailableError


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

    def _extra_body(self, options: SamplingOptions) -> dict[str, Any] | None:
        if options.repetition_penalty == 1.0:
            return None
        key = "repeat_penalty" if self.settings.server_kind == "llama.cpp" else "repetition_penalty"
        return {key: options.repetition_penalty}

    def stream_chat(self, messages: list[Message], options: SamplingOptions) -> Iterator[str]:
        """Yield text deltas as the server emits them; closing the generator closes the connection."""
        with translated_errors(self.settings.base_url):
            stream = self._client.chat.completions.create(
                model=self.settings.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=options.max_tokens,
                temperature=options.temperature,
                stream=True,
                extra_body=self._extra_body(options),
            )
            with cast("openai.Stream[ChatCompletionChunk]", stream):
                for chunk in cast("Iterator[ChatCompletionChunk]", stream):
                    if chunk.choices and chunk.choices[0].delta.content:
                        yield chunk.choices[0].delta.content

    def stream_completion(self, prompt: str, options: SamplingOptions) -> Iterator[str]:
        """Yield text deltas of a plain completion; closing the generator closes the connection."""
        with translated_errors(self.settings.base_url):
            stream = self._client.completions.create(
                model=self.settings.model,
                prompt=prompt,
                max_tokens=options.max_tokens,
                temperature=options.temperature,
                stream=True,
                extra_body=self._extra_body(options),
            )
            with stream:
                for chunk in cast("Iterator[Completion]", stream):
                    if chunk.choices and chunk.choices[0].text:
                        yield chunk.choices[0].text

    def complete_chat(self, messages: list[Message], *, max_tokens: int, temperature: float = 0.0) -> str:
        with translated_errors(self.settings.base_url):
            response = self._client.chat.completions.create(
                model=self.settings.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=max_tokens,
                temperature=temperature,
            )
        return response.choices[0].message.content or ""

    def choose_token(self, messages: list[Message], *, logit_bias: Mapping[int, float]) -> str:
        """One greedy token after `logit_bias`: both servers take OpenAI's `logit_bias`, keyed by token id (vLLM
        clamps each bias to +-100, so callers stay inside that)."""
        with translated_errors(self.settings.base_url):
            response = self._client.chat.completions.create(
                model=self.settings.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=1,
                temperature=0.0,
                # The client types biases as whole numbers; both servers read floats.
                logit_bias={str(token): bias for token, bias in logit_bias.items()},  # type: ignore[misc]
            )
        return response.choices[0].message.content or ""

    def complete_json(self, messages: list[Message], *, schema: dict[str, Any], max_tokens: int) -> str:
        """A reply held to `schema`: llama.cpp's server turns the schema into a grammar (`json_object` with a
        `schema`), vLLM takes OpenAI's `json_schema` response format; both decode only tokens the schema allows.

        Streamed and joined: a long reply on a slow machine keeps the connection busy instead of running into the
        client's timeout (whose retry would queue the same request behind the first), and a caller that gives up
        closes the stream, which stops the server's generation."""
        if self.settings.server_kind == "vllm":
            response_format: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema, "strict": True},
            }
        else:
            response_format = {"type": "json_object", "schema": schema}
        with translated_errors(self.settings.base_url):
            stream = self._client.chat.completions.create(
                model=self.settings.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=max_tokens,
                temperature=0.0,
                stream=True,
                extra_body={"response_format": response_format},
            )
            with cast("openai.Stream[ChatCompletionChunk]", stream):
                return "".join(
                    chunk.choices[0].delta.content
                    for chunk in cast("Iterator[ChatCompletionChunk]", stream)
                    if chunk.choices and chunk.choices[0].delta.content
                )


class ServerTokenCounter:
    """Counts tokens with the serving model's own tokenizer, through the server's tokenize endpoint.

    Counting with another tokenizer (tiktoken, a word count) misjudges a 7B Mistral or a Qwen prompt by 10-30%,
    enough to overflow the context window or to waste a tenth of it.
    """

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        root = settings.base_url.rstrip("/").removesuffix("/v1")
        # vLLM: POST /tokenize {"model", "prompt"} -> {"count", "tokens"}; llama-cpp-python: POST /extras/tokenize
        # {"input"} -> {"tokens"}, and /extras/tokenize/count -> {"count"}.
        vllm = settings.server_kind == "vllm"
        self._url = f"{root}/tokenize" if vllm else f"{root}/extras/tokenize/count"
        self._ids_url = f"{root}/tokenize" if vllm else f"{root}/extras/tokenize"
        self._client = httpx.Client(timeout=settings.timeout_seconds)
        self._cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        if text not in self._cache:
            self._cache[text] = int(self._post(self._url, text)["count"])
        return self._cache[text]

    def token_ids(self, text: str) -> list[int]:
        return [int(token) for token in self._post(self._ids_url, text)["tokens"]]

    def _post(self, url: str, text: str) -> dict[str, Any]:
        if self.settings.server_kind == "vllm":
            body: dict[str, Any] = {"model": self.settings.model, "prompt": text, "add_special_tokens": False}
        else:
            body = {"input": text}
        try:
            response = self._client.post(url, json=body)
        except httpx.HTTPError as exc:
            raise LLMUnavailableError(f"the tokenizer endpoint {url} is unreachable: {exc}") from exc
        if response.status_code >= 500:
            raise LLMUnavailableError(f"the tokenizer endpoint {url} failed ({response.status_code})")
        if response.status_code != 200:
            raise LLMResponseError(
                f"the tokenizer endpoint {url} refused the request ({response.status_code}): {response.text[:300]}"
            )
        return dict(response.json())


@contextmanager
def translated_errors(base_url: str) -> Iterator[None]:
    """Map the client's exceptions to ours, keeping whether a retry can help."""
    try:
        yield
    except (openai.APIConnectionError, openai.APITimeoutError, httpx.TransportError) as exc:
        raise LLMUnavailableError(f"the language model server at {base_url} is unreachable: {exc}") from exc
    except openai.APIStatusError as exc:
        if exc.status_code >= 500 or exc.status_code == 429:
            raise LLMUnavailableError(f"the language model server failed ({exc.status_code}): {exc}") from exc
        raise LLMResponseError(f"the language model server refused the request ({exc.status_code}): {exc}") from exc
