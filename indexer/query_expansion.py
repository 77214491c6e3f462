"""Pseudo-relevance feedback for the lexical leg (RM3's idea): the words that stand out in the first search's top
abstracts are added to the query with a lower weight, and the lexical leg searches again.

A word's score is, summed over the top abstracts that hold it, one over that abstract's number of distinct words,
times the word's inverse document frequency among the first search's candidates: no engine statistics are needed,
so every lexical backend does the same. On BioASQ dev it lifts the lexical leg's MAP@10 and the fusion's
(`benchmarks/query_expansion.py`; figures in benchmarks/RESULTS.md).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from indexer.stopwords import query_terms


def expansion_terms(query: str, texts: Sequence[str], *, feedback: int, terms: int, weight: float) -> dict[str, float]:
    """Up to `terms` words from the first `feedback` of `texts` (the candidates, best first), each with `weight`.

    Words of the query itself, numbers and words of one or two letters are never added."""
    if not texts or terms <= 0:
        return {}
    original = set(query_terms(query))
    words = [Counter(query_terms(text)) for text in texts]
    document_frequency: Counter[str] = Counter()
    for counts in words:
        document_frequency.update(counts.keys())
    scores: dict[str, float] = {}
    for counts in words[:feedback]:
        length = sum(counts.values()) or 1
        for word, count in counts.items():
            if word in original or word.isdigit() or len(word) <= 2:
                continue
            gain = count / length * math.log(len(words) / (1 + document_frequency[word]))
            scores[word] = scores.get(word, 0.0) + gain
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:terms]
    return {word: weight for word, score in best if score > 0}


def candidate_texts(pmids: Sequence[str], abstracts: Mapping[str, tuple[str, str]]) -> list[str]:
    """Title and abstract of each candidate the lookup knows, in the candidates' order."""
    return [f"{abstracts[pmid][0]} {abstracts[pmid][1]}" for pmid in pmids if pmid in abstracts]
