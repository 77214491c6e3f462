"""A follow-up question rewritten as a standalone one, from the thread it follows.

Retrieval reads only the question it is given: "Is it safe in children?" finds nothing about the drug the thread is
about. The model reads the thread (the earlier questions and their answers' text, without citations, the latest
first to keep when the budget is short) and writes one question that says what the follow-up leaves to the thread.

The rewrite is a proposal the person reads and edits before anything is asked, so no failure here may lose what they
typed: a model that is down, too slow or writes something unusable gives back their follow-up with the question it
follows, and a note that says why (`FollowUpRewrite.note`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from generator.answer import clip_text
from generator.base import ChatModel, Message, TokenCounter
from generator.citations import CITATION, strip_citations
from generator.errors import GenerationError
from generator.prompts import (
    FOLLOW_UP_EXAMPLE_QUESTION,
    FOLLOW_UP_EXAMPLE_REWRITE,
    FOLLOW_UP_EXAMPLE_THREAD,
    FOLLOW_UP_SYSTEM,
    FOLLOW_UP_TURN,
    FOLLOW_UP_USER,
)

# What the thread may take of the prompt: the rewrite needs the subject of the last turns, not whole answers, and
# every prompt token is read before the reply starts (about 6 s per 100 tokens on a slow two-core machine).
THREAD_BUDGET_TOKENS = 600
ANSWER_CHARS = 600  # each earlier answer is clipped to this before counting
REWRITE_MAX_TOKENS = 96  # a question of up to about 400 characters; a longer reply is not a question
MIN_REWRITE_CHARS = 8
NOTE_PREFIX = "the rewrite could not be made: "

# A label the model puts before its question: "Standalone question:", "**Rewritten question:**", "Question -".
_LABEL = re.compile(
    r"^\W*(?:(?:the|a|an)\s+)?(?:(?:rewritten|standalone|reformulated|rephrased|new|follow-up)\s+)*question\W*?"
    r"\s*[:\-\u2013\u2014]\s*",
    re.IGNORECASE,
)
_QUOTES = "\"'`*\u201c\u201d\u2018\u2019 "
_NOT_WORDS = re.compile(r"\W+")


@dataclass(frozen=True)
class ThreadTurn:
    """One earlier question of the thread and its answer's text (citation markup is removed here)."""

    question: str
    answer: str


@dataclass(frozen=True)
class FollowUpRewrite:
    question: str  # what is offered for editing: the model's standalone question, or the fallback
    rewritten: bool  # the model's rewrite passed every check
    note: str  # empty when rewritten; otherwise "the rewrite could not be made: <why>"


class RewriteRejectedError(ValueError):
    """The model's reply is not a usable standalone question; the message says why, for the note."""


def fallback_question(follow_up: str, *, previous: str, max_chars: int) -> str:
    """The follow-up with the question it follows, so that a search still knows the subject; the follow-up alone
    when that would be too long. Never shortened: the person's own words are edited by them, not cut here."""
    follow_up = follow_up.strip()
    combined = f"{follow_up} (following: {previous.strip()})"
    return combined if follow_up and previous.strip() and len(combined) <= max_chars else follow_up


def _turn_text(turn: ThreadTurn, answer_chars: int) -> str:
    answer = clip_text(strip_citations(turn.answer), answer_chars) if answer_chars > 0 else ""
    return FOLLOW_UP_TURN.format(question=turn.question.strip(), answer=answer or "(none)")


def thread_excerpt(turns: Sequence[ThreadTurn], *, counter: TokenCounter, budget_tokens: int) -> str:
    """The latest turns that fit `budget_tokens`, oldest first. The latest turn is always kept: when it does not fit
    whole, its answer is cut shorter (down to none at all) rather than losing the question the follow-up follows."""
    kept: list[str] = []
    used = 0
    for turn in reversed(turns):
        text = _turn_text(turn, ANSWER_CHARS)
        tokens = counter.count(text)
        if used + tokens > budget_tokens:
            if not kept:
                kept.append(_latest_turn_fitted(turn, counter=counter, budget_tokens=budget_tokens))
            break
        kept.append(text)
        used += tokens + 1  # the blank line between turns
    return "\n\n".join(reversed(kept))


