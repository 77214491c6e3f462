"""How fast an LLM server reads a prompt, measured with one fixed probe request.

Machines differ fivefold in this (llama.cpp reads 17 tokens/s on some of ours and 90+ on others), and it decides
most of the wait for an answer's first token. So every benchmark that reports a generation timing prints this rate
beside it, measured the same way on the same server.

The probe is a plain completion (no chat template, so no constant prefix) that starts with a random nonce, which
keeps any prompt cache from serving part of it, and asks for a single token: its time is the prompt-reading time
plus one decoding step, which is small beside it.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import openai

from generator.base import LLMSettings
from generator.errors import LLMResponseError
from generator.llm import translated_errors

# About 210 tokens with the Qwen tokenizer: long enough that one decoding step is a few percent of the request (2% at
# 90 tokens/s, less on slower machines), short enough to cost seconds on the slowest (7 s at 30 tokens/s; the
# 520-token probe before it cost 18 s there, once per benchmark run and per evaluation).
PROBE_TEXT = " ".join(
    f"Study {number}: in {number * 40} adults with type 2 diabetes, metformin lowered HbA1c by {number / 10:.1f} "
    f"percentage points more than placebo over {number + 11} weeks, without more hypoglycaemia."
    for number in range(1, 5)
)


@dataclass(frozen=True)
class ReadingRate:
    prompt_tokens: int
    seconds: float

    @property
    def tokens_per_s(self) -> float:
        return round(self.prompt_tokens / self.seconds, 1) if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, float | int]:
        seconds = round(self.seconds, 3)
        return {"prompt_tokens": self.prompt_tokens, "seconds": seconds, "tokens_per_s": self.tokens_per_s}


def measure_reading_rate(settings: LLMSettings) -> ReadingRate:
    """Send the probe once and time it. Raises LLMUnavailableError when the server cannot be reached, and
    LLMResponseError when it refuses the probe or does not report its token count."""
    client = openai.OpenAI(
        base_url=settings.base_url,
        api_key=settings.api_key,
        timeout=settings.timeout_seconds,
        max_retries=settings.max_retries,
    )
    prompt = f"Probe {uuid.uuid4().hex}. {PROBE_TEXT}\nSummary:"
    started = time.perf_counter()
    with translated_errors(settings.base_url):
        response = client.completions.create(model=settings.model, prompt=prompt, max_tokens=1, temperature=0.0)
    seconds = time.perf_counter() - started
    if response.usage is None or not response.usage.prompt_tokens:
        raise LLMResponseError(f"the server at {settings.base_url} did not report the probe's prompt tokens")
    return ReadingRate(prompt_tokens=response.usage.prompt_tokens, seconds=seconds)
