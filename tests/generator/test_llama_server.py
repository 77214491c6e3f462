"""The prompt cache of generator.llama_server against llama-cpp-python's own: eviction by the memory states hold."""

from __future__ import annotations

import numpy as np
from llama_cpp.llama import LlamaState
from llama_cpp.llama_cache import LlamaRAMCache

from generator.llama_server import CountedRAMCache, held_bytes

VOCABULARY = 151_936  # Qwen's
MB = 2**20


def saved_state(tokens: list[int], *, logit_rows: int, model_state_bytes: int) -> LlamaState:
    """A state as Llama.save_state makes it: the model state's bytes, the logits of the last batch, the tokens."""
    input_ids = np.zeros(8192, dtype=np.intc)
    input_ids[: len(tokens)] = tokens
    return LlamaState(
        input_ids=input_ids,
        scores=np.zeros((logit_rows, VOCABULARY), dtype=np.single),
        n_tokens=len(tokens),
        llama_state=b"\0" * model_state_bytes,
        llama_state_size=model_state_bytes,
        seed=0,
    )


def fill(cache: LlamaRAMCache, count: int) -> None:
    for number in range(count):
        cache[[number, 1, 2, 3]] = saved_state([number, 1, 2, 3], logit_rows=64, model_state_bytes=MB)


def test_a_state_holds_its_logits_and_tokens_beside_its_model_state() -> None:
    state = saved_state([1, 2, 3], logit_rows=64, model_state_bytes=MB)

    assert held_bytes(state) == MB + 64 * VOCABULARY * 4 + 8192 * 4


def test_the_cache_evicts_by_the_memory_its_states_hold() -> None:
    capacity = 200 * MB  # each state holds 1 MB of model state and 37 MB of logits: five fit
    counted, libraries_own = CountedRAMCache(capacity_bytes=capacity), LlamaRAMCache(capacity_bytes=capacity)

    fill(counted, 10)
    fill(libraries_own, 10)

    assert len(counted.cache_state) == 5
    assert counted.cache_size <= capacity
    assert sum(held_bytes(state) for state in libraries_own.cache_state.values()) > capacity  # what it fixes
    # Least recently used out first: the five last saved remain.
    assert [key[0] for key in counted.cache_state] == [5, 6, 7, 8, 9]


def test_a_prompt_resumes_from_the_longest_saved_prefix() -> None:
    cache = CountedRAMCache(capacity_bytes=500 * MB)
    cache[[7, 8]] = saved_state([7, 8], logit_rows=4, model_state_bytes=MB)
    cache[[7, 8, 9, 10]] = saved_state([7, 8, 9, 10], logit_rows=4, model_state_bytes=MB)

    assert cache[[7, 8, 9, 11]].n_tokens == 4
    assert [7, 5] in cache
    assert [1, 2] not in cache
