"""Rewrite the golden transcripts in tests/fiftysix/golden/ on purpose, after an intended engine change.

Run from the repository root, then review every changed line before committing:

    python -m tests.fiftysix.golden.regenerate      (or: python tests/fiftysix/golden/regenerate.py)
    git diff tests/fiftysix/golden

`CASES` is the one list of transcripts; tests/fiftysix/test_golden.py regenerates each in memory and
compares it with its file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fiftysix.engine import Match, MatchRules, Ruleset
from fiftysix.transcript import Chooser, random_chooser, scripted_chooser, transcript

GOLDEN_DIR = Path(__file__).resolve().parent

# Bigger tables need more passes in a row to end an auction, so they pass more often to keep
# auctions (and their long lists of legal calls) short.
PASS_PROBABILITY = {4: 0.7, 6: 0.8, 8: 0.85}

# The seeded cases use the first seed, counting from 1, in which no deal is passed out: a real auction
# says more, and the all-pass auction has its own case.
# Found again when the deals became the keyed shuffle of fiftysix/engine/seeds.py.
SEEDS = {
    (Ruleset.PAIRS, 4): 7,
    (Ruleset.PAIRS, 6): 2,
    (Ruleset.PAIRS, 8): 2,
    (Ruleset.PARTNERSHIP, 4): 3,
    (Ruleset.PARTNERSHIP, 6): 4,
    (Ruleset.PARTNERSHIP, 8): 2,
}


@dataclass(frozen=True)
class Case:
    """One golden transcript: its file name, how it was made (for the header), and how to play it."""

    name: str
    about: tuple[str, ...]
    build: Callable[[], tuple[Match, Chooser]]

    @property
    def path(self) -> Path:
        """The golden file of this case."""
        return GOLDEN_DIR / f"{self.name}.txt"

    def render(self) -> str:
        """The transcript, as it must read in the golden file."""
        match, choose = self.build()
        header = (
            f"Golden transcript {self.name}: written by tests/fiftysix/golden/regenerate.py; do not edit.",
            "After an intended engine change run tests/fiftysix/golden/regenerate.py, review git diff.",
            *self.about,
            "",
        )
        return transcript(match, choose, header)


def _match_call(rules: MatchRules, seed: int) -> str:
    """How the case's match is created, as the header tells it."""
    settings = f"players={rules.players}, ruleset={rules.ruleset.value}, deal_cap={rules.deal_cap}"
    return f"Match(MatchRules({settings}), seed={seed})"


def _seeded(name: str, rules: MatchRules, seed: int) -> Case:
    """A plain seeded match played by `random_chooser`."""
    pass_probability = PASS_PROBABILITY[rules.players]

    def build() -> tuple[Match, Chooser]:
        return Match(rules, seed=seed), random_chooser(f"golden/{name}", pass_probability)

    about = (
        f"Made by: {_match_call(rules, seed)};",
        f'moves by random_chooser("golden/{name}", pass_probability={pass_probability}).',
        f"Seed {seed} is the first seed from 1 in which no deal is passed out (see SEEDS).",
    )
    return Case(name, about, build)


def _scripted(
    name: str, rules: MatchRules, seed: int, script: dict[int, Sequence[str]], about: Sequence[str]
) -> Case:
    """A seeded match whose auctions start with scripted calls; `random_chooser` does the rest."""
    pass_probability = PASS_PROBABILITY[rules.players]

    def build() -> tuple[Match, Chooser]:
        otherwise = random_chooser(f"golden/{name}", pass_probability)
        return Match(rules, seed=seed), scripted_chooser(script, otherwise)

    made = (
        f"Made by: {_match_call(rules, seed)};",
        f"auction script by deal {dict(script)};",
        f'every other move by random_chooser("golden/{name}", pass_probability={pass_probability}).',
    )
    return Case(name, (*about, *made), build)


