#!/usr/bin/env node
// js-simple: the sample bot of the JavaScript kit (kit/), which does all the plumbing. Run it:
// `npm ci && node bot.js --port 50051`.
//
// It reads cards as values ({suit, rank, points}: view.hand_cards, moves[i].card) and answers by index
// into `moves`, so it parses no notation and can make no illegal move.
//
// Strategy (simple on purpose):
// - Auction: pass unless the hand holds at least two jacks; then bid the lowest legal bid in the longest
//   suit (`28S` form when holding that suit's jack, `S28` otherwise), never above MAX_BID and never over a
//   partner's bid. Never doubles or redoubles.
// - Play: when a partner is winning the trick, play the lowest-ranked legal card; otherwise the
//   highest-ranked one (rank order J 9 A T K Q 8 7; of two cards of one rank, a trump counts higher).

'use strict';

const { Denomination, Rank, Suit, isTrump, serve } = require('./kit');

// The highest number this bot ever bids (a contract of 28-39 costs 2 tables when lost, 40 or more 3).
const MAX_BID = 32;
const SUITS = ['SUIT_SPADES', 'SUIT_HEARTS', 'SUIT_DIAMONDS', 'SUIT_CLUBS'];

// The suit with the most cards; ties go to the one with more points, then to the first in S H D C.
function longestSuit(hand) {
  let best = null;
  let bestKey = null;
  for (const suit of SUITS) {
    const cards = hand.filter((card) => card.suit === suit);
    const key = [cards.length, cards.reduce((sum, card) => sum + card.points, 0)];
    if (bestKey === null || key[0] > bestKey[0] || (key[0] === bestKey[0] && key[1] > bestKey[1])) {
      best = suit;
      bestKey = key;
    }
  }
  return best;
}

function chooseCall(view, calls, teamOf) {
  const passIndex = calls.findIndex((call) => call.kind === 'CALL_KIND_PASS');
  const fallback = passIndex >= 0 ? passIndex : 0;
  const hand = view.hand_cards;
  const jacks = hand.filter((card) => card.rank === 'RANK_JACK').length;
  if (jacks < 2) return fallback;
  const highBid = view.high_bid;
  if (highBid && teamOf[highBid.seat] === teamOf[view.seat]) return fallback; // never bid over partner
  const suit = longestSuit(hand);
  const holdsJack = hand.some((card) => card.suit === suit && card.rank === 'RANK_JACK');
  let bestIndex = -1;
  let bestNumber = Infinity;
  calls.forEach((call, index) => {
    // Only the plain suit bids: `28S` (BID_FORM_NUMBER_SUIT: holds the jack) and `S28` (SUIT_NUMBER).
    const withJack = call.form === 'BID_FORM_NUMBER_SUIT';
    if (!withJack && call.form !== 'BID_FORM_SUIT_NUMBER') return;
    if (Denomination[call.denomination] !== Suit[suit] || call.contract_number > MAX_BID) return;
    // The lowest number; of its two forms, the one that tells partner the truth about the jack.
    const number = call.contract_number;
    if (number < bestNumber || (number === bestNumber && withJack === holdsJack)) {
      bestIndex = index;
      bestNumber = number;
    }
  });
  return bestIndex >= 0 ? bestIndex : fallback;
}

function chooseCard(view, cards, teamOf) {
  // The arena tells who is winning the trick so far (absent when the table is empty) and the trump.
  const winner = view.trick_winner;
  const partnerWinning = winner !== undefined && winner !== view.seat && teamOf[winner] === teamOf[view.seat];
  // Strength of a card: its rank first (J strongest, 7 weakest: a lower rank number is a higher card); of
  // two cards of one rank the trump counts as the higher, so playing low spends a plain card and playing
  // high a trump.
  const strength = (card) =>
    2 * (Rank.RANK_SEVEN + 1 - Rank[card.rank]) + (isTrump(card, view.trump) ? 1 : 0);
  let bestIndex = 0;
  cards.forEach((card, index) => {
    const difference = strength(card) - strength(cards[bestIndex]);
    if (partnerWinning ? difference < 0 : difference > 0) bestIndex = index;
  });
  return bestIndex;
}

class SimpleBot {
  describe() {
    return { name: 'js-simple', version: '1.0.0', author: 'fiftysix arena', player_counts: [4, 6, 8] };
  }

  onMatchStart(start) {
    this.teamOf = start.team_of_seats;
  }

  // A Card each in the play, a Call each in the auction; the index chosen is the answer.
  decide(view, moves) {
    if (moves.length === 0) throw new Error('a decision with no structured moves');
    if (view.phase === 'PHASE_PLAY') return chooseCard(view, moves.map((move) => move.card), this.teamOf);
    return chooseCall(view, moves.map((move) => move.call), this.teamOf);
  }
}

module.exports = { SimpleBot, chooseCall, chooseCard, longestSuit };

if (require.main === module) {
  serve(SimpleBot);
}
