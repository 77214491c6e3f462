"""One terminal progress bar per ingest stage (store, chunk, embed, upsert), each with its own rate and ETA.

One bar for everything stood still for most of an ingest: storing runs at hundreds of abstracts a second, embedding
at 5 to 20 on two cores. A stage's bar restarts its clock when the stage starts, so its rate and ETA count only its
own work, not the time the stages before it took.
"""

from __future__ import annotations

from collections.abc import Sequence

from tqdm import tqdm

from indexer.ingest import PROGRESS_STAGES


class StageBars:
    """The indexer's IngestProgress, drawn with tqdm."""

    def __init__(self, *, store_total: int, stages: Sequence[str] = PROGRESS_STAGES, disable: bool = False) -> None:
        self._bars = {
            stage: tqdm(
                total=store_total if stage == "store" else 0,
                unit="abstract",
                desc=f"{stage:<6}",
                position=position,
                disable=disable,
                dynamic_ncols=True,
            )
            for position, stage in enumerate(stages)
        }

    def stage_started(self, stage: str, total: int) -> None:
        bar = self._bars.get(stage)
        if bar is not None:
            bar.reset(total=total)  # restarts the bar's clock: the rate counts this stage's own time

    def stage_advanced(self, stage: str, count: int) -> None:
        bar = self._bars.get(stage)
        if bar is not None:
            bar.update(count)

    def close(self) -> None:
        for bar in self._bars.values():
            bar.close()
