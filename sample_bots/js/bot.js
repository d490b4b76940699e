#!/usr/bin/env node
// js-simple: a sample 56 bot in JavaScript, served over gRPC from the arena's own .proto file.
//
// It proves the protocol works from protos/fiftysix/v1/bot.proto alone (no SDK, no generated code): the
// file is loaded at start-up with @grpc/proto-loader and served with @grpc/grpc-js.
//
// Run it: `npm ci && node bot.js --port 50051` (or `npm start -- --port 50051`).
//
// It picks its move from the structured moves (DecisionRequest.moves: Card and Call values with enums)
// and reads the trump and the trick's winner from the View, so it parses no notation but its hand.
//
// Strategy (simple on purpose):
// - Auction: pass unless the hand holds at least two jacks; then bid the lowest legal bid in the longest
//   suit (`28S` form when holding that suit's jack, `S28` otherwise), never above MAX_BID and never over a
//   partner's bid. Never doubles or redoubles.
// - Play: when a partner is winning the trick, play the lowest-ranked legal card; otherwise the
//   highest-ranked one (rank order J 9 A T K Q 8 7).

'use strict';

const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { HealthImplementation } = require('grpc-health-check');

const BOT_NAME = 'js-simple';
const BOT_VERSION = '1.0.0';
const PROTOCOL_VERSION = 1;

// The contract, loaded as it is from the repository (protos/ is the include root, as for protoc).
const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'protos');
const PROTO_FILE = 'fiftysix/v1/bot.proto';

// keepCase: field names exactly as in the .proto (decision_id, legal_moves, ...).
// longs: String: uint64 decision_id arrives as a string and is echoed back unchanged.
// enums: String: enum values arrive by name (PHASE_AUCTION, DENOMINATION_SPADES, ...).
// oneofs: true: a message with a oneof gets a virtual field naming the member that is set
//   (request.event is 'match_start', 'decision', 'deal_end' or 'match_end'); a proto3 `optional` field
//   (view.trick_winner) is undefined when absent.
const LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

// The highest number this bot ever bids (a contract of 28-39 costs 2 tables when lost, 40 or more 3).
const MAX_BID = 32;

// The contract, loaded once: the service for the server, the enums for the strategy.
const DEFINITION = protoLoader.loadSync(PROTO_FILE, LOADER_OPTIONS);

// An enum's numbers by name, from the .proto itself (enums arrive by name, see LOADER_OPTIONS).
function enumNumbers(name) {
  const numbers = {};
  for (const value of DEFINITION[`fiftysix.v1.${name}`].type.value) numbers[value.name] = value.number;
  return numbers;
}

// Rank numbers go high to low (docs/rules.md#rank-and-points; RANK_JACK 1 .. RANK_SEVEN 8: a lower number
// is a higher card); Suit and Denomination share their numbers, so a card's suit is trumps when the two
// numbers are equal.
const RANK = enumNumbers('Rank');
const SUIT = enumNumbers('Suit');
const DENOMINATION = enumNumbers('Denomination');
const SUITS = ['SUIT_SPADES', 'SUIT_HEARTS', 'SUIT_DIAMONDS', 'SUIT_CLUBS'];
const POINTS = { RANK_JACK: 3, RANK_NINE: 2, RANK_ACE: 1, RANK_TEN: 1 };

// The hand is the one list this bot reads in notation (`JS`, `9H`, `TD`: View.hand has no structured
// form); it is read into the shape of a structured Card.
const SUIT_OF_LETTER = { S: 'SUIT_SPADES', H: 'SUIT_HEARTS', D: 'SUIT_DIAMONDS', C: 'SUIT_CLUBS' };
const RANK_OF_LETTER = {
  J: 'RANK_JACK',
  9: 'RANK_NINE',
  A: 'RANK_ACE',
  T: 'RANK_TEN',
  K: 'RANK_KING',
  Q: 'RANK_QUEEN',
  8: 'RANK_EIGHT',
  7: 'RANK_SEVEN',
};
const cardOfText = (text) => ({ rank: RANK_OF_LETTER[text[0]], suit: SUIT_OF_LETTER[text[1]] });

// ---------------------------------------------------------------------------------------------------
// Logging: one JSON object per line on stderr, like the Python bots.

function log(event, fields = {}) {
  process.stderr.write(`${JSON.stringify({ event, bot: BOT_NAME, ...fields })}\n`);
}

// ---------------------------------------------------------------------------------------------------
// Decisions: each returns an index into the decision's `moves`, which is the same index in `legal_moves`.

