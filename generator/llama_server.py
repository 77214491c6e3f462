"""llama-cpp-python's OpenAI-compatible server, with a prompt cache that counts all the memory it holds.

    python -m generator.llama_server --model model.gguf ...   (the options of `python -m llama_cpp.server`)

llama-cpp-python's RAM prompt cache (`--cache True --cache_type ram --cache_size N`) evicts its oldest saved state once
the states' size passes N, but it counts only the model state of each (the KV cache). Each saved state also holds a copy
of the logits, which it does not count: of every prompt token under the server's default (`logits_all`, which
`generator.serve` turns off), of up to one prompt-reading batch without; 512 rows of Qwen's 151,936-word vocabulary in
float32 is 311 MB a state, where a 1,000-token prompt's KV cache is 28 MB. A "1 GB" cache grew the server to
10.5 GB during one test session. Counted here, N is the memory the cache holds. `generator.serve` starts this module in
place of `llama_cpp.server`; without the prompt cache, it behaves exactly as that one.
"""

from __future__ import annotations

import os
import runpy

import llama_cpp
from llama_cpp.llama import LlamaState
from llama_cpp.llama_cache import LlamaRAMCache


def held_bytes(state: LlamaState) -> int:
    """The memory one saved state holds: its model state, its copy of the logits, and its tokens."""
    return int(state.llama_state_size) + int(state.scores.nbytes) + int(state.input_ids.nbytes)


class CountedRAMCache(LlamaRAMCache):
    """llama-cpp-python's RAM prompt cache (longest-prefix lookup, least recently used first out), evicting by the
    memory its states hold."""

    @property
    def cache_size(self) -> int:
        return sum(held_bytes(state) for state in self.cache_state.values())


# llama-cpp-python's server listens on $HOST and $PORT when they are set, ahead of its own --host and --port
# (llama_cpp/server/__main__.py). make hands the variables of its command line to every recipe's environment, so
# `make run PORT=8001` started the LLM server on the site's port, where it failed to bind and the stack did not start.
LISTEN_OVERRIDES = ("HOST", "PORT")


def main() -> None:
    for variable in LISTEN_OVERRIDES:  # the address is the options this module is given, nothing else
        os.environ.pop(variable, None)
    # The server builds its cache as `llama_cpp.LlamaRAMCache(capacity_bytes=...)` (llama_cpp/server/model.py).
    llama_cpp.LlamaRAMCache = CountedRAMCache  # type: ignore[attr-defined]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
