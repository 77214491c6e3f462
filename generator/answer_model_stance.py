"""The written answer's stance on a yes/no question as the answer model itself reads it: yes, no or maybe.

The verifier reads an answer's stance too (`verifier.consensus.answer_stance`), but it was trained on claims and
abstracts, and it is often Unclear even on an answer that restates the claim; the disagreement check would then say
nothing where a reader sees "Yes, ..." above a bottom line of No. So the product also asks the model that wrote the
answer, in a short call of its own (`llm_stance`, the same call `evaluate answers` measures). Most yes/no answers open
with the word itself ("Yes, ...", "No. ..."): that opening is the stance, and the call is made only when there is none,
since reading the answer again costs the server a few seconds on two cores.
"""

from __future__ import annotations

import re

from generator.base import LLM
from generator.prompts import STANCE_SYSTEM, STANCE_USER

STANCES = ("yes", "no", "maybe")

# "Yes", "No" or "Yes and no" as the answer's first word, ending there (a comma, a full stop, a colon, a dash or the
# end): "Nonetheless" or "No significant difference was found" is no opening stance.
_QUOTES = "*_\"'\u201c\u201d"  # Markdown emphasis and quotation marks around the word
_OPENING = re.compile(rf"\s*[{_QUOTES}]*(yes|no)\b[{_QUOTES}]*\s*(?:[,.;:!\u2014\u2013-]|$)", re.IGNORECASE)
_BOTH = re.compile(rf"\s*[{_QUOTES}]*yes\s+and\s+no\b", re.IGNORECASE)


def parse_stance(reply: str) -> str:
    """The model's one-word reply as a stance; anything else reads as maybe."""
    first = re.match(r"\W*([a-z]+)", reply.lower())
    return first.group(1) if first and first.group(1) in STANCES else "maybe"


def llm_stance(llm: LLM, question: str, answer_text: str) -> str:
    """The answer's stance as the LLM reads it in a separate short call: yes, no or maybe."""
    return parse_stance(
        llm.complete_chat(
            [
                {"role": "system", "content": STANCE_SYSTEM},
                {"role": "user", "content": STANCE_USER.format(question=question, answer=answer_text)},
            ],
            max_tokens=3,
        )
    )


def opening_stance(answer_text: str) -> str | None:
    """The stance the answer opens with, "yes" or "no", when that word stands alone; None otherwise ("Yes and
    no" included)."""
    if _BOTH.match(answer_text):
        return None
    opening = _OPENING.match(answer_text)
    return opening.group(1).lower() if opening else None


def answer_model_stance(llm: LLM, question: str, answer_text: str) -> str | None:
    """The written answer's stance: its opening word when it has one, else the model's short call; None for an
    empty answer."""
    if not answer_text.strip():
        return None
    return opening_stance(answer_text) or llm_stance(llm, question, answer_text)
