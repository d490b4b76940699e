// ts-high-card: a bot in TypeScript on the kit, to show its types at work (`npm run typecheck` checks it).
// It always passes in the auction and plays its strongest card.

import { Rank, isTrump, log, serve } from '../kit';
import type { Bot, BotDescription, Card, DealEnd, MatchEnd, Move, View } from '../kit';

// The stronger of two cards for this bot: a trump over a plain card, then the higher rank (the lower
// Rank number: the jack is 1).
function stronger(card: Card, other: Card, view: View): boolean {
  const trump = isTrump(card, view.trump);
  if (trump !== isTrump(other, view.trump)) return trump;
  return Rank[card.rank] < Rank[other.rank];
}

export class HighCardBot implements Bot {
  private deals = 0;

  describe(): BotDescription {
    return { name: 'ts-high-card', version: '0.1.0', rulesets: ['RULESET_PAIRS'] };
  }

  decide(view: View, moves: Move[]): number {
    let best = 0;
    moves.forEach((move, index) => {
      const current = moves[best];
      if (move.move === 'call') {
        if (move.call.kind === 'CALL_KIND_PASS') best = index;
      } else if (current.move === 'card' && stronger(move.card, current.card, view)) {
        best = index;
      }
    });
    return best;
  }

  onDealEnd(dealEnd: DealEnd): void {
    this.deals = dealEnd.deal_number;
  }

  onMatchEnd(matchEnd: MatchEnd): void {
    log('match_over', { deals: this.deals, reason: matchEnd.reason, faults: matchEnd.faults.length });
  }
}

serve(HighCardBot);
