"""The verifier's adapters by setting value, keyed by `kind`: claim classifiers and evidence finders.

The cross-encoder and the trained tagger import torch inside their own modules, so a process that never verifies
(the web process) or verifies with the LLM judge never loads it. Building the cross-encoder loads its checkpoint;
building the LLM judge only opens a client.
"""

from __future__ import annotations

from operator import attrgetter

from indexer.adapter_registry import AdapterRegistry
from verifier.base import ClassifierOptions, EvidenceFinder, EvidenceFinderOptions, PairClassifier

CLAIM_CLASSIFIERS: AdapterRegistry[ClassifierOptions, PairClassifier] = AdapterRegistry(
    "claim classifier",
    {
        "cross-encoder": "verifier.cross_encoder:CrossEncoderVerifier.from_options",
        "llm-judge": "verifier.llm_judge:LlmJudge.from_options",
        "fake": "verifier.fake_classifier:FakeClaimClassifier.from_options",
    },
    key=attrgetter("kind"),
)
EVIDENCE_FINDERS: AdapterRegistry[EvidenceFinderOptions, EvidenceFinder] = AdapterRegistry(
    "evidence finder",
    {
        "auto": "verifier.registry:automatic_evidence_finder",
        "late-fusion": "verifier.tagged_evidence:TaggedEvidence.from_options",
        "ranked": "verifier.ranked_evidence:RankedEvidence.from_options",
        "fake": "verifier.fake_evidence:FakeEvidenceFinder.from_options",
    },
    key=attrgetter("kind"),
)

build_claim_classifier = CLAIM_CLASSIFIERS.build
build_evidence_finder = EVIDENCE_FINDERS.build


def automatic_evidence_finder(options: EvidenceFinderOptions) -> EvidenceFinder:
    """The trained tagger saved in `options.folder`, or BM25 + cosine ranking where none was trained."""
    trained = options.folder is not None and (options.folder / "config.json").exists()
    return EVIDENCE_FINDERS.factory("late-fusion" if trained else "ranked")(options)
