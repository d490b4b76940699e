// The JavaScript kit for 56 bots: `serve(bot)` does the plumbing (the gRPC server, the health service, the
// handshake, one conversation per seat, answers by index, logs, the command line, SIGTERM), so a bot is
// an object with `describe()` and `decide(view, moves, decision)` and nothing else to write.
//
// The messages a bot sees are bot.proto's, decoded by @grpc/proto-loader into plain objects (LOADER_OPTIONS
// below; messages.d.ts declares every one): field names as in the .proto, enums by name, cards as
// {suit, rank, points}, uint64 decision ids as strings (exact beyond 2^53).

'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { HealthImplementation } = require('grpc-health-check');
const { PROTO_FILE, protoRoot } = require('./protos');

const PROTOCOL_VERSION = 1;
const SERVICE_NAME = 'fiftysix.v1.BotService';
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
const STOP_GRACE_MS = 1000;
const PLAYER_COUNTS = [4, 6, 8];

// keepCase: field names exactly as in the .proto (decision_id, legal_moves, hand_cards, ...).
// longs: String: a uint64 arrives as a string and is echoed back unchanged.
// enums: String: enum values arrive by name (PHASE_PLAY, SUIT_SPADES, ...); their numbers are exported.
// defaults, arrays: absent scalars read as 0, '' or false, absent lists as [], absent messages as null.
// oneofs: a field names the member of each oneof that is set (request.event, move.move); a proto3
//   `optional` field (view.trick_winner) is undefined when absent.
const LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  oneofs: true,
};

const DEFINITION = protoLoader.loadSync(PROTO_FILE, { ...LOADER_OPTIONS, includeDirs: [protoRoot()] });
const PACKAGE = 'fiftysix.v1.';

// Every enum of the protocol as its numbers by name (Rank.RANK_JACK is 1), read from the .proto itself.
const isEnum = (definition) => definition.format === 'Protocol Buffer 3 EnumDescriptorProto';
const ENUMS = Object.fromEntries(
  Object.entries(DEFINITION)
    .filter(([name, definition]) => name.startsWith(PACKAGE) && isEnum(definition))
    .map(([name, definition]) => [
      name.slice(PACKAGE.length),
      Object.freeze(Object.fromEntries(definition.type.value.map((value) => [value.name, value.number]))),
    ]),
);

// Whether a card is a trump: Suit and Denomination share their numbers (SUIT_SPADES and DENOMINATION_SPADES
// are both 1), and no trumps matches no suit.
function isTrump(card, trump) {
  return ENUMS.Suit[card.suit] === ENUMS.Denomination[trump];
}

// ---------------------------------------------------------------------------------------------------
// Logging: one JSON object per line on stderr (what the arena keeps of a bot's output).

function log(event, fields = {}) {
  process.stderr.write(`${JSON.stringify({ event, ...fields })}\n`);
}

// ---------------------------------------------------------------------------------------------------
// The bot: every seat gets its own, so what a hook keeps on `this` is that seat's state.

// A bot is a class (each seat gets `new Bot()`), a factory (each seat gets `factory()`), or an object
// (each seat gets `Object.create(bot)`: what a hook assigns to `this` is the seat's own).
function seatBots(bot) {
  if (typeof bot === 'function') {
    const isClass =
      typeof bot.prototype?.decide === 'function' || /^class\b/.test(Function.prototype.toString.call(bot));
    return isClass ? () => new bot() : () => bot();
  }
  if (bot !== null && typeof bot === 'object') return () => Object.create(bot);
  throw new TypeError(`serve() needs a bot object, a bot class or a factory of bots, got ${String(bot)}`);
}

// The handshake's answer, checked once at start so a mistake stops the bot with one clear line.
function descriptionOf(bot) {
  if (typeof bot?.decide !== 'function') {
    throw new TypeError('a bot needs a decide(view, moves, decision) method');
  }
  if (typeof bot.describe !== 'function') throw new TypeError('a bot needs a describe() method');
  const described = bot.describe() ?? {};
  const description = {
    name: described.name,
    version: described.version ?? '0.1.0',
    author: described.author ?? '',
    player_counts: described.player_counts ?? PLAYER_COUNTS,
    rulesets: described.rulesets ?? [],
    protocol_version: PROTOCOL_VERSION,
  };
  if (typeof description.name !== 'string' || description.name === '') {
    throw new TypeError('describe() must give the bot a name: {name: "my-bot", ...}');
  }
  for (const key of ['version', 'author']) {
    if (typeof description[key] !== 'string') throw new TypeError(`describe()'s ${key} must be a string`);
  }
  const counts = description.player_counts;
  const fits = Array.isArray(counts) && counts.length > 0 && counts.every((n) => PLAYER_COUNTS.includes(n));
  if (!fits) {
    const got = JSON.stringify(counts);
    throw new TypeError(`describe()'s player_counts must be some of 4, 6 and 8, got ${got}`);
  }
  const rulesets = Object.keys(ENUMS.Ruleset).filter((name) => ENUMS.Ruleset[name] !== 0);
  const given = description.rulesets;
  if (!Array.isArray(given) || !given.every((name) => rulesets.includes(name))) {
    throw new TypeError(
      `describe()'s rulesets must be some of ${rulesets.join(', ')} ([] for all), ` +
        `got ${JSON.stringify(given)}`,
    );
  }
  return description;
}

