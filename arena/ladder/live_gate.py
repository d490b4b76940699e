"""Holding a duplicate set's live events back until every rotation has played the deal.

The rotations of a set play the same deals, so a move of deal d shown while another rotation has not
finished deal d tells its spectators (and any entrant who watches) the cards that rotation's seats hold.
A duplicate bridge event plays a board at every table before anyone may see it; so here: an event of
deal d of any rotation reaches the live feed only once every rotation still to be stored has ended deal
d (a rotation stored this run has played all its deals). The scheduler plays a set's rotations at the
same time, so live lags by about a deal. Events before the first deal (who sits where) go out at once;
the end of a match goes out with its last deal.

A rotation that ends without being stored (cancelled, failed) will be played again on the same deals, so
nothing past what was already shown is shown; and once a card of a set has been shown (`shown`), the set
must never be replayed: set_play.py makes it void instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Publish = Callable[[dict[str, Any]], None]
"""Where a rotation's released events go (its match's live feed)."""


class LiveGate:
    """The live events of one set's rotations played by this run, each released once every rotation
    still playing has ended its deal."""

    def __init__(self, playing: Iterable[int], on_shown: Callable[[], bool] = lambda: True) -> None:
        """`playing`: the rotations this run plays (the others are stored already); `on_shown` is called
        once, before the first move of the set is released, and must note it (in the store): when it
        cannot (False), nothing of the set is released, since a set not known to be shown could be
        replayed."""
        self.ended: dict[int, int] = dict.fromkeys(playing, 0)
        """Per rotation still to be stored: how many of its deals have ended."""
        self.current: dict[int, int] = dict.fromkeys(self.ended, 0)
        """Per rotation: the deal being played (0 before the first)."""
        self.held: dict[int, list[tuple[int, dict[str, Any]]]] = {rotation: [] for rotation in self.ended}
        self.feeds: dict[int, Publish] = {}
        self.on_shown = on_shown
        self.shown = False
        """Whether a call or a card of the set has been released."""
        self.frozen = False
        """Nothing more is released (the run lost the set's lease, or could not note it shown)."""

    def attach(self, rotation: int, publish: Publish) -> Publish:
        """Send `rotation`'s released events to `publish` from now on; the hook its match calls.

        :raises ValueError: for a rotation the gate does not wait for (not played by this run, or stored).
        """
        if rotation not in self.ended:
            raise ValueError(f"rotation {rotation} is not one this gate holds the events of")
        self.feeds[rotation] = publish
        self.held[rotation] = []
        self.current[rotation] = 0
        self.ended[rotation] = 0
        return lambda event: self.publish(rotation, event)

    def publish(self, rotation: int, event: dict[str, Any]) -> None:
        """Take an event of `rotation`'s match: released now if every rotation has ended its deal, held
        otherwise."""
        kind = event.get("type")
        deal = event.get("deal")
        if kind == "deal_start" and isinstance(deal, int):
            self.current[rotation] = deal
        number = deal if isinstance(deal, int) and kind != "match_start" else self.current.get(rotation, 0)
        self.held.setdefault(rotation, []).append((number, event))
        if kind == "deal_end" and rotation in self.ended and isinstance(deal, int):
            self.ended[rotation] = max(self.ended[rotation], deal)
        self._release()

    def stored(self, rotation: int) -> None:
        """`rotation`'s match is stored: it has played every deal it will (its own held events go, its
        live rows went with the store's transaction)."""
        self.ended.pop(rotation, None)
        self.held.pop(rotation, None)
        self.feeds.pop(rotation, None)
        self._release()

    def freeze(self) -> None:
        """Release nothing more: another runner took the set over and plays its deals."""
        self.frozen = True

    def stop(self, rotation: int) -> None:
        """`rotation`'s match ended without being stored: nothing more of it is released, and the other
        rotations' deals past what it ended stay held (it will be played again)."""
        self.held.pop(rotation, None)
        self.feeds.pop(rotation, None)

    @property
    def released_through(self) -> int | None:
        """The last deal every rotation still playing has ended (None: no rotation is left to wait for)."""
        return min(self.ended.values(), default=None)

    def _release(self) -> None:
        if self.frozen:
            return
        through = self.released_through
        for rotation, held in self.held.items():
            publish = self.feeds.get(rotation)
            if publish is None:
                continue
            count = 0
            for number, _event in held:
                if through is not None and number > through:
                    break
                count += 1
            if not count:
                continue
            if not self.shown and any(event.get("type") in ("call", "card") for _, event in held[:count]):
                if not self.on_shown():
                    self.frozen = True
                    return
                self.shown = True
            released, self.held[rotation] = held[:count], held[count:]
            for _number, event in released:
                publish(event)
