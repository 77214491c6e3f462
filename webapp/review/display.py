"""How a verdict reads on the review pages: an icon and words, so colour is never the only signal."""

from __future__ import annotations

from typing import Final

from verifier.verdicts import CONTRADICT, NO_EVIDENCE, NO_REFERENCE, SUPPORT, UNCITED, UNCLEAR

# The same icons and words as the answer page (static/verimed.js), so a reviewer reads what the asker saw.
VERDICT_DISPLAY: Final = {
    SUPPORT: ("✔", "Supported"),
    CONTRADICT: ("✖", "Contradicted"),
    NO_EVIDENCE: ("?", "No evidence"),
    # The model's confidence was below the stored threshold: a verdict of its own, not a verifier that failed.
    UNCLEAR: ("~", "Unclear"),
    NO_REFERENCE: ("!", "Not a retrieved paper"),
    UNCITED: ("\u2013", "Uncited"),  # an en dash, as on the answer page
}
VERDICTS: Final = tuple(VERDICT_DISPLAY)


def verdict_icon(verdict: str) -> str:
    return VERDICT_DISPLAY.get(verdict, ("", verdict))[0]


def verdict_text(verdict: str) -> str:
    return VERDICT_DISPLAY.get(verdict, ("", verdict))[1]