// ---------------------------------------------------------------------------------------------------
// One seat's conversation (one PlaySeat stream).

class ProtocolError extends Error {}

// The legal move a notation names (any letter case, `10` for the ten), or -1.
function indexOfNotation(notation, legalMoves) {
  const wanted = notation.trim().toUpperCase().replace(/^10(?=[SHDC]$)/, 'T');
  return legalMoves.findIndex((move) => move.toUpperCase() === wanted);
}

class Conversation {
  constructor(bot, logger) {
    this.bot = bot;
    this.log = logger;
    this.started = false;
    this.seat = -1;
    this.matchId = '';
  }

  // The response to send, or null when the event expects none.
  async handle(request) {
    const event = request.event;
    if (event === 'match_start') {
      if (this.started) throw new ProtocolError('a second match_start on one stream');
      const start = request.match_start;
      this.started = true;
      this.seat = start.seat;
      this.matchId = start.match_id;
      await this.bot.onMatchStart?.(start);
      return { ready: {} };
    }
    if (event === undefined) {
      // A newer arena's event this kit does not know: nothing in it needs an answer from us.
      this.log('arena_message_ignored', { seat: this.seat, match_id: this.matchId });
      return null;
    }
    if (!this.started) throw new ProtocolError(`${event} before match_start`);
    if (event === 'decision') return { move: await this.decide(request.decision) };
    if (event === 'deal_end') await this.bot.onDealEnd?.(request.deal_end);
    else if (event === 'match_end') await this.bot.onMatchEnd?.(request.match_end);
    else throw new ProtocolError(`unknown event ${JSON.stringify(event)}`);
    return null;
  }

  async decide(decision) {
    if (decision.view === null) throw new ProtocolError('a decision without a view');
    const choice = await this.bot.decide(decision.view, decision.moves, decision);
    // The same count in both lists (moves[i] is legal_moves[i]).
    const count = Math.max(decision.moves.length, decision.legal_moves.length);
    const answer = { decision_id: decision.decision_id };
    if (typeof choice === 'number') {
      if (!Number.isInteger(choice) || choice < 0 || choice >= count) {
        throw new RangeError(`decide() returned ${choice}: the index of a move is 0 to ${count - 1}`);
      }
      return { ...answer, move_index: choice };
    }
    if (typeof choice !== 'string') {
      throw new TypeError(`decide() must return the index of a move or its notation, got ${String(choice)}`);
    }
    const index = indexOfNotation(choice, decision.legal_moves);
    if (index >= 0) return { ...answer, move_index: index };
    // Not a legal move: sent as it is, and the arena records the fault.
    this.log('bot_chose_illegal_move', { move: choice, seat: this.seat, match_id: this.matchId });
    return { ...answer, notation: choice };
  }
}

function seatHandler(makeBot, logger) {
  return (call) => {
    let closed = false;
    let queue = Promise.resolve();
    const finish = () => {
      if (closed) return;
      closed = true;
      call.end();
    };
    const fail = (code, error) => {
      if (closed) return;
      closed = true;
      // On a server stream, emitting 'error' ends the call with that status.
      call.emit('error', { code, details: String(error?.message ?? error), ours: true });
    };
    let conversation;
    try {
      conversation = new Conversation(makeBot(), logger);
    } catch (error) {
      logger('bot_failed', { error: String(error?.stack ?? error) });
      fail(grpc.status.INTERNAL, error);
      return;
    }
    // One message at a time, in order, even when a hook is async.
    const take = async (request) => {
      if (closed) return;
      let response;
      try {
        response = await conversation.handle(request);
      } catch (error) {
        const protocol = error instanceof ProtocolError;
        logger(protocol ? 'arena_message_rejected' : 'bot_failed', {
          error: protocol ? error.message : String(error?.stack ?? error),
          seat: conversation.seat,
          match_id: conversation.matchId,
        });
        fail(protocol ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL, error);
        return;
      }
      if (closed) return;
      if (response !== null) call.write(response);
      // After MatchEnd the bot ends its side of the stream.
      if (request.event === 'match_end') finish();
    };
    call.on('data', (request) => {
      queue = queue.then(() => take(request));
    });
    // The arena stopped writing without a MatchEnd: end our side too, once the messages before are done.
    call.on('end', () => {
      queue = queue.then(finish);
    });
    // The arena went away (match over or aborted, arena stopped): nothing more to send.
    call.on('cancelled', () => {
      closed = true;
    });
    call.on('error', (error) => {
      if (!error || error.ours || error.code === grpc.status.CANCELLED) return;
      const detail = String(error.details ?? error.message ?? error);
      logger('stream_error', { error: detail, seat: conversation.seat });
    });
  };
}

// ---------------------------------------------------------------------------------------------------
// The server.

