"""The chance of a seeded match: each deal's shuffle and the first dealer, drawn from the match's seed by
a keyed cryptographic function, so that a deal made public (every hand is, once its deal is over) says
nothing about the seed, nor about any other deal of the match or of any other seed.

docs/rules.md#decisions, seeded deals. The seed, as 17 bytes (two's complement, big-endian), is the
HMAC-SHA256 key of every draw; each draw has its own label (`fiftysix/deal/{number}/{players}`,
`fiftysix/first-dealer`), and the HMAC of the label is the key of a stream of bytes: SHA-256 of that key
followed by a block counter (8 bytes, big-endian), block after block. An index below a bound comes from
one byte of the stream masked to the bound's bit length, drawn again when it is not below the bound
(rejection: every index equally likely), and a pack is shuffled by Fisher-Yates from its last card down.
Nothing depends on the machine, the Python version or hash randomization. Standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import MutableSequence
from typing import Final, TypeVar

MIN_SEED: Final = -(2**63 - 1)
"""The lowest seed: records and ladder sets from before seeds of 128 bits could hold any signed 64-bit
value."""
SEED_BITS: Final = 128
"""The arena draws its sets' seeds as this many random bits."""
MAX_SEED: Final = 2**SEED_BITS - 1
"""The highest seed."""
SEED_RANGE: Final = "-(2^63-1) to 2^128-1"
"""The range of a seed, as messages and help texts give it."""

_KEY_BYTES: Final = 17
"""A seed as a key: 17 bytes hold MIN_SEED to MAX_SEED in two's complement."""
_MAX_BOUND: Final = 256
"""The largest bound one byte of the stream can draw below (a pack has at most 64 cards)."""
_MASKS: Final = tuple((1 << (bound - 1).bit_length()) - 1 for bound in range(_MAX_BOUND + 1))
"""For each bound, the mask that keeps a byte's bits below the bound's bit length."""

_Item = TypeVar("_Item")


def seed_key(seed: int) -> bytes:
    """The key that `seed` draws every deal with.

    :raises ValueError: for a seed outside MIN_SEED to MAX_SEED.
    """
    if not MIN_SEED <= seed <= MAX_SEED:
        raise ValueError(f"a seed is a whole number from {SEED_RANGE}, got {seed}")
    return seed.to_bytes(_KEY_BYTES, "big", signed=True)


def draw_key(key: bytes, label: str) -> bytes:
    """The key of one draw of a match (`label` names it): HMAC-SHA256 of the label under the seed's key,
    so that no two draws, nor two seeds, share a stream, and no stream tells anything of the key."""
    return hmac.digest(key, label.encode("ascii"), "sha256")


class DrawStream:
    """Uniform indices drawn from a draw's key (see the module's note): the same key, the same indices."""

    __slots__ = ("_key", "_counter", "_block", "_at")

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._counter = 0
        self._block = b""
        self._at = 0

    def below(self, bound: int) -> int:
        """An index from 0 to `bound` - 1, every one equally likely (1 <= bound <= 256)."""
        if not 1 <= bound <= _MAX_BOUND:
            raise ValueError(f"a bound is 1 to {_MAX_BOUND}, got {bound}")
        mask = _MASKS[bound]
        while True:
            if self._at == len(self._block):
                self._block = hashlib.sha256(self._key + self._counter.to_bytes(8, "big")).digest()
                self._counter += 1
                self._at = 0
            value = self._block[self._at] & mask
            self._at += 1
            if value < bound:
                return value

    def shuffle(self, items: MutableSequence[_Item]) -> None:
        """Shuffle `items` in place (Fisher-Yates, from the last item down; at most 256 items): the
        draws of `below`, inlined (a deal's shuffle is part of every playout)."""
        if len(items) > _MAX_BOUND:
            raise ValueError(f"at most {_MAX_BOUND} items are shuffled, got {len(items)}")
        key, counter, block, at = self._key, self._counter, self._block, self._at
        sha256, masks = hashlib.sha256, _MASKS
        for last in range(len(items) - 1, 0, -1):
            bound = last + 1
            mask = masks[bound]
            while True:
                if at == len(block):
                    block = sha256(key + counter.to_bytes(8, "big")).digest()
                    counter += 1
                    at = 0
                other = block[at] & mask
                at += 1
                if other < bound:
                    break
            items[last], items[other] = items[other], items[last]
        self._counter, self._block, self._at = counter, block, at


def deal_stream(key: bytes, deal_number: int, players: int) -> DrawStream:
    """The stream that shuffles deal `deal_number` (from 1) for `players` at the table."""
    return DrawStream(draw_key(key, f"fiftysix/deal/{deal_number}/{players}"))


def first_dealer_stream(key: bytes) -> DrawStream:
    """The stream that chooses the first dealer."""
    return DrawStream(draw_key(key, "fiftysix/first-dealer"))
