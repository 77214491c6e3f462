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
    runs = packed_runs([len(sentence.split()) for sentence in sentences], max_words=max_words)
    return windows + [" ".join(" ".join(sentences[index].split()) for index in run) for run in runs]


def packed_runs(words: Sequence[int], *, max_words: int) -> list[range]:
    """Consecutive items (sentences, by their word counts) packed while they fit `max_words`; an item longer than
    that stands alone, whole. The runs cover every item, in order."""
    runs: list[range] = []
    start, used = 0, 0
    for index, length in enumerate(words):
        if index > start and used + length > max_words:
            runs.append(range(start, index))
            start, used = index, 0
        used += length
    if start < len(words):
        runs.append(range(start, len(words)))
    return runs