def _team_out() -> Case:
    """8 players in pairs, team 0 starting with 1 table, so that it goes out in the first deal."""
    name = "team-out-8p-seed1"
    rules = MatchRules(players=8, ruleset=Ruleset.PAIRS, deal_cap=2)
    tables = [1, 15, 16, 16]

    def build() -> tuple[Match, Chooser]:
        match = Match(rules, seed=1)
        match.tables[:] = tables
        return match, random_chooser(f"golden/{name}", PASS_PROBABILITY[8])

    about = (
        "A team goes out and the next deal is played by the 6 players left (6-player pack, 8-card hands).",
        "Made by: Match(MatchRules(players=8, ruleset=pairs, deal_cap=2), seed=1), then match.tables set to",
        f"{tables} before the first move (still 48 in all, as conservation requires), so that team 0",
        "goes out as soon as it has to pay a table;",
        f'moves by random_chooser("golden/{name}", pass_probability={PASS_PROBABILITY[8]}).',
        "Seed 1 was the first seed tried; in it team 0 bids 30NT and goes down, and can pay only 1 of the",
        "2 tables it owes each team: that one goes to team 1, the first team from the bidder's right.",
    )
    return Case(name, about, build)


def _cases() -> tuple[Case, ...]:
    cases = []
    for (ruleset, players), seed in SEEDS.items():
        # One deal for 8 players keeps the file near 70 KB; two deals show the dealer moving on.
        rules = MatchRules(players=players, ruleset=ruleset, deal_cap=1 if players == 8 else 2)
        cases.append(_seeded(f"{ruleset.value}-{players}p-seed{seed}", rules, seed))
    cases.append(
        _scripted(
            "double-redouble-4p-seed1",
            MatchRules(players=4, ruleset=Ruleset.PAIRS, deal_cap=2),
            seed=1,
            script={
                1: ("28S", "+2H", "double", "pass", "redouble"),
                2: ("S30", "pass", "pass", "double", "pass", "pass"),
            },
            about=(
                "Doubling. Deal 1: dealer+1 bids 28S, dealer+2 bids +2H (30H), dealer+3 doubles; the",
                "contracting team's players then have one turn each in playing order from the doubler:",
                "the dealer passes, dealer+2 redoubles, which ends the auction. Deal 2: dealer+1 bids S30,",
                "two passes, then the new dealer (an opponent) doubles and both players of the contracting",
                "team pass: the contract is played doubled.",
            ),
        )
    )
    cases.append(
        _scripted(
            "all-pass-6p-seed1",
            MatchRules(players=6, ruleset=Ruleset.PAIRS, deal_cap=1),
            seed=1,
            script={1: ("pass",) * 6},
            about=(
                "All pass: the first 6 turns are passes, so the team of the player to the dealer's right",
                "is contracted for 28 no trumps, undoubled (docs/rules.md#all-pass).",
            ),
        )
    )
    cases.append(_team_out())
    return tuple(cases)


CASES: tuple[Case, ...] = _cases()
"""Every golden transcript, in the order they are written."""


def main(argv: Sequence[str] = ()) -> int:
    """Write every golden file; print which changed and which files no case writes any more."""
    del argv  # No options: regenerating everything is cheap and leaves nothing half done.
    for case in CASES:
        text = case.render()
        old = case.path.read_text(encoding="utf-8") if case.path.exists() else None
        if old != text:
            case.path.write_text(text, encoding="utf-8", newline="\n")
        state = "new" if old is None else ("changed" if old != text else "unchanged")
        print(f"{state:9} {case.path.relative_to(GOLDEN_DIR.parents[2])} ({len(text.encode()):,} bytes)")
    known = {case.path for case in CASES}
    for stray in sorted(set(GOLDEN_DIR.glob("*.txt")) - known):
        print(f"stray     {stray.relative_to(GOLDEN_DIR.parents[2])}: no case writes it; delete it?")
    print("Now review the changes: git diff tests/fiftysix/golden")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
