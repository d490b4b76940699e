// The kit against a real gRPC client on loopback: the handshake, one seat's conversation, answers by index
// and by notation, each seat's own bot, async hooks, faults, the socket and port file, the command line,
// and SIGTERM on a real bot process.

'use strict';

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, describe, test } = require('node:test');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const health = require('grpc-health-check');
const kit = require('../kit');

const PROTOS = path.join(__dirname, '..', '..', '..', 'protos');
const DEFINITION = protoLoader.loadSync('fiftysix/v1/bot.proto', {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  oneofs: true,
  includeDirs: [PROTOS],
});
const BotService = grpc.loadPackageDefinition(DEFINITION).fiftysix.v1.BotService;
const HealthClient = grpc.makeGenericClientConstructor(health.service, 'Health');

// The kit's log lines while `body` runs, parsed, instead of on stderr.
async function captureLogs(body) {
  const lines = [];
  const write = process.stderr.write;
  process.stderr.write = (text) => {
    lines.push(...String(text).trim().split('\n').map((line) => JSON.parse(line)));
    return true;
  };
  try {
    await body();
  } finally {
    process.stderr.write = write;
  }
  return lines;
}

// A unary call's answer.
function unary(client, method, request) {
  return new Promise((resolve, reject) =>
    client[method](request, (error, answer) => (error ? reject(error) : resolve(answer))),
  );
}

// A bot named `name` that always plays the first move.
const firstMove = (name) => ({ describe: () => ({ name }), decide: () => 0 });

// One seat's stream as the arena opens it: send requests, read answers in order, see how it ended.
class Stream {
  constructor(client) {
    this.call = client.PlaySeat();
    this.answers = [];
    this.waiting = [];
    this.call.on('data', (answer) => {
      const next = this.waiting.shift();
      if (next) next(answer);
      else this.answers.push(answer);
    });
    this.ended = new Promise((resolve) => {
      this.call.on('status', resolve);
      this.call.on('error', () => {}); // the status says it
    });
  }

  send(request) {
    this.call.write(request);
  }

