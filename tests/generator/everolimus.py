"""The answer fixture the generation tests share: a question about everolimus and two abstracts that answer it."""

from __future__ import annotations

from generator.answer import ContextAbstract

GIVEN = ["31000001", "31000002"]
ABSTRACTS = [
    ContextAbstract(
        GIVEN[0],
        "Everolimus in renal transplantation.",
        "Everolimus inhibits mTOR (mammalian target of rapamycin) and thereby blocks T-cell proliferation.",
    ),
    ContextAbstract(
        GIVEN[1],
        "Everolimus in breast cancer.",
        "Adding everolimus to exemestane doubled progression-free survival in advanced breast cancer.",
    ),
]
QUESTION = "What is the mode of action of everolimus?"
