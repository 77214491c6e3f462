"""Rewrites of one abstract sentence the way an answer model restates it: shortened (framing, asides and trailing
clauses dropped) and fused with its neighbours. Each keeps the sentence's finding, so the abstract still supports it.

Answers compress their sources: "Our results suggest that X reduced Y (OR 0.6, 95% CI 0.4-0.8), whereas Z did not"
comes back as "X reduced Y". The edits here drop only what an answer drops: a framing lead ("We found that"), a
bracketed aside (statistics, abbreviations, citations) and a contrastive or elaborating tail clause.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Leads that frame a finding rather than state it; an answer keeps what follows them.
_FRAMING_LEAD = re.compile(
    r"^(?:conclusions?|results?|findings|interpretation|significance)(?: and (?:relevance|significance|implications))?"
    r"\s*:\s*"
    r"|^(?:in (?:conclusion|summary|this study|our study|this cohort|this trial)|overall|together|taken together"
    r"|collectively|in summary|finally|however|in contrast|importantly|notably|furthermore|moreover|in addition"
    r"|additionally|thus|therefore|consequently)\s*,\s*"
    r"|^(?:(?:our|these|the(?:se)?) (?:results|findings|data|observations|analyses)"
    r"|we (?:found|show|showed|demonstrate|demonstrated|observed|report|conclude|concluded)"
    r"|this (?:study|analysis|trial) (?:shows|showed|demonstrates|demonstrated|suggests|indicates))"
    r"(?: (?:suggest|suggests|indicate|indicates|show|shows|demonstrate|demonstrates|reveal|reveals|confirm|confirms"
    r"|support|supports))?\s+that\s+",
    re.I,
)
# An aside in brackets after a space, holding statistics, a citation or a figure; a bracket glued to a word is part of a
# name ("IR(ΔTh) mice") and stays.
_BRACKETED = re.compile(
    r"\s+[\(\[](?=[^()\[\]]*(?:\d|%|=|\bCI\b|\bp\b|\bn\b|fig|table|et al|supp))[^()\[\]]*[\)\]]", re.I
)
# A tail that adds a second statement: an answer citing the sentence for its main finding drops it. ("and" and
# "including" are not cut at: they end lists more often than they start a second statement.)
_TAIL = re.compile(r"(?:,|;)\s+(?:whereas|while|but|although|though|which|suggesting|indicating)\s", re.I)
_MIN_WORDS = 6


def words(text: str) -> list[str]:
    return text.split()


def shorten(sentence: str) -> str | None:
    """The sentence with its framing lead, bracketed asides and a trailing clause dropped; None when nothing could
    be dropped or too little would be left to state a finding."""
    text = sentence.strip()
    for _ in range(2):  # "In summary, our data demonstrate that X": both leads go
        text = _FRAMING_LEAD.sub("", text, count=1)
    text = _BRACKETED.sub("", text)
    tail = _TAIL.search(text)
    if tail and _complete(text[: tail.start()]) and not re.search(r"\bnot only\b", text, re.I):
        text = text[: tail.start()]
    text = re.sub(r"\s+([,.;:])", r"\1", re.sub(r"\s{2,}", " ", text)).strip().rstrip(",;:. ")
    if len(words(text)) < _MIN_WORDS:
        return None
    text = _capitalised(text) + "."
    return None if _same(text, sentence) else text


def _complete(head: str) -> bool:
    """Long enough to state a finding, and not cut inside a that-clause ("shows that decreased smell function")."""
    after_that = re.split(r"\bthat\b", head)[-1]
    return len(words(head)) >= _MIN_WORDS and (" that " not in f" {head} " or len(words(after_that)) >= 5)


def fuse(sentences: Sequence[str]) -> str:
    """Two or three sentences as one, the way an answer strings findings together: "A, and b." or "A; b; and c."."""
    if not 2 <= len(sentences) <= 3:
        raise ValueError("fuse takes two or three sentences")
    parts = [_clause(sentence) for sentence in sentences]
    parts[1:] = [_lowered(part) for part in parts[1:]]
    if len(parts) == 2:
        return f"{parts[0]}, and {parts[1]}."
    return f"{parts[0]}; {parts[1]}; and {parts[2]}."


def _clause(sentence: str) -> str:
    return sentence.strip().rstrip(".;: ")


def _lowered(text: str) -> str:
    first = text.split(" ", 1)[0]
    # "The" and "Pharmacotherapies" lower; "COVID-19", "IL-6" and "HbA1c" keep their case (a name such as "Smith"
    # lowers too: rare at the start of a finding, and harmless to the pair).
    if first[:1].isupper() and first[1:].islower() and first.isalpha():
        return first.lower() + text[len(first) :]
    return text


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _same(first: str, second: str) -> bool:
    return re.sub(r"\W+", "", first.lower()) == re.sub(r"\W+", "", second.lower())