// The suit with the most cards; ties go to the one with more points, then to the first in S H D C.
function longestSuit(hand) {
  let best = null;
  let bestKey = null;
  for (const suit of SUITS) {
    const cards = hand.filter((card) => card.suit === suit);
    const key = [cards.length, cards.reduce((sum, card) => sum + (POINTS[card.rank] || 0), 0)];
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
  const hand = view.hand.map(cardOfText);
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
    if (DENOMINATION[call.denomination] !== SUIT[suit] || call.contract_number > MAX_BID) return;
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
  const partnerWinning =
    typeof winner === 'number' && winner !== view.seat && teamOf[winner] === teamOf[view.seat];
  const trump = DENOMINATION[view.trump];
  // Strength of a card: its rank first (J strongest, 7 weakest); of two cards of one rank the trump
  // counts as the higher, so playing low spends a plain card and playing high a trump.
  const strength = (card) =>
    2 * (RANK.RANK_SEVEN + 1 - RANK[card.rank]) + (SUIT[card.suit] === trump ? 1 : 0);
  let bestIndex = 0;
  cards.forEach((card, index) => {
    const difference = strength(card) - strength(cards[bestIndex]);
    if (partnerWinning ? difference < 0 : difference > 0) bestIndex = index;
  });
  return bestIndex;
}

// Chooses from the structured moves, not the notation: a Card each in the play, a Call each in the auction.
function decide(view, moves, teamOf) {
  if (moves.length === 0) throw new Error('a decision with no structured moves');
  if (view.phase === 'PHASE_PLAY') return chooseCard(view, moves.map((move) => move.card), teamOf);
  return chooseCall(view, moves.map((move) => move.call), teamOf);
}

// ---------------------------------------------------------------------------------------------------
// One seat's conversation (one PlaySeat stream): its own state, nothing shared with other seats.

class ProtocolError extends Error {}

class Seat {
  constructor() {
    this.started = false;
    this.seat = -1;
    this.teamOf = [];
    this.matchId = '';
  }

  // Returns the response to send, or null when the event expects none.
  handle(request) {
    switch (request.event) {
      case 'match_start': {
        const start = request.match_start;
        if (this.started) throw new ProtocolError('a second match_start on one stream');
        this.started = true;
        this.seat = start.seat;
        this.teamOf = start.team_of_seats;
        this.matchId = start.match_id;
        return { ready: {} };
      }
      case 'decision': {
        if (!this.started) throw new ProtocolError('decision before match_start');
        const decision = request.decision;
        const index = decide(decision.view, decision.moves, this.teamOf);
        return { move: { decision_id: decision.decision_id, move_index: index } };
      }
      case 'deal_end':
      case 'match_end':
        if (!this.started) throw new ProtocolError(`${request.event} before match_start`);
        return null;
      default:
        throw new ProtocolError(
          request.event ? `unknown event ${JSON.stringify(request.event)}` : 'a request with no event',
        );
    }
  }
}

function playSeat(call) {
  const seat = new Seat();
  let closed = false;

  const finish = () => {
    if (closed) return;
    closed = true;
    call.end();
  };
  const fail = (code, error) => {
    if (closed) return;
    closed = true;
    // On a server stream, emitting 'error' ends the call with that status.
    call.emit('error', { code, details: String(error.message || error), ours: true });
  };

  call.on('data', (request) => {
    if (closed) return;
    let response;
    try {
      response = seat.handle(request);
    } catch (error) {
      const protocol = error instanceof ProtocolError;
      log(protocol ? 'arena_message_rejected' : 'bot_failed', {
        error: protocol ? error.message : String(error.stack || error),
        seat: seat.seat,
        match_id: seat.matchId,
      });
      fail(protocol ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL, error);
      return;
    }
    if (response !== null) call.write(response);
    // After MatchEnd the bot ends its side of the stream.
    if (request.event === 'match_end') finish();
  });
  // The arena stopped writing without a MatchEnd: end our side too.
  call.on('end', finish);
  // The arena went away (match aborted, arena killed): nothing more to send.
  call.on('cancelled', () => {
    closed = true;
  });
  call.on('error', (error) => {
    if (!error || error.ours || error.code === grpc.status.CANCELLED) return;
    log('stream_error', { error: String(error.details || error.message || error), seat: seat.seat });
  });
}

function describe(call, callback) {
  callback(null, {
    name: BOT_NAME,
    version: BOT_VERSION,
    protocol_version: PROTOCOL_VERSION,
    player_counts: [4, 6, 8],
    rulesets: [], // every ruleset
    author: 'fiftysix arena',
  });
}

// ---------------------------------------------------------------------------------------------------
// The server.

function loadService() {
  return grpc.loadPackageDefinition(DEFINITION).fiftysix.v1.BotService.service;
}

function parseCommandLine(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: '50051' },
      host: { type: 'string', default: '127.0.0.1' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      'Serve the js-simple bot for 56 over gRPC.\n\n' +
        'usage: node bot.js [--port N] [--host HOST]\n' +
        '  --port N     port to listen on (default 50051; 0 picks a free port)\n' +
        '  --host HOST  address to listen on (default 127.0.0.1)\n',
    );
    process.exit(0);
  }
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535) {
    throw new Error(`--port needs a number from 0 to 65535, got ${JSON.stringify(values.port)}`);
  }
  return { port, host: values.host };
}

function main() {
  let options;
  try {
    options = parseCommandLine(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  });
  server.addService(loadService(), { Describe: describe, PlaySeat: playSeat });
  // The standard gRPC health service, which the arena checks before a match.
  const health = new HealthImplementation({ '': 'SERVING', 'fiftysix.v1.BotService': 'SERVING' });
  health.addToServer(server);
  const bracketed = options.host.includes(':') && !options.host.startsWith('[');
  const host = bracketed ? `[${options.host}]` : options.host;
  server.bindAsync(`${host}:${options.port}`, grpc.ServerCredentials.createInsecure(), (error, port) => {
    if (error) {
      log('bot_failed_to_start', { error: error.message, host: options.host, port: options.port });
      process.exit(1);
    }
    log('bot_serving', { host: options.host, port });
  });

  let stopping = false;
  const stop = (signal) => {
    if (stopping) return;
    stopping = true;
    health.setStatus('', 'NOT_SERVING');
    log('bot_stopping', { signal });
    const exit = (forced) => {
      log('bot_stopped', { forced });
      process.exit(0);
    };
    // Let conversations in progress end for a second, then cut them.
    const timer = setTimeout(() => {
      server.forceShutdown();
      exit(true);
    }, 1000);
    server.tryShutdown(() => {
      clearTimeout(timer);
      exit(false);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

module.exports = { chooseCall, chooseCard, decide, longestSuit, Seat };

if (require.main === module) {
  main();
}
