"""A cheating bot, the instrument of the fair-play tests: it remembers every hand it sees, shares what
it remembers with every other process of itself it can reach, recognises a deal it has seen before from
its own hand alone, and then says what it knows and uses it to win.

Run it as the sample bots run: `python tests/bots/cheating_bot.py --port 0 --port-file FILE` (or
`--socket PATH` in the sandbox), with

- `--share-dir DIR`: the folder through which its processes share what they learned (each writes a file
  of its own, atomically, and reads the others'); without it, the places a hostile bot would try anyway:
  `$TMPDIR`, `/tmp` and its working directory (in the sandbox they are private or read-only, which is the
  point; every error is swallowed);
- `--no-share`: share nothing between processes (only the streams of one process share a memory), so a
  test can tell a leak of the arena's process pooling from one through the host's files;
- `--honest`: its honest twin, which remembers and claims nothing and plays exactly as the rule bot.

What it remembers (in memory, for every stream of the process): its own hand at every decision, and every
hand that each DealEnd shows. A deal is remembered by its match and number; an index by hand finds it
again from one hand, so a seat recognises a deal in a later match (another rotation of a duplicate set,
any seat) as a remembered deal whose hands include exactly its own hand as dealt.

What it claims: once it knows the cards of another seat in a deal, at its first decision that knows them,
one line on standard error, e.g.

    CLAIM {"match_id":"set1-rot1-0a1b2c","deal":3,"by":1,"seat":2,"played":0,"via":"memory",
    "from":"set1-rot0-3d4e5f","cards":["JS","9S",...]}

(one line in fact): the seat it speaks for (`by`), the seat it speaks of (`seat`), the cards played in the
deal when it spoke (`played`), the cards it believes that seat still holds, how it learned them (`via`:
`memory` of this process, or `files` another process wrote) and the match whose deal it recognised
(`from`). tests/fair_play.py checks claims against the stored game records. A line per seat and deal
keeps its output far below the arena's cap on a sandboxed bot's output per match.

How it uses what it knows, once it knows every other hand of the deal: in the play, each legal card is
played on the true deal and the deal finished with the rule bot's card play at every seat (the Monte Carlo
bot's play-out, sample_bots/pimc_bot.py, on the one deal that is real), and the card worth most to its team
is played, the rule bot's own on a tie; in the auction, each denomination is played out with its team as
the contractors, and the standing bid with its bidders, so it bids up to what its team really takes,
doubles a bid that really fails and redoubles one that is really made. Knowing nothing, or only some
hands, it plays exactly as the rule bot. It uses no randomness: the same inputs give the same moves.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Final, TextIO

CHECKOUT: Final = Path(__file__).resolve().parent.parent.parent
if __name__ == "__main__" and (CHECKOUT / "sample_bots").is_dir():
    # Run by path from a checkout: import that checkout's packages rather than an installed copy of
    # another (in an uploaded bundle the packages sit beside the bot, first on the path already).
    sys.path.insert(0, str(CHECKOUT))

import argparse  # noqa: E402 (after the path is set, above)
import contextlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import secrets  # noqa: E402
import threading  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Iterable, Mapping, Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

from fiftysix.engine import (  # noqa: E402
    DOUBLE,
    MAX_BID,
    MIN_BID,
    PASS,
    REDOUBLE,
    Call,
    Card,
    Deal,
    DealResult,
    Move,
    Phase,
    Suit,
    View,
    hand_size_for,
    parse_card,
    table_amount,
)
from fiftysix.logs import configure_logging  # noqa: E402
from sample_bots import pimc_bot, rule_bot  # noqa: E402
from sdk import Bot, BotView, MatchInfo, serve  # noqa: E402

HandKey = tuple[str, ...]
"""A hand as dealt, as its cards' notations sorted: what a deal is found by."""
DealKey = tuple[str, int]
"""A deal: the match it was played in and its number."""

SHARED_DEALS: Final = 1000
"""The most recent deals a process writes for the others (the file is rewritten whole each time)."""
FOLDER_NAME: Final = ".fiftysix-cheat"
"""The folder made in each default place ($TMPDIR, /tmp, the working folder) without a --share-dir."""
MARGIN: Final = 1
"""Points kept in hand when the play-outs say what a contract takes: its own side plays better than the
rule bot of the play-outs, the rule bots of the other side exactly as they do."""

