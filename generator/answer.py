"""Building the answer prompt from retrieved abstracts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.prompts import (
    ABSTRACT_BLOCK,
    ANSWER_SYSTEM,
    ANSWER_USER,
    EXAMPLE_ABSTRACTS,
    EXAMPLE_ANSWER,
    EXAMPLE_QUESTION,
)


@dataclass(frozen=True)
class ContextAbstract:
    pmid: str
    title: str
    abstract: str


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return f"{cut} ..."


def answer_messages(
    question: str, abstracts: Sequence[ContextAbstract], *, abstract_chars: int
) -> list[dict[str, str]]:
    example = [ContextAbstract(pmid, title, abstract) for pmid, title, abstract in EXAMPLE_ABSTRACTS]
    return [
        {"role": "system", "content": ANSWER_SYSTEM},
        {"role": "user", "content": _user_turn(EXAMPLE_QUESTION, example, abstract_chars=abstract_chars)},
        {"role": "assistant", "content": EXAMPLE_ANSWER},
        {"role": "user", "content": _user_turn(question, abstracts, abstract_chars=abstract_chars)},
    ]


def _user_turn(question: str, abstracts: Sequence[ContextAbstract], *, abstract_chars: int) -> str:
    blocks = "\n\n".join(
        ABSTRACT_BLOCK.format(pmid=item.pmid, title=item.title, abstract=_clip(item.abstract, abstract_chars))
        for item in abstracts
    )
    return ANSWER_USER.format(abstracts=blocks, question=question)
