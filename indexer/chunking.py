"""Title + abstract cut at sentence boundaries into chunks that fit the embedding model, measured by its tokenizer.

Most abstracts fit in one chunk; only longer ones are split, so the sentence splitter (a regex, because pysbd costs
milliseconds per abstract and ingestion sees millions) runs only where it matters. Every chunk repeats the title:
a sentence deep in a methods section means little to the dense model without it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from indexer.base import Chunk, Facets
from indexer.records import ArticleRecord

TokenLengths = Callable[[Sequence[str]], list[int]]

# A sentence ends at . ! or ? followed by space and an upper-case letter, digit or opening bracket; abbreviations
# such as "et al. 2019" or "vs. placebo" rarely meet that, and a wrong cut only moves a chunk boundary.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
_SPECIAL_TOKENS = 2  # [CLS] and [SEP], which the tokenizer counts when it encodes a text


def split_for_chunks(text: str) -> list[str]:
    return [part for part in _SENTENCE_END.split(text) if part.strip()]


class Chunker:
    """Packs sentences greedily into chunks of at most `max_tokens` model tokens, the title first in each."""

    def __init__(self, token_lengths: TokenLengths, *, max_tokens: int) -> None:
        if max_tokens < 16:
            raise ValueError(f"max_tokens must be at least 16, got {max_tokens}")
        self.token_lengths = token_lengths
        self.max_tokens = max_tokens

    def chunks(self, records: Sequence[ArticleRecord]) -> list[Chunk]:
        """All chunks of all records, in record order; one tokenizer call for the whole batch of texts."""
        lengths = self.token_lengths([record.text for record in records])
        chunks: list[Chunk] = []
        for record, length in zip(records, lengths, strict=True):
            facets = Facets.of(record)
            if length <= self.max_tokens:
                chunks.append(Chunk(record.pmid, 0, record.text, facets))
                continue
            texts = self._split(record)
            chunks.extend(Chunk(record.pmid, index, text, facets) for index, text in enumerate(texts))
        return chunks

    def _split(self, record: ArticleRecord) -> list[str]:
        title = record.title
        sentences = split_for_chunks(record.abstract)
        title_tokens = self.token_lengths([title])[0] - _SPECIAL_TOKENS if title else 0
        # A title that would leave less than half the window for sentences is left out of the chunks (but stays in the
        # lexical index): the abstract's own words matter more.
        if title_tokens > self.max_tokens // 2:
            title, title_tokens = "", 0
        separator_tokens = 1 if title else 0  # the ". " _with_title adds
        budget = self.max_tokens - _SPECIAL_TOKENS - title_tokens - separator_tokens
        sentence_tokens = [length - _SPECIAL_TOKENS for length in self.token_lengths(sentences)]
        groups: list[list[str]] = []
        used = budget + 1  # forces a new group for the first sentence
        for sentence, tokens in zip(sentences, sentence_tokens, strict=True):
            for piece, piece_tokens in self._fit(sentence, tokens, budget):
                if used + piece_tokens + 1 > budget:
                    groups.append([])
                    used = 0
                groups[-1].append(piece)
                used += piece_tokens + 1  # a space between sentences may become a token
        return [_with_title(title, " ".join(group)) for group in groups]

    def _fit(self, sentence: str, tokens: int, budget: int) -> list[tuple[str, int]]:
        """A sentence longer than the budget (a run-on list, a table flattened into text) is halved by words until
        every piece fits; word-piece counts are not proportional to words, so each half is measured again."""
        words = sentence.split()
        if tokens <= budget or len(words) == 1:
            return [(sentence, tokens)]
        half = len(words) // 2
        left, right = " ".join(words[:half]), " ".join(words[half:])
        left_tokens, right_tokens = (length - _SPECIAL_TOKENS for length in self.token_lengths([left, right]))
        return self._fit(left, left_tokens, budget) + self._fit(right, right_tokens, budget)


def _with_title(title: str, body: str) -> str:
    if not title:
        return body
    separator = " " if title.endswith((".", "?", "!")) else ". "
    return f"{title}{separator}{body}"
