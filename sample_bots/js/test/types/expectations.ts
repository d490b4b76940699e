// What the kit's types refuse: each line under @ts-expect-error must fail to type-check, or tsc fails
// (test/types.test.js runs it), so the declarations stay precise rather than loose.

import { Rank, start } from '../../kit';
import type { Bot, DecisionRequest, Move, PlaySeatRequest, View } from '../../kit';

declare const view: View;
declare const move: Move;
declare const decision: DecisionRequest;
declare const request: PlaySeatRequest;

// Suits and ranks are the .proto's names.
// @ts-expect-error: a suit is SUIT_SPADES, never SPADES
export const spades = view.hand_cards[0].suit === 'SPADES';
export const jack: number = Rank.RANK_JACK;
// @ts-expect-error: an enum's numbers are read-only
Rank.RANK_JACK = 2;

// A move is a card or a call: narrow it first.
// @ts-expect-error: move.card is undefined for a call
export const rank = move.card.rank;
export const narrowed = move.move === 'card' ? move.card.rank : move.call.kind;

// Absent values are null (a message) or undefined (an optional field).
// @ts-expect-error: high_bid is null before the first bid
export const bidder = view.high_bid.seat;
// @ts-expect-error: trick_winner is undefined on an empty table
export const winner: number = view.trick_winner;
// @ts-expect-error: trick_winning_card is null on an empty table
export const winning = view.trick_winning_card.rank;

// A uint64 is a string, exact beyond 2^53.
// @ts-expect-error: decision_id is a string
export const id: number = decision.decision_id;

// The event names its member.
export const started = request.event === 'match_start' ? request.match_start.seat : -1;
// @ts-expect-error: match_start is undefined on a decision
export const seat = request.event === 'decision' && request.match_start.seat;

// A bot needs a name and answers with an index or a notation.
// @ts-expect-error: describe() needs a name
export const nameless: Bot = { describe: () => ({}), decide: () => 0 };
// @ts-expect-error: decide answers with a number or a string
export const wordless: Bot = { describe: () => ({ name: 'x' }), decide: () => ({ index: 0 }) };
// @ts-expect-error: the rulesets are RULESET_PAIRS and RULESET_PARTNERSHIP
export const unknown: Bot = { describe: () => ({ name: 'x', rulesets: ['pairs'] }), decide: () => 0 };
export const minimal = start({ describe: () => ({ name: 'x' }), decide: () => 'pass' }, { port: 0 });
