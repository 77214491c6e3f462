"""Fitting the retrieved abstracts into the serving model's context window, counted with its own tokenizer.

The abstracts come best first. When the prompt and the room kept for the answer do not fit the window, the
lowest-ranked abstract gives way first: its last sentences are trimmed, and if not even its first sentence fits it
is dropped, then the next lowest, and so on. The result says exactly which abstracts the model saw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from generator.answer import AnswerPrompt, ContextAbstract, PromptStyle, answer_prompt, clip_text
from generator.base import TokenCounter

# Tokenizer round-trips differ from a sum over pieces by a few tokens (merges at the seams); keep a margin.
SAFETY_MARGIN_TOKENS = 32
# Marks an abstract cut short, so the model does not take its last sentence for its conclusion.
TRIM_MARK = " [...]"


@dataclass(frozen=True)
class PackedContext:
    prompt: AnswerPrompt
    abstracts: tuple[ContextAbstract, ...]  # what the model saw, best first
    trimmed: tuple[str, ...]  # PMIDs whose abstract was cut to fit
    dropped: tuple[str, ...]  # PMIDs left out for lack of room
    prompt_tokens: int
    budget_tokens: int


def prompt_budget(*, context_window: int, max_answer_tokens: int) -> int:
    """Tokens the prompt may use: the window less the room kept for the answer and a safety margin."""
    return context_window - max_answer_tokens - SAFETY_MARGIN_TOKENS


def pack_context(
    question: str,
    abstracts: Sequence[ContextAbstract],
    *,
    style: PromptStyle,
    abstract_chars: int,
    counter: TokenCounter,
    budget_tokens: int,
    split_sentences: Callable[[str], list[str]],
    bottom_line: str | None = None,
) -> PackedContext:
    kept = [replace(item, abstract=clip_text(item.abstract, abstract_chars)) for item in abstracts]
    # Each abstract's sentences, split once; trimming pops from the end of these lists, so every pass of the loop
    # below removes at least one sentence or one abstract and the loop always ends.
    sentences = {item.pmid: split_sentences(item.abstract) for item in kept}
    trimmed: list[str] = []
    dropped: list[str] = []

    def measure(items: Sequence[ContextAbstract]) -> tuple[AnswerPrompt, int]:
        prompt = answer_prompt(style, question, items, abstract_chars=abstract_chars + 8, bottom_line=bottom_line)
        return prompt, counter.count(prompt.countable_text()) + prompt.template_overhead_tokens

    prompt, tokens = measure(kept)
    while tokens > budget_tokens and kept:
        last = kept[-1]
        remaining = sentences[last.pmid]
        shed = 0
        while remaining and (shed == 0 or shed < tokens - budget_tokens):
            shed += counter.count(" " + remaining.pop())
        if remaining:
            kept[-1] = replace(last, abstract=" ".join(remaining) + TRIM_MARK)
            if last.pmid not in trimmed:
                trimmed.append(last.pmid)
        else:
            kept.pop()
            dropped.append(last.pmid)
            if last.pmid in trimmed:
                trimmed.remove(last.pmid)
        prompt, tokens = measure(kept)
    return PackedContext(
        prompt=prompt,
        abstracts=tuple(kept),
        trimmed=tuple(trimmed),
        dropped=tuple(reversed(dropped)),  # in rank order
        prompt_tokens=tokens,
        budget_tokens=budget_tokens,
    )
