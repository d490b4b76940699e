#!/usr/bin/env node
// js-simple: a sample 56 bot in JavaScript, served over gRPC from the arena's own .proto file.
//
// It proves the protocol works from protos/fiftysix/v1/bot.proto alone (no SDK, no generated code): the
// file is loaded at start-up with @grpc/proto-loader and served with @grpc/grpc-js.
//
// Run it: `npm ci && node bot.js --port 50051` (or `npm start -- --port 50051`).
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
//   (request.event is 'match_start', 'decision', 'deal_end' or 'match_end').
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

// Ranks high to low (docs/rules.md#rank-and-points); a lower index is a higher card.
const RANK_ORDER = 'J9ATKQ87';
const SUITS = 'SHDC';
const POINTS = { J: 3, 9: 2, A: 1, T: 1 };
const TRUMP_OF_DENOMINATION = {
  DENOMINATION_SPADES: 'S',
  DENOMINATION_HEARTS: 'H',
  DENOMINATION_DIAMONDS: 'D',
  DENOMINATION_CLUBS: 'C',
};

// ---------------------------------------------------------------------------------------------------
// Logging: one JSON object per line on stderr, like the Python bots.

function log(event, fields = {}) {
  process.stderr.write(`${JSON.stringify({ event, bot: BOT_NAME, ...fields })}\n`);
}

// ---------------------------------------------------------------------------------------------------
// Cards.

const rankOf = (card) => card[0];
const suitOf = (card) => card[1];
const rankIndex = (card) => RANK_ORDER.indexOf(rankOf(card));
const pointsOf = (card) => POINTS[rankOf(card)] || 0;

// The trump suit of the contract ('S', 'H', 'D', 'C'), or null for no trumps or no contract yet.
function trumpOf(view) {
  const contract = view.contract;
  return (contract && TRUMP_OF_DENOMINATION[contract.denomination]) || null;
}

// The play currently winning the trick on the table, or null if it is empty
// (docs/rules.md#who-wins-a-trick).
function winningPlay(trick, trump) {
  let best = null;
  for (const play of trick) {
    if (best === null) {
      best = play;
      continue;
    }
    const card = play.card;
    const bestCard = best.card;
    if (suitOf(card) === suitOf(bestCard)) {
      // Strictly higher: of two identical cards the one played first wins.
      if (rankIndex(card) < rankIndex(bestCard)) best = play;
    } else if (trump !== null && suitOf(card) === trump) {
      best = play;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------------
// Decisions: each returns an index into legal_moves.

// Parse a plain suit bid: `28S` (holds the jack) or `S28` (no jack). Other forms give null.
function parseSuitBid(call) {
  let match = /^(\d+)([SHDC])$/.exec(call);
  if (match) return { number: Number(match[1]), suit: match[2], withJack: true };
  match = /^([SHDC])(\d+)$/.exec(call);
  if (match) return { number: Number(match[2]), suit: match[1], withJack: false };
  return null;
}

// The suit with the most cards; ties go to the one with more points, then to the first in S H D C.
function longestSuit(hand) {
  let best = null;
  let bestKey = null;
  for (const suit of SUITS) {
    const cards = hand.filter((card) => suitOf(card) === suit);
    const key = [cards.length, cards.reduce((sum, card) => sum + pointsOf(card), 0)];
    if (bestKey === null || key[0] > bestKey[0] || (key[0] === bestKey[0] && key[1] > bestKey[1])) {
      best = suit;
      bestKey = key;
    }
  }
  return best;
}

function chooseCall(view, legal, teamOf) {
  const passIndex = legal.indexOf('pass');
  const fallback = passIndex >= 0 ? passIndex : 0;
  const hand = view.hand;
  const jacks = hand.filter((card) => rankOf(card) === 'J').length;
  if (jacks < 2) return fallback;
  const highBid = view.high_bid;
  if (highBid && teamOf[highBid.seat] === teamOf[view.seat]) return fallback; // never bid over partner
  const suit = longestSuit(hand);
  const holdsJack = hand.includes(`J${suit}`);
  let bestIndex = -1;
  let bestNumber = Infinity;
  legal.forEach((call, index) => {
    const bid = parseSuitBid(call);
    if (bid === null || bid.suit !== suit || bid.number > MAX_BID) return;
    // The lowest number; of its two forms, the one that tells partner the truth about the jack.
    if (bid.number < bestNumber || (bid.number === bestNumber && bid.withJack === holdsJack)) {
      bestIndex = index;
      bestNumber = bid.number;
    }
  });
  return bestIndex >= 0 ? bestIndex : fallback;
}

function chooseCard(view, legal, teamOf) {
  const trump = trumpOf(view);
  const winning = winningPlay(view.trick, trump);
  const partnerWinning =
    winning !== null && winning.seat !== view.seat && teamOf[winning.seat] === teamOf[view.seat];
  // Strength of a card: its rank first (J strongest, 7 weakest); of two cards of one rank the trump
  // counts as the higher, so playing low spends a plain card and playing high a trump.
  const strength = (card) => 2 * (RANK_ORDER.length - rankIndex(card)) + (suitOf(card) === trump ? 1 : 0);
  let bestIndex = 0;
  legal.forEach((card, index) => {
    const difference = strength(card) - strength(legal[bestIndex]);
    if (partnerWinning ? difference < 0 : difference > 0) bestIndex = index;
  });
  return bestIndex;
}

function decide(view, legal, teamOf) {
  if (legal.length === 0) throw new Error('a decision with no legal moves');
  if (view.phase === 'PHASE_PLAY') return chooseCard(view, legal, teamOf);
  return chooseCall(view, legal, teamOf);
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
        const index = decide(decision.view, decision.legal_moves, this.teamOf);
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
  const definition = protoLoader.loadSync(PROTO_FILE, LOADER_OPTIONS);
  return grpc.loadPackageDefinition(definition).fiftysix.v1.BotService.service;
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

module.exports = { chooseCall, chooseCard, decide, longestSuit, winningPlay, Seat };

if (require.main === module) {
  main();
}