// A running bot server: `port` (undefined on a socket) or `socket`, and `stop()`.
class BotServer {
  constructor(server, health, port, socket) {
    this.server = server;
    this.health = health;
    this.port = port;
    this.socket = socket;
  }

  // Stop serving (health turns NOT_SERVING first), letting conversations in progress end within `graceMs`,
  // then cutting them; resolves to {forced} once stopped.
  stop(graceMs = STOP_GRACE_MS) {
    for (const service of ['', SERVICE_NAME]) this.health.setStatus(service, 'NOT_SERVING');
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve({ forced: true });
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve({ forced: false });
      });
    });
  }
}

// Write `port` to `file` atomically (a temporary file beside it, then a rename): how an arena that started
// the bot with `--port 0` learns its port.
function writePortFile(file, port) {
  const partial = `${file}.${process.pid}.partial`;
  fs.writeFileSync(partial, `${port}\n`, 'ascii');
  fs.renameSync(partial, file);
}

// Start serving `bot` and resolve once it listens: on `host`:`port` (port 0 picks a free one, written to
// `portFile` when given) or on the Unix-domain socket `socket` (how a sandboxed bot, with no network, is
// reached).
async function start(bot, { port = 0, host = '127.0.0.1', portFile, socket } = {}) {
  const makeBot = seatBots(bot);
  const description = descriptionOf(makeBot());
  const logger = (event, fields = {}) => log(event, { bot: description.name, ...fields });
  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  });
  const service = grpc.loadPackageDefinition(DEFINITION).fiftysix.v1.BotService.service;
  server.addService(service, {
    Describe: (call, callback) => callback(null, description),
    PlaySeat: seatHandler(makeBot, logger),
  });
  // The standard gRPC health service, which the arena checks before a match.
  const health = new HealthImplementation({ '': 'SERVING', [SERVICE_NAME]: 'SERVING' });
  health.addToServer(server);
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const where = socket === undefined ? `${bracketed}:${port}` : `unix:${socket}`;
  const bound = await new Promise((resolve, reject) => {
    server.bindAsync(where, grpc.ServerCredentials.createInsecure(), (error, boundPort) =>
      error ? reject(new Error(`cannot listen on ${where}: ${error.message}`)) : resolve(boundPort),
    );
  });
  if (socket === undefined) {
    if (portFile !== undefined) writePortFile(portFile, bound);
    logger('bot_serving', { host, port: bound });
    return new BotServer(server, health, bound, undefined);
  }
  logger('bot_serving', { socket });
  return new BotServer(server, health, undefined, socket);
}

// ---------------------------------------------------------------------------------------------------
// The command line every kit bot takes.

class UsageError extends Error {}

const USAGE = `usage: node BOT.js [--port N] [--host HOST] [--port-file FILE] [--socket PATH]
  --port N          port to listen on (default 50051; 0 picks a free port)
  --host HOST       address to listen on (default 127.0.0.1)
  --port-file FILE  once listening, write the port to FILE (with --port 0: how an arena learns it)
  --socket PATH     listen on this Unix-domain socket instead of a port (sandboxed bots)
`;

// The options of `start` from command-line arguments; throws UsageError on a bad one.
function parseCommandLine(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string', default: '50051' },
        host: { type: 'string', default: '127.0.0.1' },
        'port-file': { type: 'string' },
        socket: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    throw new UsageError(error.message);
  }
  if (values.help) return { help: true };
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535) {
    throw new UsageError(`--port needs a number from 0 to 65535, got ${JSON.stringify(values.port)}`);
  }
  if (values.socket !== undefined && values['port-file'] !== undefined) {
    throw new UsageError('--port-file needs a port: it cannot go with --socket');
  }
  return { port, host: values.host, portFile: values['port-file'], socket: values.socket };
}

// The options of this process's command line; prints the usage and exits on --help (0) or a bad one (2).
function commandLine(argv = process.argv.slice(2)) {
  const program = path.basename(process.argv[1] ?? 'bot');
  try {
    const options = parseCommandLine(argv);
    if (!options.help) return options;
    process.stdout.write(`Serve a bot for 56 over gRPC.\n\n${USAGE.replace('BOT.js', program)}`);
    process.exit(0);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${program}: error: ${error.message}\n`);
    process.exit(2);
  }
}

// Serve `bot` until SIGTERM or SIGINT, which stop it gracefully (exit 0); with the options of the command
// line unless given. A bot that cannot start logs why and exits 1.
async function serve(bot, options = commandLine()) {
  let server;
  try {
    server = await start(bot, options);
  } catch (error) {
    log('bot_failed_to_start', { error: error.message, port: options.port, socket: options.socket });
    process.exit(1);
  }
  let stopping = false;
  const stop = async (signal) => {
    if (stopping) return;
    stopping = true;
    log('bot_stopping', { signal });
    const { forced } = await server.stop();
    log('bot_stopped', { forced });
    process.exit(0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return server;
}

module.exports = {
  PROTOCOL_VERSION,
  ...ENUMS,
  commandLine,
  isTrump,
  log,
  parseCommandLine,
  serve,
  start,
};