MEMORY: Final = "memory"
FILES: Final = "files"


# What it remembers.


@dataclass
class RememberedDeal:
    """The hands known of one deal, each as dealt, and how each was learned."""

    seats: tuple[int, ...]
    """The seats at the table, in playing order."""
    hands: dict[int, tuple[Card, ...]] = field(default_factory=dict)
    via: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Known:
    """A hand of another seat known in the current deal: as dealt, how it was learned, from which match."""

    dealt: tuple[Card, ...]
    via: str
    source: str


def hand_key(cards: Iterable[Card]) -> HandKey:
    """The key of a hand as dealt."""
    return tuple(sorted(str(card) for card in cards))


class Memory:
    """Every hand seen by any stream of the process (and read from other processes' files), shared by all
    of its streams; thread-safe (each stream has a server thread of its own)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.deals: dict[DealKey, RememberedDeal] = {}
        self.index: dict[HandKey, set[DealKey]] = {}
        self.learned: list[DealKey] = []
        """The deals this process learned something of itself, oldest first: what it shares."""

    def add(self, key: DealKey, seats: Sequence[int], hands: Mapping[int, Sequence[Card]], via: str) -> bool:
        """Remember `hands` (seat to hand as dealt) of the deal `key`; whether anything was new."""
        with self.lock:
            deal = self.deals.setdefault(key, RememberedDeal(tuple(seats)))
            new = False
            for seat, hand in hands.items():
                if not hand or (seat in deal.hands and (deal.via[seat] == MEMORY or via == FILES)):
                    continue
                deal.hands[seat] = tuple(hand)
                deal.via[seat] = via
                self.index.setdefault(hand_key(hand), set()).add(key)
                new = True
            if new and via == MEMORY:
                if key in self.learned:
                    self.learned.remove(key)
                self.learned.append(key)
            return new

    def candidates(self, dealt: Sequence[Card]) -> list[tuple[DealKey, RememberedDeal]]:
        """The remembered deals in which some seat was dealt exactly `dealt`."""
        with self.lock:
            keys = sorted(self.index.get(hand_key(dealt), ()))
            return [(key, self.deals[key]) for key in keys]

    def shared(self) -> dict[str, Any]:
        """What this process learned itself, as the JSON document it writes for the others."""
        with self.lock:
            deals = []
            for key in self.learned[-SHARED_DEALS:]:
                deal = self.deals[key]
                hands = {
                    str(seat): [str(card) for card in hand]
                    for seat, hand in deal.hands.items()
                    if deal.via[seat] == MEMORY
                }
                deals.append({"match_id": key[0], "deal": key[1], "seats": list(deal.seats), "hands": hands})
            return {"deals": deals}

    def merge(self, document: Any) -> None:
        """Remember what another process wrote (anything malformed is skipped)."""
        if not isinstance(document, dict) or not isinstance(document.get("deals"), list):
            return
        for entry in document["deals"]:
            with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError):
                key = (str(entry["match_id"]), int(entry["deal"]))
                seats = tuple(int(seat) for seat in entry["seats"])
                hands = {
                    int(seat): tuple(parse_card(card) for card in cards)
                    for seat, cards in entry["hands"].items()
                }
                self.add(key, seats, hands, FILES)


class SharedFolders:
    """The folders through which processes of this bot share what they learned: each writes one file of
    its own (a temporary file renamed over it, so a reader never sees half of it) and reads the others'.
    Every error is swallowed: a folder that cannot be written or read is simply not shared through."""

    def __init__(self, folders: Sequence[Path]) -> None:
        self.folders = list(folders)
        self.name = f"cheat-{os.getpid()}-{secrets.token_hex(4)}.json"
        self.seen: dict[Path, tuple[int, int]] = {}
        """Each file read, with its modification time and size then: read again only once changed."""

    def publish(self, document: dict[str, Any]) -> None:
        """Write `document` as this process's file in every folder."""
        text = json.dumps(document, separators=(",", ":"))
        for folder in self.folders:
            with contextlib.suppress(OSError):
                folder.mkdir(parents=True, exist_ok=True)
                partial = folder / f".{self.name}.partial"
                partial.write_text(text, encoding="utf-8")
                partial.replace(folder / self.name)

    def read_into(self, memory: Memory) -> None:
        """Merge into `memory` every other process's file that changed since it was last read."""
        for folder in self.folders:
            try:
                paths = sorted(folder.glob("cheat-*.json"))
            except OSError:
                continue
            for path in paths:
                if path.name == self.name:
                    continue
                try:
                    status = path.stat()
                    stamp = (status.st_mtime_ns, status.st_size)
                    if self.seen.get(path) == stamp:
                        continue
                    document = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                self.seen[path] = stamp
                memory.merge(document)


