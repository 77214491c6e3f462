"""The product-shaped dev set: pairs built from dev-split abstracts only (`verifier.product_pools`), capped per
construction so that each recall is read on the same few hundred pairs in every run, and halved by source abstract
so that a rule fitted on one half can be read on the other."""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from pathlib import Path

from verifier.product_pairs import CONSTRUCTIONS, ShapedPair, shaped_pairs
from verifier.product_pools import product_pools

DEV_SEED = 29  # not the training builds' seed: the dev set is drawn on its own
PER_CONSTRUCTION = 300


def product_dev_pairs(
    data_root: Path, *, per_construction: int = PER_CONSTRUCTION, seed: int = DEV_SEED
) -> list[ShapedPair]:
    """At most `per_construction` pairs of each construction, a seeded draw, in a stable order."""
    made = shaped_pairs(product_pools(data_root).dev, seed=seed)
    return cap_per_construction(made, per_construction, seed=seed)


def cap_per_construction(pairs: Sequence[ShapedPair], cap: int, *, seed: int) -> list[ShapedPair]:
    rng = random.Random(seed)
    kept: list[ShapedPair] = []
    for construction in CONSTRUCTIONS:
        of_kind = [pair for pair in pairs if pair.construction == construction]
        kept += rng.sample(of_kind, cap) if len(of_kind) > cap else of_kind
    return kept


def half(pairs: Sequence[ShapedPair], which: int) -> list[ShapedPair]:
    """Half 0 or 1 by a hash of the source abstract: a claim and its edits and negatives stay on one side."""
    if which not in (0, 1):
        raise ValueError("half is 0 or 1")
    return [pair for pair in pairs if zlib.crc32(pair.source_id.encode()) % 2 == which]
