"""Tests for the prompt-reading probe, against the real llama.cpp server with the packaged model."""

from __future__ import annotations

import pytest

from generator.base import LLMSettings
from generator.errors import LLMUnavailableError
from generator.reading_rate import ReadingRate, measure_reading_rate
from tests.support import TEST_LLM_MODEL


@pytest.fixture(scope="module")
def two_probes(llm_base_url: str) -> tuple[ReadingRate, ReadingRate]:
    """Two probes in a row against the session's server: each reads about 200 tokens, so both tests share them."""
    endpoint = LLMSettings(base_url=llm_base_url, model=TEST_LLM_MODEL)
    return measure_reading_rate(endpoint), measure_reading_rate(endpoint)


@pytest.mark.model
def test_the_probe_reads_a_few_hundred_tokens_and_reports_a_rate(two_probes: tuple[ReadingRate, ReadingRate]) -> None:
    rate = two_probes[0]

    assert 150 <= rate.prompt_tokens <= 300
    assert rate.seconds > 0
    # Rounded to a tenth: under 10 tokens/s (a server shared with a busy worker) a tenth is more than 1%.
    assert rate.tokens_per_s == pytest.approx(rate.prompt_tokens / rate.seconds, rel=0.01, abs=0.05)
    assert set(rate.as_dict()) == {"prompt_tokens", "seconds", "tokens_per_s"}


@pytest.mark.model
def test_a_repeated_probe_is_read_again_rather_than_served_from_the_prompt_cache(
    two_probes: tuple[ReadingRate, ReadingRate],
) -> None:
    """Each probe starts with its own nonce: were it served from a cache, the second would take a few ms, where
    reading 150 tokens takes over a second on any CPU we run (90 tokens/s at best). Not compared with the first probe's
    time, which includes waiting for requests from the tests on the other worker when they share the server."""
    first, second = two_probes

    assert abs(second.prompt_tokens - first.prompt_tokens) <= 10  # the nonce tokenizes a little differently each time
    assert second.seconds > 1.0


def test_a_server_that_is_down_is_reported_as_unavailable() -> None:
    endpoint = LLMSettings(base_url="http://127.0.0.1:9/v1", model=TEST_LLM_MODEL, max_retries=0, timeout_seconds=5)

    with pytest.raises(LLMUnavailableError, match="unreachable"):
        measure_reading_rate(endpoint)
