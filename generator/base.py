"""The roles a language model backend plays, as Protocols every adapter implements, and the values they exchange.

generator.registry builds the adapter `LLMSettings.server_kind` names: the OpenAI-compatible client for llama.cpp's
server and vLLM (generator.llm), or the deterministic fake for fast tests (generator.fake_llm).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Message = dict[str, str]
# The two servers name a few sampling options and their tokenizer endpoint differently; "fake" is no server at all.
ServerKind = Literal["llama.cpp", "vllm", "fake"]


@dataclass(frozen=True)
class LLMSettings:
    base_url: str
    model: str
    api_key: str = "not-needed"
    timeout_seconds: float = 300.0
    max_retries: int = 2
    server_kind: ServerKind = "llama.cpp"


@dataclass(frozen=True)
class SamplingOptions:
    max_tokens: int
    temperature: float = 0.0
    repetition_penalty: float = 1.0


class ChatModel(Protocol):
    """What a one-shot judge needs: a whole reply to chat messages (the LLM judge of claims)."""

    @property
    def model_id(self) -> str: ...

    def complete_chat(self, messages: list[Message], *, max_tokens: int, temperature: float = 0.0) -> str: ...


class JsonChatModel(ChatModel, Protocol):
    """A model whose reply can be held to a JSON schema by the server's constrained decoding (claim extraction)."""

    def complete_json(self, messages: list[Message], *, schema: dict[str, Any], max_tokens: int) -> str:
        """The whole reply, greedy; it follows `schema` unless `max_tokens` cut it short (then it is not JSON)."""


class TokenChooser(Protocol):
    """A model asked for one greedy token with logit biases added (`generator.yes_no_reading` reads log-odds this
    way: the servers return no token probabilities here)."""

    def choose_token(self, messages: list[Message], *, logit_bias: Mapping[int, float]) -> str:
        """The reply's first token, greedy, after adding `logit_bias` (token id -> bias) to the model's logits."""


class Tokenizer(Protocol):
    """The serving model's tokenizer: a text's token ids."""

    def token_ids(self, text: str) -> list[int]: ...


class LLM(JsonChatModel, TokenChooser, Protocol):
    """A model that writes answers: streamed chat for instruct models, a streamed plain completion for VerifAI's."""

    def stream_chat(self, messages: list[Message], options: SamplingOptions) -> Iterator[str]:
        """Text deltas as they are written, none empty; closing the generator stops the generation."""

    def stream_completion(self, prompt: str, options: SamplingOptions) -> Iterator[str]:
        """Text deltas continuing `prompt`, none empty; closing the generator stops the generation."""


class TokenCounter(Tokenizer, Protocol):
    """Counts tokens the way the serving model does, to fit a prompt into its context window."""

    def count(self, text: str) -> int: ...
