"""A command bot for the tests of each match's output: the random bot, which writes a line to its standard
error at each decision, `talk MATCH SEAT N ---...` (N its count of decisions in the match, then 100
dashes), and the same line to its transcript of the match, `TRANSCRIPTS/MATCH-SEAT`, so that a test knows
exactly what it wrote in each match. With `--quiet` it writes `talk MATCH SEAT 1` at its first decision
only.

`python talking_bot.py --port-file F --transcripts FOLDER [--quiet]`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sample_bots.random_bot import RandomBot
from sdk import BotView, MatchInfo, Move, serve


def talker(transcripts: Path, quiet: bool) -> type[RandomBot]:
    """The random bot, talking as the module says."""

    class TalkingBot(RandomBot):
        name = "talking"

        def on_match_start(self, match: MatchInfo) -> None:
            super().on_match_start(match)
            self.transcript = transcripts / f"{match.match_id}-{match.seat}"
            self.prefix = f"talk {match.match_id} {match.seat}"
            self.decisions = 0

        def decide(self, view: BotView) -> Move:
            self.decisions += 1
            if not quiet or self.decisions == 1:
                line = f"{self.prefix} {self.decisions}{'' if quiet else ' ' + '-' * 100}\n"
                with self.transcript.open("a", encoding="utf-8") as transcript:
                    transcript.write(line)
                sys.stderr.write(line)
                sys.stderr.flush()
            return super().decide(view)

    return TalkingBot


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--transcripts", type=Path, required=True)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    serve(talker(args.transcripts, args.quiet), port=0, port_file=args.port_file)


if __name__ == "__main__":
    main()