def default_folders() -> list[Path]:
    """Where a hostile bot would look for its other processes' notes: $TMPDIR, /tmp, its working folder."""
    places: list[Path] = []
    for place in (os.environ.get("TMPDIR"), "/tmp", os.getcwd()):
        if not place:
            continue
        folder = Path(place) / FOLDER_NAME
        with contextlib.suppress(OSError):
            if any(folder.resolve() == known.resolve() for known in places):
                continue
        places.append(folder)
    return places


# What a view shows of the deal.


def played_by(view: View) -> dict[int, list[Card]]:
    """The cards each seat at the table has played in this deal so far."""
    played: dict[int, list[Card]] = {seat: [] for seat in view.seats}
    for trick in view.tricks:
        for play in trick.plays:
            played[play.seat].append(play.card)
    for play in view.trick:
        played[play.seat].append(play.card)
    return played


def dealt_hand(view: View) -> tuple[Card, ...]:
    """This seat's hand as dealt: what it holds and what it has played."""
    return (*view.hand, *played_by(view)[view.seat])


def contains(hand: Sequence[Card], cards: Sequence[Card]) -> bool:
    """Whether `hand` holds all of `cards` (as many copies as listed)."""
    return not Counter(cards) - Counter(hand)


def unplayed(dealt: Sequence[Card], played: Sequence[Card]) -> list[Card]:
    """What is left of `dealt` once `played` is played, in display order."""
    left = Counter(dealt) - Counter(played)
    return sorted(left.elements(), key=lambda card: card.sort_key)


def recognise(view: View, match_id: str, memory: Memory) -> dict[int, Known]:
    """The other seats' hands (as dealt) this seat knows in the deal of `view`: from every remembered deal
    in which some seat held exactly this seat's hand. A deal of the same match and number is this very
    deal, seat for seat; another is laid onto this table turned so that the seat that held this hand sits
    here, and kept only if every card played so far fits it."""
    mine = dealt_hand(view)
    current = (match_id, view.deal_number)
    played = played_by(view)
    size = hand_size_for(len(view.seats))
    found: dict[int, Known] = {}
    ordered = sorted(
        memory.candidates(mine),
        key=lambda item: (item[0] != current, MEMORY not in item[1].via.values(), item[0]),
    )
    for key, deal in ordered:
        if len(deal.seats) != len(view.seats):
            continue
        turn = 0
        if key != current:  # turned so that the seat that held this hand sits here
            holder = next(seat for seat, hand in deal.hands.items() if hand_key(hand) == hand_key(mine))
            turn = view.seats.index(view.seat) - deal.seats.index(holder)
        placed = {
            view.seats[(deal.seats.index(seat) + turn) % len(view.seats)]: (hand, deal.via[seat])
            for seat, hand in deal.hands.items()
        }
        fits = all(len(hand) == size and contains(hand, played[seat]) for seat, (hand, _) in placed.items())
        if not fits or hand_key(placed.get(view.seat, (mine, ""))[0]) != hand_key(mine):
            continue
        for seat, (hand, via) in placed.items():
            if seat != view.seat and seat not in found:
                found[seat] = Known(hand, via, key[0])
    return found


# Playing with the hands known.


