"""The passages a reranker reads from an abstract: its title, then runs of whole sentences up to a word budget.

The reranker is trained on BioASQ snippets (a title or one to three sentences, 24 words at the median), so it reads
abstracts in pieces of that kind and an abstract scores as its best piece (max pooling). Training cuts its negative
passages with the same function, so that a passage's length tells the model nothing about its relevance.
"""

from __future__ import annotations

from collections.abc import Sequence

from indexer.sentences import sentence_texts

PASSAGE_WORDS = 60  # about two sentences: the upper end of what the training snippets hold


def passage_windows(title: str, abstract: str, *, max_words: int = PASSAGE_WORDS) -> list[str]:
    """The title (when there is one), then consecutive sentences packed while they fit in `max_words`; a longer
    sentence stands alone, whole (the model's own token window cuts it)."""
    return packed_windows(title, sentence_texts(abstract), max_words=max_words)


def packed_windows(title: str, sentences: Sequence[str], *, max_words: int = PASSAGE_WORDS) -> list[str]:
    """`passage_windows` over sentences already split (splitting is the slow part; callers may keep its result)."""
    windows = [" ".join(title.split())] if title.strip() else []
    current: list[str] = []
    words = 0
    for sentence in sentences:
        length = len(sentence.split())
        if current and words + length > max_words:
            windows.append(" ".join(current))
            current, words = [], 0
        current.append(" ".join(sentence.split()))
        words += length
    if current:
        windows.append(" ".join(current))
    return windows
