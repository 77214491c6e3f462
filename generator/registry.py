"""The generator's adapters by `LLMSettings.server_kind`: the language model client and its token counter.

llama.cpp's server and vLLM are both spoken to by the OpenAI-compatible client (which reads the kind for the few
names they spell differently); "fake" is the deterministic stand-in for fast tests. The token counter counts with
the serving model's own tokenizer (the fake: words and punctuation).
"""

from __future__ import annotations

from operator import attrgetter

from generator.base import LLM, LLMSettings, TokenCounter
from indexer.adapter_registry import AdapterRegistry

_OPENAI_COMPATIBLE = "generator.llm:OpenAICompatibleLLM"
_SERVER_TOKENIZER = "generator.llm:ServerTokenCounter"

LLMS: AdapterRegistry[LLMSettings, LLM] = AdapterRegistry(
    "LLM server kind",
    {"llama.cpp": _OPENAI_COMPATIBLE, "vllm": _OPENAI_COMPATIBLE, "fake": "generator.fake_llm:FakeLLM"},
    key=attrgetter("server_kind"),
)
TOKEN_COUNTERS: AdapterRegistry[LLMSettings, TokenCounter] = AdapterRegistry(
    "LLM server kind",
    {"llama.cpp": _SERVER_TOKENIZER, "vllm": _SERVER_TOKENIZER, "fake": "generator.fake_llm:FakeTokenCounter"},
    key=attrgetter("server_kind"),
)

build_llm = LLMS.build
build_token_counter = TOKEN_COUNTERS.build
