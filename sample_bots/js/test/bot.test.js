// The sample bot's strategy, decision by decision, on views built by hand (tests/sample_bots/
// test_js_bot.py plays it against the real arena).

'use strict';

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { SimpleBot, chooseCall, chooseCard, longestSuit } = require('../bot');

const SUIT = { S: 'SUIT_SPADES', H: 'SUIT_HEARTS', D: 'SUIT_DIAMONDS', C: 'SUIT_CLUBS' };
const RANK = { J: 'JACK', 9: 'NINE', A: 'ACE', T: 'TEN', K: 'KING', Q: 'QUEEN', 8: 'EIGHT', 7: 'SEVEN' };
const POINTS = { J: 3, 9: 2, A: 1, T: 1 };
// A structured card from its notation, as the arena sends it: `JS` is {suit: SUIT_SPADES, rank: RANK_JACK}.
const card = (text) => ({ suit: SUIT[text[1]], rank: `RANK_${RANK[text[0]]}`, points: POINTS[text[0]] ?? 0 });
const cards = (text) => text.split(' ').map(card);

const PASS = { kind: 'CALL_KIND_PASS', form: 'BID_FORM_UNSPECIFIED', contract_number: 0 };
const bid = (form, number, suit) => ({
  kind: 'CALL_KIND_BID',
  form: `BID_FORM_${form}`,
  number,
  contract_number: number,
  denomination: `DENOMINATION_${suit}`,
});
const TEAMS = [0, 1, 0, 1];

test('the longest suit; ties to the one with more points, then to the first of S H D C', () => {
  assert.equal(longestSuit(cards('JS 9S JH 7C')), 'SUIT_SPADES');
  assert.equal(longestSuit(cards('KS QS JH 9H')), 'SUIT_HEARTS');
  assert.equal(longestSuit(cards('KD QD KC QC')), 'SUIT_DIAMONDS');
});

test('the auction: pass without two jacks, bid low in the longest suit with the truthful form', () => {
  const calls = [
    PASS,
    bid('NUMBER_SUIT', 28, 'SPADES'),
    bid('SUIT_NUMBER', 28, 'SPADES'),
    bid('NUMBER_SUIT', 28, 'HEARTS'),
  ];
  const view = (hand, highBid = null) => ({ seat: 0, hand_cards: cards(hand), high_bid: highBid });
  assert.equal(chooseCall(view('JS 9S AS KH'), calls, TEAMS), 0);
  assert.equal(chooseCall(view('JS 9S AS JH'), calls, TEAMS), 1); // holds the jack of spades: 28S
  assert.equal(chooseCall(view('9S AS TS JH JD'), calls, TEAMS), 2); // without it: S28
  assert.equal(chooseCall(view('JS 9S AS JH', { seat: 2 }), calls, TEAMS), 0); // partner holds the bid
  assert.equal(chooseCall(view('JS 9S AS JH', { seat: 1 }), calls, TEAMS), 1); // over an opponent
  assert.equal(chooseCall(view('JS 9S AS JH'), [PASS, bid('NUMBER_SUIT', 33, 'SPADES')], TEAMS), 0); // > 32
});

test('the play: the highest card, or the lowest when partner is winning; a trump counts higher', () => {
  const hand = cards('JH 9H 7H JC');
  const view = (winner) => ({ seat: 0, trump: 'DENOMINATION_CLUBS', trick_winner: winner });
  assert.equal(chooseCard(view(undefined), hand, TEAMS), 3); // JC: the trump jack
  assert.equal(chooseCard(view(1), hand, TEAMS), 3);
  assert.equal(chooseCard(view(2), hand, TEAMS), 2); // partner winning: 7H
  assert.equal(chooseCard(view(2), cards('JC JH'), TEAMS), 1); // low: the plain jack, keeping the trump
  assert.equal(chooseCard(view(1), cards('JH JC'), TEAMS), 1); // high: the trump jack
});

test('each seat its own team: the bot keeps what MatchStart said', () => {
  const bot = new SimpleBot();
  assert.equal(bot.describe().name, 'js-simple');
  bot.onMatchStart({ seat: 1, team_of_seats: [0, 1, 0, 1] });
  const moves = cards('KH 7H').map((played) => ({ move: 'card', card: played }));
  const view = { seat: 1, phase: 'PHASE_PLAY', trump: 'DENOMINATION_SPADES' };
  assert.equal(bot.decide({ ...view, trick_winner: 3 }, moves), 1); // seat 3 is its partner
  assert.equal(bot.decide({ ...view, trick_winner: 2 }, moves), 0);
  assert.throws(() => bot.decide(view, []), /no structured moves/);
});
