"""One answer, streamed: send the prompt, hand text to the caller as it grows, stop when asked, then check citations.

The caller (a Celery task, the evaluation command) decides what to do with partial text and when to stop; this
module owns the timing figures and the final form of the answer.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from rapidfuzz import fuzz

from generator.answer import AnswerPrompt
from generator.base import LLM, SamplingOptions
from generator.citations import NormalizedAnswer, normalize_citations, strip_citations
from generator.prompts import CANNOT_ANSWER, COMPLETE_EXAMPLE_ANSWER, EXAMPLE_ANSWER
from indexer.sentences import sentence_texts

# How the models say the abstracts do not answer the question (the prompt asks for exactly that sentence).
_REFUSAL = re.compile(
    r"\b(?:(?:does|do|did)\s+not|doesn't|don't|cannot|can't|can\s+not|unable\s+to)\s+"
    r"(?:\w+\s+){0,3}?(?:answer|address|provide|contain|mention|discuss|find|determine|say)\b"
    r"|\bno\s+(?:relevant\s+)?(?:information|abstracts?|evidence|data)\b"
    r"|\bnot\s+(?:enough|sufficient)\s+(?:information|evidence)\b",
    re.IGNORECASE,
)


# Small models sometimes repeat the worked example's answer after their own (the 0.5B model did in most answers
# on PubMedQA), and the 1.5B model sometimes writes one of its own sentences twice in a longer answer. Those
# sentences add nothing from the literature: they are removed from the answer. The bar is near-verbatim (citations
# ignored): a sentence that only follows an example sentence's pattern about another study ("A randomised trial
# gave 120 adults with asthma ...", 84 against the example's design sentence) is the model's own and stays.
_EXAMPLE_SENTENCES = tuple(
    strip_citations(part) for example in (EXAMPLE_ANSWER, COMPLETE_EXAMPLE_ANSWER) for part in sentence_texts(example)
)
_COPY_SIMILARITY = 90.0


def without_copies(text: str) -> str:
    """The text without sentences that repeat the worked example's answer or an earlier sentence of the text."""
    kept: list[str] = []
    seen: list[str] = list(_EXAMPLE_SENTENCES)
    for part in sentence_texts(text):
        bare = strip_citations(part)
        if any(fuzz.ratio(bare, earlier) >= _COPY_SIMILARITY for earlier in seen):
            continue
        kept.append(part)
        seen.append(bare)
    return " ".join(kept).strip()


@dataclass(frozen=True)
class GeneratedAnswer:
    normalized: NormalizedAnswer  # canonical citations, slips repaired, unknown ids marked; keeps the raw text
    cannot_answer: bool
    cancelled: bool
    ttft_ms: float | None  # None when no token arrived
    chunks: int  # streamed deltas; OpenAI-compatible servers send one token per delta
    tokens_per_s: float
    seconds: float

    @property
    def raw_text(self) -> str:
        """Exactly what the model wrote (possibly cut short by a stop)."""
        return self.normalized.raw_text

    @property
    def text(self) -> str:
        return CANNOT_ANSWER if self.cannot_answer else self.normalized.text


def stream_text(llm: LLM, prompt: AnswerPrompt, options: SamplingOptions) -> Iterator[str]:
    if prompt.style == "verifai":
        return llm.stream_completion(prompt.text, options)
    return llm.stream_chat(list(prompt.messages), options)


def is_refusal(answer: NormalizedAnswer) -> bool:
    """The model said the abstracts do not answer the question, and cited nothing for an answer."""
    text = answer.text.strip()
    return not text or (not answer.citations and bool(_REFUSAL.search(text)))


def generate_answer(
    llm: LLM,
    prompt: AnswerPrompt,
    options: SamplingOptions,
    *,
    given_pmids: Sequence[str],
    on_text: Callable[[str], None] = lambda text: None,
    should_stop: Callable[[], bool] = lambda: False,
    check_every_seconds: float = 0.25,
) -> GeneratedAnswer:
    """Stream one answer. `on_text` gets the text so far and `should_stop` is asked, at most every interval."""
    started = time.perf_counter()
    first_token_at: float | None = None
    pieces: list[str] = []
    cancelled = False
    last_check = started
    stream = stream_text(llm, prompt, options)
    try:
        for delta in stream:
            first_token_at = first_token_at or time.perf_counter()
            pieces.append(delta)
            if time.perf_counter() - last_check >= check_every_seconds:
                on_text("".join(pieces))
                if should_stop():
                    cancelled = True
                    break
                last_check = time.perf_counter()
    finally:
        # Closing the generator closes the HTTP response: the server sees the client leave and stops generating.
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    finished = time.perf_counter()
    raw = "".join(pieces).strip()
    normalized = replace(normalize_citations(without_copies(raw), given_pmids), raw_text=raw)
    streaming_seconds = finished - (first_token_at or finished)
    return GeneratedAnswer(
        normalized=normalized,
        cannot_answer=not cancelled and is_refusal(normalized),
        cancelled=cancelled,
        ttft_ms=round((first_token_at - started) * 1000, 1) if first_token_at else None,
        chunks=len(pieces),
        tokens_per_s=round((len(pieces) - 1) / streaming_seconds, 1) if streaming_seconds > 0 else 0.0,
        seconds=round(finished - started, 3),
    )
