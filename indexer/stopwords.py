"""Query-side stopword removal: VerifAI's thesis found BM25 over PubMed does better without them."""

from __future__ import annotations

import functools
import re

# Question words carry no topical signal in a biomedical question ("what is the role of X in Y").
_QUESTION_WORDS = frozenset({"role", "does", "do", "which", "what", "how", "why", "whether", "used", "use"})
# Letters and digits of any script ("Sjögren" stays one word, as tantivy indexes it); nothing else survives.
_TOKEN = re.compile(r"[^\W_]+")


@functools.cache
def stopwords() -> frozenset[str]:
    """scikit-learn's English stopwords and the question words. Loaded on first use, not at import: importing
    scikit-learn (and SciPy under it) took 1.2-1.4 s, and every Django process imports this module through the search
    code, including the many that never search (manage.py check, migrate, the web process until its first question)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | _QUESTION_WORDS


def query_terms(text: str) -> list[str]:
    """Lower-cased word tokens of `text`, minus stopwords, in order and without repeats.

    Only letters and digits survive so that no character of the user's text can reach a query parser as syntax.
    """
    seen: dict[str, None] = {}
    words = stopwords()
    for token in _TOKEN.findall(text.lower()):
        if token not in words:
            seen.setdefault(token, None)
    return list(seen)
