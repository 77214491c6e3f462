"""Offline inputs built the product's way: what the evaluation and the decision rule's fitting both read."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations
from pathlib import Path

import numpy as np

from indexer.fake_embedder import FakeEmbedder
from verifier.datasets import DEV_SPLITS, read_split
from verifier.evaluation_inputs import dev_logits, product_reading
from verifier.pairs import verifier_passage


class RecordingClassifier:
    """Three logits per pair, and every pair it was given."""

    def __init__(self) -> None:
        self.read: list[tuple[str, str]] = []

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.read += pairs
        return np.zeros((len(pairs), 3))


def test_every_dev_split_is_read_with_the_top_sentences_of_each_document(data_dir: Path, tmp_path: Path) -> None:
    reading = product_reading(FakeEmbedder(), tmp_path / "no-tagger", evidence_sentences=2)
    classifier = RecordingClassifier()

    dev = dev_logits(classifier, reading, data_dir, write=lambda line: None)

    assert list(dev) == [split.name for split in DEV_SPLITS]
    pairs = [pair for split in DEV_SPLITS for pair in read_split(data_dir, split)]
    for split in DEV_SPLITS:
        logits, gold = dev[split.name]
        assert gold == [pair.label for pair in read_split(data_dir, split)]
        assert logits.shape == (len(gold), 3)
    assert [claim for claim, _ in classifier.read] == [pair.claim for pair in pairs]
    for pair, (_, passage) in zip(pairs, classifier.read, strict=True):
        title, sentences = pair.document.title, pair.document.sentences
        top_two = permutations(range(len(sentences)), min(2, len(sentences)))  # best first
        assert any(passage == verifier_passage(title, sentences, chosen) for chosen in top_two)
    assert reading.description == "title + top 2 sentences by bm25+cosine"


def test_a_whole_abstract_checkpoint_reads_the_whole_abstract(data_dir: Path, tmp_path: Path) -> None:
    reading = product_reading(FakeEmbedder(), tmp_path, evidence_sentences=2, whole_abstract=True)
    pairs = read_split(data_dir, DEV_SPLITS[0])[:20]

    inputs = reading.inputs(pairs)

    assert inputs == [(pair.claim, verifier_passage(pair.document.title, pair.document.sentences)) for pair in pairs]
    assert reading.description == "title + whole abstract"


def test_the_chosen_sentences_are_read_best_first_so_a_cut_falls_on_the_weakest() -> None:
    sentences = ("First.", "Second.", "Third.", "Fourth.")
    assert verifier_passage("Title.", sentences, [3, 0, 3]) == "Title. Fourth. First."
    assert verifier_passage("Title.", sentences) == "Title. First. Second. Third. Fourth."