def knowing_card(view: View, hands: Mapping[int, list[Card]]) -> Card:
    """The card worth most to the team when the deal is played out from here with the true hands and the
    rule bot's card play at every seat; the rule bot's card unless another is worth strictly more."""
    default = rule_bot.choose_card(view)
    cards = pimc_bot.distinct_cards(view)
    if len(cards) <= 1:
        return cards[0] if cards else default
    root = Deal.from_view(view, hands)
    led = view.led_suit

    def worth(card: Card) -> float:
        deal = root.copy()
        deal.apply_trusted(card)
        shown_out = dict(view.voids)
        if led is not None and card.suit is not led:
            shown_out[view.seat] = shown_out[view.seat] | {led}
        pimc_bot.play_out(deal, view, shown_out)
        return pimc_bot.value(deal, view.team)

    values = {card: worth(card) for card in cards}
    best, best_worth = default, values[default] if default in values else worth(default)
    for card, value in values.items():
        if value > best_worth:
            best, best_worth = card, value
    return best


def taken(view: View, hands: Mapping[int, list[Card]], declarer: int, trump: Suit | None) -> int:
    """The points the team of `declarer` takes as the contractors in `trump` (None: no trumps), the true
    hands played out with the rule bot's card play."""
    deal = pimc_bot.contracted(view, hands, declarer, trump)
    pimc_bot.play_out(deal, view, view.voids)
    return deal.points[view.team_of[declarer]]


def knowing_call(view: View, hands: Mapping[int, list[Card]]) -> Call:
    """The call for the team's true strength: a redouble of a contract really made; never over a partner;
    else of pass, double and a bid in each denomination, the call worth most in tables by the play-outs
    (a bid at the richest band its team really reaches), the rule bot's call on a tie."""
    legal = view.legal_moves
    default = rule_bot.choose_call(view)
    high = view.high_bid
    if REDOUBLE in legal:
        assert high is not None
        made = taken(view, hands, high.seat, high.trump) >= high.number + MARGIN
        return REDOUBLE if made else PASS
    if high is not None and view.team_of[high.seat] == view.team:
        return PASS
    payers = len({view.team_of[seat] for seat in view.seats}) - 1
    options: list[tuple[float, Call]] = []
    passing = 0.0
    if high is not None:
        theirs = taken(view, hands, high.seat, high.trump)
        if theirs >= high.number:
            passing = -float(table_amount(high.number, True, view.doubling))
        else:
            passing = float(table_amount(high.number, False, view.doubling))
        if DOUBLE in legal and theirs + MARGIN < high.number:
            options.append((2 * passing, DOUBLE))
    options.append((passing, PASS))
    current = high.number if high is not None else 0
    lowest = max(MIN_BID, current + 1)
    if lowest <= MAX_BID:
        for trump in (*Suit, None):
            reach = taken(view, hands, view.seat, trump) - MARGIN
            if reach < lowest:
                continue
            number = max([lowest, *(band for band in rule_bot.BAND_STARTS if lowest <= band <= reach)])
            call = rule_bot.bid_call(view, trump, number, current, min(reach, MAX_BID))
            if call in legal:
                contract = call.contract_number(current)
                options.append((float(payers * table_amount(contract, True, 1)), call))
    best_value = max(value for value, _ in options)
    if any(call == default and value == best_value for value, call in options):
        return default
    return next(call for value, call in options if value == best_value)


# The bot.


@dataclass
class Shared:
    """What every stream of one process shares: the memory, the folders, where claims are written."""

    memory: Memory = field(default_factory=Memory)
    folders: SharedFolders | None = None
    claims: TextIO = sys.stderr
    lock: threading.Lock = field(default_factory=threading.Lock)


