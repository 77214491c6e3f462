"""Where a question's time went, stage by stage in the order they ran: what the answer page draws as one bar each.

The stages write their times to `Question.timings_ms` as they finish, keyed by name, beside figures that are not
stages (the generation's token count and rate). PostgreSQL's jsonb keeps no key order, so the order is set here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

# Every stage a question can show (static/stage-bars.js words each for the page). `generation` stands whole only where
# its first token's time is unknown (an answer stopped before it); else it is `first_token` and `writing`.
STAGES = (
    "queue",
    "retrieval",
    "consensus",
    "context",
    "first_token",
    "writing",
    "generation",
    "verification",
    "answer_stance",
)


class StageTiming(TypedDict):
    stage: str
    ms: float


def stage_timings(timings_ms: Mapping[str, Any], *, bottom_line_first: bool) -> list[StageTiming]:
    """The stages recorded in `timings_ms`, in the order they ran, each with its milliseconds.

    The generation is split into the wait for its first token (the model reading the prompt) and the writing after
    it, where both are known. A yes/no question's bottom line runs before the answer when `bottom_line_first` (the
    question's context says so), else after verification.
    """
    ms = {stage: float(value) for stage, value in timings_ms.items() if isinstance(value, int | float)}
    if "generation" in ms and "generation_ttft" in ms:
        first_token = min(ms["generation_ttft"], ms["generation"])
        ms |= {"first_token": first_token, "writing": ms["generation"] - first_token}
        del ms["generation"]
    order = ["queue", "retrieval"]
    order += ["consensus", "context"] if bottom_line_first else ["context"]
    order += ["first_token", "writing", "generation", "verification", "answer_stance"]
    order += [] if bottom_line_first else ["consensus"]
    return [{"stage": stage, "ms": round(ms[stage], 1)} for stage in order if stage in ms]
