"""The passage every claim classifier reads beside the claim."""

from __future__ import annotations

from collections.abc import Sequence


def verifier_passage(title: str, sentences: Sequence[str], chosen: Sequence[int] | None = None) -> str:
    """The second segment the verifier reads: the title, then the chosen sentences in the order given (best first).

    The tokenizer cuts a pair that is too long from the passage's end. In document order that cut fell on whichever
    chosen sentence came last, often the one the claim rests on (at training's 128 tokens every rationale sentence was
    cut from about a tenth of the pairs); best first, only the weakest pick is cut."""
    picked = sentences if chosen is None else [sentences[index] for index in dict.fromkeys(chosen)]
    return " ".join(part for part in (title.strip(), *picked) if part).strip()