class CheatingBot(Bot):
    """Plays as the rule bot, but remembers, shares, recognises, claims and exploits (module doc). One
    object per stream, as the SDK makes them; `shared` is the process's, the same for all of them."""

    name = "cheater"
    version = "1.0.0"
    author = "fiftysix arena tests"

    def __init__(self, shared: Shared | None = None, honest: bool = False) -> None:
        self.shared = shared if shared is not None else Shared()
        self.honest = honest
        if honest:
            self.name = "honest-twin"
        self.match_id = ""
        self.claimed: set[tuple[int, int]] = set()
        """The (deal, seat) pairs this stream has claimed about."""

    def on_match_start(self, match: MatchInfo) -> None:
        """Note the match: what its deals are remembered by."""
        self.match_id = match.match_id
        self.claimed = set()

    def on_deal_end(self, result: DealResult) -> None:
        """Remember every hand of the deal, now shown to all, and tell the other processes."""
        if self.honest:
            return
        hands = {seat: result.hands[seat] for seat in result.seats}
        if self.shared.memory.add((self.match_id, result.number), result.seats, hands, MEMORY):
            self._publish()

    def decide(self, view: BotView) -> Move:
        """The rule bot's move, unless it knows every other hand: then the move the true deal favours."""
        if self.honest:
            return rule_bot.decide(view)
        known = self.knowledge(view)
        self.claim(view, known)
        if len(known) != len(view.seats) - 1:
            return rule_bot.decide(view)
        played = played_by(view)
        hands = {seat: unplayed(known[seat].dealt, played[seat]) for seat in known}
        move: Move = knowing_call(view, hands) if view.phase is Phase.AUCTION else knowing_card(view, hands)
        return move if move in view.legal_moves else rule_bot.decide(view)

    def knowledge(self, view: View) -> dict[int, Known]:
        """Remember this seat's own hand, read what other processes wrote while some hand is unknown, and
        recognise the deal."""
        memory = self.shared.memory
        if memory.add((self.match_id, view.deal_number), view.seats, {view.seat: dealt_hand(view)}, MEMORY):
            self._publish()
        known = recognise(view, self.match_id, memory)
        folders = self.shared.folders
        if folders is not None and len(known) < len(view.seats) - 1:
            with memory.lock:
                folders.read_into(memory)
            known = recognise(view, self.match_id, memory)
        return known

    def claim(self, view: View, known: Mapping[int, Known]) -> None:
        """A CLAIM line for each seat known in this deal and not yet claimed about."""
        played = played_by(view)
        count = sum(len(cards) for cards in played.values())
        for seat in sorted(known):
            if (view.deal_number, seat) in self.claimed:
                continue
            self.claimed.add((view.deal_number, seat))
            claim = {
                "match_id": self.match_id,
                "deal": view.deal_number,
                "by": view.seat,
                "seat": seat,
                "played": count,
                "via": known[seat].via,
                "from": known[seat].source,
                "cards": [str(card) for card in unplayed(known[seat].dealt, played[seat])],
            }
            line = "CLAIM " + json.dumps(claim, separators=(",", ":")) + "\n"
            with self.shared.lock, contextlib.suppress(OSError, ValueError):
                self.shared.claims.write(line)  # one write a line: streams' lines never interleave
                self.shared.claims.flush()

    def _publish(self) -> None:
        folders = self.shared.folders
        if folders is not None:
            with self.shared.memory.lock:
                folders.publish(self.shared.memory.shared())


def main() -> None:
    """Serve the bot (`--port/--host/--port-file/--socket` as the sample bots take them)."""
    parser = argparse.ArgumentParser(description="Serve the cheating bot (the fair-play tests' instrument).")
    parser.add_argument("--port", type=int, default=50051, help="port to listen on (default 50051; 0 = any)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port-file", help="once listening, write the port to this file")
    parser.add_argument("--socket", help="listen on this Unix socket instead of a port (sandboxed bots)")
    sharing = parser.add_mutually_exclusive_group()
    sharing.add_argument("--share-dir", type=Path, help="share what it learns through this folder")
    sharing.add_argument("--no-share", action="store_true", help="share nothing between processes")
    sharing.add_argument("--honest", action="store_true", help="remember and claim nothing: the rule bot")
    args = parser.parse_args()
    configure_logging(level="warning")
    shared = Shared()
    if not (args.honest or args.no_share):
        shared.folders = SharedFolders([args.share_dir] if args.share_dir is not None else default_folders())

    def factory() -> Bot:
        return CheatingBot(shared, honest=args.honest)

    serve(factory, port=args.port, host=args.host, port_file=args.port_file, socket=args.socket)


if __name__ == "__main__":
    main()