def _latest_turn_fitted(turn: ThreadTurn, *, counter: TokenCounter, budget_tokens: int) -> str:
    answer_chars = ANSWER_CHARS // 2
    while answer_chars >= 50:
        text = _turn_text(turn, answer_chars)
        if counter.count(text) <= budget_tokens:
            return text
        answer_chars //= 2
    return _turn_text(turn, 0)


def rewrite_messages(thread: str, follow_up: str) -> list[Message]:
    """System, one worked example, then this thread and follow-up."""
    return [
        {"role": "system", "content": FOLLOW_UP_SYSTEM},
        {
            "role": "user",
            "content": FOLLOW_UP_USER.format(thread=FOLLOW_UP_EXAMPLE_THREAD, follow_up=FOLLOW_UP_EXAMPLE_QUESTION),
        },
        {"role": "assistant", "content": FOLLOW_UP_EXAMPLE_REWRITE},
        {"role": "user", "content": FOLLOW_UP_USER.format(thread=thread, follow_up=follow_up)},
    ]


def _comparable(text: str) -> str:
    return _NOT_WORDS.sub(" ", text.casefold()).strip()


def validated_rewrite(reply: str, *, earlier_questions: Sequence[str], follow_up: str, max_chars: int) -> str:
    """The standalone question in the model's reply: its first line, without a label ("Rewritten question:") or
    quotes. Lines after it are an explanation the model added, and are dropped. Raises RewriteRejectedError when
    nothing usable is left."""
    lines = [line.strip() for line in reply.splitlines() if line.strip() and not line.strip().startswith("```")]
    if lines and lines[0].endswith(":") and len(lines) > 1:  # "Here is the standalone question:" on a line of its own
        lines = lines[1:]
    if not lines:
        raise RewriteRejectedError("the language model's reply was empty")
    question = lines[0]
    while (unlabelled := _LABEL.sub("", question, count=1)) != question:
        question = unlabelled
    question = question.strip(_QUOTES)
    if len(question) < MIN_REWRITE_CHARS:
        raise RewriteRejectedError(f"the language model's reply was too short to be a question ({reply.strip()!r})")
    if len(question) > max_chars:
        raise RewriteRejectedError(f"the language model's reply was longer than {max_chars:,} characters")
    if CITATION.search(question):
        raise RewriteRejectedError("the language model answered with PubMed citations instead of a question")
    repeated = {_comparable(text) for text in earlier_questions} - {_comparable(follow_up)}
    if _comparable(question) in repeated:
        raise RewriteRejectedError("the language model repeated the earlier question and left out the follow-up")
    return question


def standalone_question(
    llm: ChatModel,
    *,
    turns: Sequence[ThreadTurn],
    follow_up: str,
    counter: TokenCounter,
    max_chars: int,
    budget_tokens: int = THREAD_BUDGET_TOKENS,
) -> FollowUpRewrite:
    """The standalone question for `follow_up` after `turns` (oldest first), or the fallback with a note. Never
    raises for the model's sake: a server that is down or timed out, and a reply that fails `validated_rewrite`,
    both give the fallback. `max_chars` is the longest question the site accepts."""
    follow_up = follow_up.strip()
    previous = turns[-1].question if turns else ""

    def fallback(why: str) -> FollowUpRewrite:
        question = fallback_question(follow_up, previous=previous, max_chars=max_chars)
        # The page ends the note with its own full stop ("... unreachable: Connection error.").
        return FollowUpRewrite(question=question, rewritten=False, note=NOTE_PREFIX + why.rstrip(". "))

    if not follow_up:
        return fallback("the follow-up is empty")
    if len(follow_up) > max_chars:
        return fallback(f"the follow-up is longer than {max_chars:,} characters; please shorten it")
    if not turns:
        return fallback("there is no earlier question to rewrite it from")
    try:
        thread = thread_excerpt(turns, counter=counter, budget_tokens=budget_tokens)
        reply = llm.complete_chat(rewrite_messages(thread, follow_up), max_tokens=REWRITE_MAX_TOKENS, temperature=0.0)
        question = validated_rewrite(
            reply, earlier_questions=[turn.question for turn in turns], follow_up=follow_up, max_chars=max_chars
        )
    except GenerationError as exc:  # down, timed out, refused: the message names which
        return fallback(str(exc)[:300])
    except RewriteRejectedError as exc:
        return fallback(str(exc))
    return FollowUpRewrite(question=question, rewritten=True, note="")
