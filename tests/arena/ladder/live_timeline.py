"""The fair-play check of the live page against the real timeline of a ladder run: every public event as
it reached the runner's live gate (`made`), every write to the live table (`written`), and each attempt
at a rotation's match (a match lost with its Ray worker is played again under a new id). Used in process
(test_fair_live.py) and on Ray (test_ray.py, through ray_live_runner.py, which writes the timeline as
JSON)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.ladder.live_gate import Publish
from arena.ladder.match_play import MatchOrder, Replay
from arena.ladder.store import LadderStore
from tests.arena.site.live_check import check_public_stream


@dataclass
class Timeline:
    """What happened when (`time.monotonic()` of the runner's process)."""

    made: list[tuple[float, str, dict[str, Any]]] = field(default_factory=list)
    """Each event as the match gave it to the runner: when, its match id, the event."""
    written: list[tuple[float, str, int, dict[str, Any]]] = field(default_factory=list)
    """Each row written to the live table: when, match id, sequence number, event."""
    attempts: list[tuple[float, str, str, str]] = field(default_factory=list)
    """Each attempt at a match: when it began, its set (the seed), its rotation (the first attempt's
    match id) and its own match id."""

    def watch(
        self, order: MatchOrder, on_event: Publish | None, replay: Replay | None
    ) -> tuple[Publish, Replay]:
        """`on_event` and `replay` of a match about to be played, noting what passes through them."""
        rotation, seed = order.settings.match_id, str(order.settings.seed)

        def attempt(match_id: str, publish: Publish | None) -> Publish:
            self.attempts.append((time.monotonic(), seed, rotation, match_id))

            def noted(event: dict[str, Any]) -> None:
                self.made.append((time.monotonic(), match_id, event))
                if publish is not None:
                    publish(event)

            return noted

        def replayed(match_id: str) -> Publish | None:
            publish = replay(match_id) if replay is not None else None
            return None if publish is None else attempt(match_id, publish)

        return attempt(rotation, on_event), replayed

    def to_json(self) -> str:
        return json.dumps({"made": self.made, "written": self.written, "attempts": self.attempts})

    @classmethod
    def read(cls, path: Path) -> Timeline:
        kept = json.loads(path.read_text())
        return cls(
            [tuple(entry) for entry in kept["made"]],  # type: ignore[misc]
            [tuple(entry) for entry in kept["written"]],  # type: ignore[misc]
            [tuple(entry) for entry in kept["attempts"]],  # type: ignore[misc]
        )


def watched_store(path: Path | str, timeline: Timeline) -> LadderStore:
    """A store whose writes to the live table are noted in `timeline`."""
    store = LadderStore(path)
    write = store.live.add_live_events

    def noted(match_id: str, events: Sequence[tuple[int, float, str]]) -> None:
        for seq, _at, text in events:
            timeline.written.append((time.monotonic(), match_id, seq, json.loads(text)))
        write(match_id, events)

    store.live.add_live_events = noted  # type: ignore[method-assign]
    return store


def assert_live_was_fair(timeline: Timeline, store: LadderStore) -> int:
    """Fail unless (1) no move of a set reached the live table before every rotation of the set had
    ended that deal in the attempt at it then in play (or its match was over), (2) each match's live rows
    were written once each, in order, and (3) what was shown of a stored match, and what its last attempt
    sent the runner, is what its record holds, in order, leaking nothing. Returns how many moves were
    shown."""
    ended: dict[tuple[str, int], float] = {}  # (match, deal) -> when the runner got its end
    over: dict[str, float] = {}
    for at, match_id, event in timeline.made:
        if event["type"] == "deal_end":
            ended[match_id, event["deal"]] = at
        elif event["type"] == "match_end":
            over[match_id] = at
    set_of = {match_id: seed for _at, seed, _rotation, match_id in timeline.attempts}
    rotations: dict[str, dict[str, list[tuple[float, str]]]] = {}  # set -> rotation -> attempts
    for began, seed, rotation, match_id in timeline.attempts:
        rotations.setdefault(seed, {}).setdefault(rotation, []).append((began, match_id))
    moves = 0
    for at, match_id, _seq, event in timeline.written:
        deal = event.get("deal")
        if event["type"] not in ("call", "card", "deal_end") or not isinstance(deal, int):
            continue
        moves += 1
        for rotation, attempts in rotations[set_of[match_id]].items():
            begun = [attempt for began, attempt in attempts if began <= at]
            assert begun, (match_id, rotation, event)  # the gate waits for every rotation to begin
            in_play = begun[-1]
            finished = ended.get((in_play, deal), over.get(in_play))
            assert finished is not None, (match_id, rotation, in_play, event)
            assert finished <= at, (match_id, rotation, in_play, event)
    by_match: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for _at, match_id, seq, event in timeline.written:
        by_match.setdefault(match_id, []).append((seq, event))
    stored = {match.id for match in store.matches.finished()}
    for match_id, rows in by_match.items():
        assert [seq for seq, _event in rows] == list(range(len(rows))), match_id
        if match_id not in stored:
            continue
        events = [event for _seq, event in rows]
        document = store.browse.match_record(match_id)
        shown_deals = {event["deal"] for event in events if event["type"] == "deal_end"}
        shown = dict(document, deals=[deal for deal in document["deals"] if deal["number"] in shown_deals])
        if shown_deals:
            check_public_stream(events, shown)
    for match_id in stored & set(set_of):  # every event of the match reached the runner, in order
        made = [event for _at, made_by, event in timeline.made if made_by == match_id]
        check_public_stream(made, store.browse.match_record(match_id))
    return moves
