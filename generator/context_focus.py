"""What the model is shown: the retrieved abstracts, each cut to its sentences most relevant to the question, then
fitted into the model's context window."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace

from generator.answer import ContextAbstract
from generator.base import TokenCounter
from generator.generation_settings import GenerationSettings
from generator.packing import PackedContext, pack_context, prompt_budget
from indexer.base import Embedder
from indexer.sentence_selection import select_evidence
from indexer.sentences import sentence_texts, split_sentences


def focused_abstract(question: str, abstract: str, *, embedder: Embedder, sentences_kept: int) -> str:
    """The abstract's sentences most relevant to the question, in their original order.

    Ten whole abstracts are about 4k prompt tokens, over 40 s of prompt reading for a 1.5B model on two cores;
    the few sentences that bear on the question carry what the answer needs in about half the tokens.
    """
    spans = split_sentences(abstract)
    if sentences_kept <= 0 or len(spans) <= sentences_kept:
        return abstract
    kept = sorted(select_evidence(question, [span.text for span in spans], embedder=embedder, top_n=sentences_kept))
    parts = [spans[kept[0]].text]
    for previous, index in itertools.pairwise(kept):
        parts.append(("" if index == previous + 1 else "[...] ") + spans[index].text)
    return " ".join(parts)


def focused_context(
    question: str, abstracts: Sequence[ContextAbstract], *, embedder: Embedder, options: GenerationSettings
) -> list[ContextAbstract]:
    """The best-ranked `options.abstracts_in_prompt` abstracts (in rank order), each focused on the question.

    Every prompt token is read before the first answer token: on a machine that reads 17 tokens/s, each abstract
    of two sentences (about 110 tokens with its title) costs about 6 s of waiting.
    """
    kept = abstracts[: options.abstracts_in_prompt] if options.abstracts_in_prompt else abstracts
    return [
        replace(
            item,
            abstract=focused_abstract(
                question, item.abstract, embedder=embedder, sentences_kept=sentences_kept(rank, options)
            ),
        )
        for rank, item in enumerate(kept)
    ]


def sentences_kept(rank: int, options: GenerationSettings) -> int:
    """How many sentences the abstract at `rank` (0 = best) keeps; 0 = all."""
    every = options.sentences_per_abstract
    lead = options.lead_abstract_sentences
    if rank > 0 or not lead or not every:
        return every
    return max(lead, every)


def packed_context(
    question: str,
    abstracts: Sequence[ContextAbstract],
    options: GenerationSettings,
    *,
    counter: TokenCounter,
    bottom_line: str | None = None,
) -> PackedContext:
    """The abstracts fitted into the model's window, keeping room for an answer of `options.max_tokens`;
    `bottom_line` a yes/no question's bottom line for the answer to open with (`generator.answer.answer_prompt`)."""
    return pack_context(
        question,
        abstracts,
        style=options.prompt_style,
        abstract_chars=options.abstract_chars,
        counter=counter,
        budget_tokens=prompt_budget(context_window=options.context_tokens, max_answer_tokens=options.max_tokens),
        split_sentences=sentence_texts,
        bottom_line=bottom_line,
    )
