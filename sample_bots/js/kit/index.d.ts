// The JavaScript kit for 56 bots: what a bot implements and what the kit exports. The messages are in
// messages.d.ts, generated from bot.proto.

import type {
  Card,
  DealEnd,
  DecisionRequest,
  Denomination,
  MatchEnd,
  MatchStart,
  Move,
  Ruleset,
  View,
} from './messages';

export * from './messages';

/** The protocol version this kit speaks. */
export declare const PROTOCOL_VERSION: 1;

/** Who the bot is and what it plays: the handshake's answer. */
export interface BotDescription {
  /** The bot's name, as shown in standings and logs. */
  name: string;
  /** Its own version string (default "0.1.0"). */
  version?: string;
  /** Who wrote it. */
  author?: string;
  /** The player counts it plays, some of 4, 6 and 8 (default all). */
  player_counts?: number[];
  /** The rulesets it plays (default [], every ruleset). */
  rulesets?: Array<Exclude<Ruleset, 'RULESET_UNSPECIFIED'>>;
}

/** A move chosen: its index in `moves` (the same in `decision.legal_moves`), or its notation. */
export type Choice = number | string;

/**
 * A bot. Every seat gets its own (see `BotSource`), so what a hook keeps on `this` is that seat's state.
 * A hook may return a promise; the kit then waits for it before the seat's next message.
 */
export interface Bot {
  /** The handshake: called once, when the server starts. */
  describe(): BotDescription;
  /**
   * Choose a move: `moves[i]` is a `{move: 'card', card}` in the play or a `{move: 'call', call}` in the
   * auction; return `i` (or the move's notation). `decision` has the id, the notation and the time left.
   */
  decide(view: View, moves: Move[], decision: DecisionRequest): Choice | Promise<Choice>;
  /** Called once, before the first decision of the match. */
  onMatchStart?(start: MatchStart): void | Promise<void>;
  /** Called after every deal, with every hand of it (now public). */
  onDealEnd?(dealEnd: DealEnd): void | Promise<void>;
  /** Called once when the match is over. */
  onMatchEnd?(matchEnd: MatchEnd): void | Promise<void>;
}

/**
 * What `serve` takes: a class (each seat gets `new Bot()`), a factory (each seat gets `factory()`) or an
 * object (each seat gets `Object.create(bot)`, so what a hook assigns to `this` is the seat's own).
 */
export type BotSource = Bot | (new () => Bot) | (() => Bot);

/** Where to listen: a port on a host, or a Unix-domain socket. */
export interface ServeOptions {
  /** The port (default 0 for `start`, a free one; 50051 on the command line). */
  port?: number;
  /** The address to listen on (default 127.0.0.1). */
  host?: string;
  /** Once listening, write the port here (atomically): how an arena that started the bot learns it. */
  portFile?: string;
  /** Listen on this Unix-domain socket instead of a port (a sandboxed bot has no network). */
  socket?: string;
}

/** A running bot server. */
export interface BotServer {
  /** The port it listens on; undefined on a socket. */
  readonly port: number | undefined;
  /** The socket it listens on; undefined on a port. */
  readonly socket: string | undefined;
  /**
   * Stop serving (the health service says NOT_SERVING first), letting conversations in progress end
   * within `graceMs` (default 1000) before cutting them.
   */
  stop(graceMs?: number): Promise<{ forced: boolean }>;
}

/** Start serving `bot` and resolve once it listens (for tests and scripts; `serve` for a bot's main). */
export declare function start(bot: BotSource, options?: ServeOptions): Promise<BotServer>;

/**
 * Serve `bot` until SIGTERM or SIGINT stop it gracefully, on the options of the command line unless
 * given (`--port`, `--host`, `--port-file`, `--socket`). A bot that cannot start logs why and exits 1.
 */
export declare function serve(bot: BotSource, options?: ServeOptions): Promise<BotServer>;

/** The options of `start` from command-line arguments; throws on a bad one. */
export declare function parseCommandLine(argv: readonly string[]): ServeOptions | { help: true };

/** This process's command-line options; prints the usage and exits on --help (0) or a bad option (2). */
export declare function commandLine(argv?: readonly string[]): ServeOptions;

/** Log one event as a JSON line on stderr, as the kit does (`{"event": ..., ...fields}`). */
export declare function log(event: string, fields?: Record<string, unknown>): void;

/** Whether `card` is a trump under `trump` (the view's `trump`, or a bid's `denomination`). */
export declare function isTrump(card: Card, trump: Denomination): boolean;