  next() {
    if (this.answers.length > 0) return Promise.resolve(this.answers.shift());
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}

const card = (rank, suit, points = 0) => ({ rank: `RANK_${rank}`, suit: `SUIT_${suit}`, points });

function matchStart(seat = 0, matchId = 'm1') {
  return {
    match_start: {
      protocol_version: 1,
      match_id: matchId,
      rules: { players: 4, ruleset: 'RULESET_PAIRS', deal_cap: 0 },
      seat,
      team_of_seats: [0, 1, 0, 1],
      seat_names: ['a', 'b', 'c', 'd'],
      time_control: { decision_ms: 1000, bank_ms: 5000 },
    },
  };
}

function decision(id, seat = 0) {
  return {
    decision: {
      decision_id: id,
      view: {
        seat,
        phase: 'PHASE_PLAY',
        to_act: seat,
        hand: ['JH', 'TH', '7C'],
        hand_cards: [card('JACK', 'HEARTS', 3), card('TEN', 'HEARTS', 1), card('SEVEN', 'CLUBS')],
        trump: 'DENOMINATION_CLUBS',
      },
      legal_moves: ['JH', 'TH', '7C'],
      moves: [
        { card: card('JACK', 'HEARTS', 3) },
        { card: card('TEN', 'HEARTS', 1) },
        { card: card('SEVEN', 'CLUBS') },
      ],
      decision_ms: 1000,
      bank_ms: 5000,
    },
  };
}

const MATCH_END = { match_end: { reason: 'deal_cap', ranking: [1, 2], tables: [13, 11], faults: [] } };

// A bot whose every decision is `choose(view, moves, decision, bot)`; it records what its hooks saw.
function recordingBot(choose) {
  return class {
    describe() {
      return { name: 'recorder' };
    }
    onMatchStart(start) {
      this.seat = start.seat;
    }
    decide(view, moves, request) {
      return choose(view, moves, request, this);
    }
    onDealEnd(dealEnd) {
      recordingBot.seen.push(['deal_end', this.seat, dealEnd]);
    }
    onMatchEnd(matchEnd) {
      recordingBot.seen.push(['match_end', this.seat, matchEnd]);
    }
  };
}
recordingBot.seen = [];

// A server of `bot` for one test, and a client of it.
async function serving(bot, options = {}) {
  let server;
  const logs = await captureLogs(async () => {
    server = await kit.start(bot, { port: 0, ...options });
  });
  const address = server.socket === undefined ? `127.0.0.1:${server.port}` : `unix:${server.socket}`;
  const client = new BotService(address, grpc.credentials.createInsecure());
  return { server, client, address, logs, close: () => (client.close(), server.stop(0)) };
}

describe('the handshake', () => {
  test('describe() with its defaults, the protocol version, and the health service', async () => {
    const { client, address, close } = await serving(firstMove('plain'));
    try {
      assert.deepEqual(
        { ...(await unary(client, 'Describe', { protocol_version: 1 })) },
        {
          name: 'plain',
          version: '0.1.0',
          author: '',
          protocol_version: 1,
          player_counts: [4, 6, 8],
          rulesets: [],
        },
      ); // the defaults
      const checker = new HealthClient(address, grpc.credentials.createInsecure());
      for (const service of ['', 'fiftysix.v1.BotService']) {
        assert.equal((await unary(checker, 'Check', { service })).status, 'SERVING');
      }
      checker.close();
    } finally {
      await close();
    }
  });

  test('a bot that describes itself wrongly does not start, and says why', async () => {
    const cases = [
      [{ decide: () => 0 }, /describe\(\) method/],
      [{ describe: () => ({ name: 'x' }) }, /decide\(view, moves, decision\)/],
      [{ describe: () => ({}), decide: () => 0 }, /must give the bot a name/],
      [{ describe: () => ({ name: 'x', player_counts: [5] }), decide: () => 0 }, /of 4, 6 and 8, got \[5\]/],
      [{ describe: () => ({ name: 'x', rulesets: ['pairs'] }), decide: () => 0 }, /RULESET_PAIRS, RULESET_/],
      [{ describe: () => ({ name: 'x', version: 2 }), decide: () => 0 }, /version must be a string/],
      [42, /a bot object, a bot class or a factory/],
    ];
    for (const [bot, message] of cases) await assert.rejects(kit.start(bot, { port: 0 }), message);
  });
});

describe("a seat's conversation", () => {
  let bot;
  before(async () => {
    recordingBot.seen = [];
    bot = await serving(
      recordingBot((view, moves, request, self) => {
        const wanted = request.decision_id.slice(-2);
        if (wanted === '01') return 2; // an index
        if (wanted === '02') return 'th'; // a notation, any case
        if (wanted === '03') return '10h'; // the ten as 10
        if (wanted === '04') return 'QS'; // not legal: sent as it is
        if (wanted === '05') return Promise.resolve(self.seat); // async, and this seat's own state
        if (wanted === '06') return 3; // out of range
        if (wanted === '07') throw new Error('the bot is broken');
        return undefined;
      }),
    );
  });
  after(() => bot.close());

  test('Ready, each decision answered by index with its exact id, the end after MatchEnd', async () => {
    const stream = new Stream(bot.client);
    let answers;
    const logs = await captureLogs(async () => {
      stream.send(matchStart(2));
      assert.deepEqual((await stream.next()).answer, 'ready');
      answers = [];
      for (const last of '12345') {
        stream.send(decision(`1844674407370955160${last}`, 2)); // beyond 2^53, below 2^64
        answers.push((await stream.next()).move);
      }
      const hand = { seat: 0, cards: ['JH'], dealt_cards: [card('JACK', 'HEARTS', 3)] };
      stream.send({ deal_end: { deal_number: 1, hands: [hand] } });
      stream.send(MATCH_END);
      assert.equal((await stream.ended).code, grpc.status.OK);
    });
    assert.deepEqual(
      answers.map((answer) => [answer.decision_id, answer.choice, answer[answer.choice]]),
      [
        ['18446744073709551601', 'move_index', 2],
        ['18446744073709551602', 'move_index', 1],
        ['18446744073709551603', 'move_index', 1],
        ['18446744073709551604', 'notation', 'QS'],
        ['18446744073709551605', 'move_index', 2],
      ],
    );
    assert.deepEqual(
      logs.map((line) => line.event),
      ['bot_chose_illegal_move'],
    );
    const [dealEnd, matchEnd] = recordingBot.seen.filter(([, seat]) => seat === 2);
    assert.deepEqual(dealEnd[2].hands[0].dealt_cards, [card('JACK', 'HEARTS', 3)]);
    assert.equal(matchEnd[2].reason, 'deal_cap');
  });

  test('a bad answer or an exception ends the stream with INTERNAL and the reason', async () => {
    for (const [id, message] of [
      ['6', /decide\(\) returned 3: the index of a move is 0 to 2/],
      ['7', /the bot is broken/],
      ['8', /must return the index of a move or its notation, got undefined/],
    ]) {
      const stream = new Stream(bot.client);
      const logs = await captureLogs(async () => {
        stream.send(matchStart());
        await stream.next();
        stream.send(decision(`9000${id}`));
        const status = await stream.ended;
        assert.equal(status.code, grpc.status.INTERNAL);
        assert.match(status.details, message);
      });
      assert.deepEqual(logs.map((line) => [line.event, line.bot]), [['bot_failed', 'recorder']]);
    }
  });

  test('a decision before MatchStart is INVALID_ARGUMENT; an unknown event is ignored', async () => {
    const early = new Stream(bot.client);
    const logs = await captureLogs(async () => {
      early.send(decision('1'));
      assert.equal((await early.ended).code, grpc.status.INVALID_ARGUMENT);
      const stream = new Stream(bot.client);
      stream.send({});
      stream.send(matchStart());
      assert.equal((await stream.next()).answer, 'ready');
      stream.send(MATCH_END);
      assert.equal((await stream.ended).code, grpc.status.OK);
    });
    assert.deepEqual(
      logs.map((line) => line.event),
      ['arena_message_rejected', 'arena_message_ignored'],
    );
  });
});

describe('every seat its own bot', () => {
  for (const [kind, make] of [
    ['a class', (decide) => recordingBot(decide)],
    ['a factory', (decide) => () => new (recordingBot(decide))()],
    [
      'a class whose methods are fields',
      (decide) =>
        class {
          describe = () => ({ name: 'fields' });
          onMatchStart = (start) => {
            this.seat = start.seat;
          };
          decide = (view, moves, request) => decide(view, moves, request, this);
        },
    ],
    [
      'an object',
      (decide) => ({
        describe: () => ({ name: 'object' }),
        onMatchStart(start) {
          this.seat = start.seat;
        },
        decide(view, moves, request) {
          return decide(view, moves, request, this);
        },
      }),
    ],
  ]) {
    test(`${kind}: two seats at once, each its own state; a slow async decision keeps its turn`, async () => {
      // Each seat answers its own seat number; its first decision takes longer than its second.
      const slow = (request) => (request.decision_id.endsWith('1') ? 30 : 0);
      const bot = await serving(
        make(
          (view, moves, request, self) =>
            new Promise((resolve) => setTimeout(() => resolve(self.seat), slow(request))),
        ),
      );
      try {
        const streams = [new Stream(bot.client), new Stream(bot.client)];
        streams.forEach((stream, seat) => stream.send(matchStart(seat)));
        await Promise.all(streams.map((stream) => stream.next()));
        const answers = await Promise.all(
          streams.map(async (stream, seat) => {
            stream.send(decision(`${seat + 1}1`, seat));
            stream.send(decision(`${seat + 1}2`, seat));
            const moves = [(await stream.next()).move, (await stream.next()).move];
            return moves.map((move) => `${move.decision_id}:${move.move_index}`);
          }),
        );
        assert.deepEqual(answers, [
          ['11:0', '12:0'],
          ['21:1', '22:1'],
        ]);
      } finally {
        await bot.close();
      }
    });
  }
});

describe('where it listens', () => {
  test('a Unix-domain socket', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'kit-'));
    const socket = path.join(folder, 'bot.sock');
    const bot = await serving(firstMove('socketed'), { socket });
    try {
      assert.equal(bot.server.port, undefined);
      assert.deepEqual(bot.logs, [{ event: 'bot_serving', bot: 'socketed', socket }]);
      assert.equal((await unary(bot.client, 'Describe', {})).name, 'socketed');
    } finally {
      await bot.close();
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  test('port 0 and a port file, written whole', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'kit-'));
    const portFile = path.join(folder, 'port');
    const bot = await serving(firstMove('filed'), { portFile });
    try {
      assert.ok(bot.server.port > 0);
      assert.equal(fs.readFileSync(portFile, 'ascii'), `${bot.server.port}\n`);
      assert.deepEqual(fs.readdirSync(folder), ['port']);
    } finally {
      await bot.close();
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  test('the command line', () => {
    assert.deepEqual(kit.parseCommandLine([]), {
      port: 50051,
      host: '127.0.0.1',
      portFile: undefined,
      socket: undefined,
    });
    assert.deepEqual(kit.parseCommandLine(['--port', '0', '--port-file', '/tmp/p', '--host', '::1']), {
      port: 0,
      host: '::1',
      portFile: '/tmp/p',
      socket: undefined,
    });
    assert.equal(kit.parseCommandLine(['--socket', '/tmp/s']).socket, '/tmp/s');
    assert.deepEqual(kit.parseCommandLine(['-h']), { help: true });
    for (const [argv, message] of [
      [['--port', '65536'], /--port needs a number from 0 to 65535, got "65536"/],
      [['--port', '-1'], /--port/],
      [['--socket', '/s', '--port-file', '/p'], /cannot go with --socket/],
      [['--bogus'], /Unknown option '--bogus'/],
    ]) {
      assert.throws(() => kit.parseCommandLine(argv), message);
    }
  });
});

describe('a bot process', () => {
  const BOT = path.join(__dirname, '..', 'bot.js');

  function run(args) {
    const child = spawn(process.execPath, [BOT, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
    return { child, exited, stderr: () => stderr };
  }

  test('a bad option is one line and exit status 2', async () => {
    const { code, stderr } = await run(['--port', 'many']).exited;
    assert.equal(code, 2);
    assert.equal(stderr, 'bot.js: error: --port needs a number from 0 to 65535, got "many"\n');
  });

  test('SIGTERM mid-match: health goes, the open stream gets a second, the bot exits 0', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'kit-'));
    const portFile = path.join(folder, 'port');
    const bot = run(['--port', '0', '--port-file', portFile]);
    try {
      while (!fs.existsSync(portFile)) await new Promise((resolve) => setTimeout(resolve, 20));
      const port = Number(fs.readFileSync(portFile, 'ascii'));
      const client = new BotService(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      const stream = new Stream(client);
      stream.send(matchStart());
      assert.equal((await stream.next()).answer, 'ready');
      bot.child.kill('SIGTERM');
      const { code, stderr } = await bot.exited;
      assert.equal(code, 0);
      assert.notEqual((await stream.ended).code, grpc.status.OK);
      const events = stderr.trim().split('\n').map((line) => JSON.parse(line));
      assert.deepEqual(
        events.map((event) => event.event),
        ['bot_serving', 'bot_stopping', 'bot_stopped'],
      );
      assert.equal(events[2].forced, true);
      client.close();
    } finally {
      bot.child.kill('SIGKILL');
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});
