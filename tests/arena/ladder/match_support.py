"""Storing a finished match in a test as a ladder run stores it (`store_match`: its tallies computed by
the rating package), from its parts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.ladder import store_match
from arena.ladder.store import DuplicateSet, FinishedMatch, LadderStore, SeatOutput
from fiftysix.wire import FaultRecord


def save_match(
    store: LadderStore,
    match_id: str,
    duplicate: DuplicateSet,
    rotation: int,
    reason: str,
    ranking: Sequence[int],
    faults: Sequence[FaultRecord],
    record: dict[str, Any],
    decisions: int,
    seconds: float,
    outputs: Sequence[SeatOutput] = (),
) -> None:
    """Store the match of `duplicate`'s `rotation` with these parts (see FinishedMatch)."""
    finished = FinishedMatch(
        match_id,
        duplicate,
        rotation,
        reason,
        tuple(ranking),
        tuple(faults),
        record,
        decisions,
        seconds,
        tuple(outputs),
    )
    store_match(store.matches, finished)
