// Generated from protos/fiftysix/v1/bot.proto by `npm run types` (kit/generate-types.js): do not edit.
//
// Every message as the kit hands it to a bot: field names as in the .proto; enums by name (their numbers
// are the exported objects of the same name); uint64 as a string, exact beyond 2^53; a list always an
// array; an absent message null; a proto3 `optional` field undefined when absent; a oneof as a field
// naming the member that is set, beside that member.

/** The arena's half of the handshake. */
export interface DescribeRequest {
  /** The protocol version the arena speaks (this file describes version 1). */
  protocol_version: number;
  /** The arena's software version, for the bot's logs. */
  arena_version: string;
}

/** The bot's half of the handshake. */
export interface DescribeResponse {
  /** The bot's name, as shown in standings and logs. */
  name: string;
  /** The bot's own version string (free form, e.g. "1.2.0"). */
  version: string;
  /** The protocol version the bot speaks; the arena refuses a bot whose version it does not speak. */
  protocol_version: number;
  /**
   * The player counts the bot can play (a subset of 4, 6, 8); the arena refuses to seat a bot in a match
   * of any other size.
   */
  player_counts: number[];
  /** The rulesets the bot can play; empty means every ruleset. */
  rulesets: Ruleset[];
  /** Who wrote the bot (free form, optional). */
  author: string;
}

/** One message from the arena on a seat's stream. */
export type PlaySeatRequest =
  | {
      /** Exactly one event. */
      event: 'match_start';
      /** The first message: the match settings and the seat this stream plays. */
      match_start: MatchStart;
      decision?: undefined;
      deal_end?: undefined;
      match_end?: undefined;
    }
  | {
      /** Exactly one event. */
      event: 'decision';
      /** This seat must act: answer with one MoveAnswer. */
      decision: DecisionRequest;
      match_start?: undefined;
      deal_end?: undefined;
      match_end?: undefined;
    }
  | {
      /** Exactly one event. */
      event: 'deal_end';
      /** A deal has ended; every hand of it is now public. No answer is expected. */
      deal_end: DealEnd;
      match_start?: undefined;
      decision?: undefined;
      match_end?: undefined;
    }
  | {
      /** Exactly one event. */
      event: 'match_end';
      /** The match has ended; the arena closes the stream after this. No answer is expected. */
      match_end: MatchEnd;
      match_start?: undefined;
      decision?: undefined;
      deal_end?: undefined;
    }
;

/** One message from the bot on a seat's stream. */
export type PlaySeatResponse =
  | {
      /** Exactly one answer. */
      answer: 'ready';
      /** The answer to MatchStart: the bot is ready to play this seat. */
      ready: Ready;
      move?: undefined;
    }
  | {
      /** Exactly one answer. */
      answer: 'move';
      /** The answer to a DecisionRequest. */
      move: MoveAnswer;
      ready?: undefined;
    }
;

/** The two rulesets of docs/rules.md#rulesets. */
export declare const Ruleset: {
  /** Never sent; a reader that sees it should treat the message as malformed. */
  readonly RULESET_UNSPECIFIED: 0;
  /** Teams of two partners, players / 2 teams (the default; docs/rules.md#rulesets). */
  readonly RULESET_PAIRS: 1;
  /** Two fixed teams, team = seat mod 2 (docs/rules.md#rulesets). */
  readonly RULESET_PARTNERSHIP: 2;
};
/** The two rulesets of docs/rules.md#rulesets. */
export type Ruleset = keyof typeof Ruleset;

/** The settings of a match, told to every bot at its start. */
export interface MatchRules {
  /** Players at the start of the match: 4, 6 or 8. */
  players: number;
  /** The ruleset in force. */
  ruleset: Ruleset;
  /** The most deals the match will last; 0 means no cap. */
  deal_cap: number;
}

/** How much time a bot has for its decisions. */
export interface TimeControl {
  /** The time allowed for each decision, in milliseconds, before the bank is drawn on. */
  decision_ms: number;
  /**
   * The per-match bank of spare time, in milliseconds: time a decision takes beyond decision_ms is taken
   * from the bank, and a decision that outlasts both is a timeout.
   */
  bank_ms: number;
}

/** The start of a match, for one seat. */
export interface MatchStart {
  /** The protocol version of this conversation (the one the handshake agreed on). */
  protocol_version: number;
  /** The arena's id of this match, for logs. */
  match_id: string;
  /** The match settings. */
  rules: MatchRules | null;
  /** The seat this stream plays (0 .. players-1). */
  seat: number;
  /** The team of every seat, indexed by seat. */
  team_of_seats: number[];
  /** The name of the bot playing each seat, indexed by seat. */
  seat_names: string[];
  /** The time control of the match. */
  time_control: TimeControl | null;
}

/** The bot's answer to MatchStart. */
export interface Ready {
}

/** A request to act. */
export interface DecisionRequest {
  /** Identifies this decision within the stream; the answer must carry the same id. */
  decision_id: string;
  /** Everything this seat may know now. */
  view: View | null;
  /**
   * Every legal move, in canonical notation and in the engine's stable order. The answer must be one of
   * them, given by index or by notation.
   */
  legal_moves: string[];
  /** The time this decision may take before the bank is drawn on, in milliseconds. */
  decision_ms: number;
  /** The time left in this seat's bank, in milliseconds. */
  bank_ms: number;
  /**
   * The same legal moves as structured values, in the same order as legal_moves (moves[i] is
   * legal_moves[i]), for languages that would rather not parse notation. An answer still names its move
   * by index or by notation.
   */
  moves: Move[];
}

/** The four suits. The numbers match Denomination's, so a suit converts to its trump denomination as is. */
export declare const Suit: {
  /** Never sent. */
  readonly SUIT_UNSPECIFIED: 0;
  /** Spades. */
  readonly SUIT_SPADES: 1;
  /** Hearts. */
  readonly SUIT_HEARTS: 2;
  /** Diamonds. */
  readonly SUIT_DIAMONDS: 3;
  /** Clubs. */
  readonly SUIT_CLUBS: 4;
};
/** The four suits. The numbers match Denomination's, so a suit converts to its trump denomination as is. */
export type Suit = keyof typeof Suit;

/**
 * The eight ranks, highest first: a lower number is a higher card within its suit. Only the 8-player
 * pack holds eights and sevens (docs/rules.md, the cards).
 */
export declare const Rank: {
  /** Never sent. */
  readonly RANK_UNSPECIFIED: 0;
  /** The jack, highest: 3 points. */
  readonly RANK_JACK: 1;
  /** The nine: 2 points. */
  readonly RANK_NINE: 2;
  /** The ace: 1 point. */
  readonly RANK_ACE: 3;
  /** The ten: 1 point. */
  readonly RANK_TEN: 4;
  /** The king: no points. */
  readonly RANK_KING: 5;
  /** The queen: no points. */
  readonly RANK_QUEEN: 6;
  /** The eight: no points. */
  readonly RANK_EIGHT: 7;
  /** The seven, lowest: no points. */
  readonly RANK_SEVEN: 8;
};
/**
 * The eight ranks, highest first: a lower number is a higher card within its suit. Only the 8-player
 * pack holds eights and sevens (docs/rules.md, the cards).
 */
export type Rank = keyof typeof Rank;

/** A card as a structured value. */
export interface Card {
  /** Its suit. */
  suit: Suit;
  /** Its rank. */
  rank: Rank;
  /** Its card points: 3 for a jack, 2 for a nine, 1 for an ace or a ten, 0 otherwise. */
  points: number;
}

/** What a call does. */
export declare const CallKind: {
  /** Never sent. */
  readonly CALL_KIND_UNSPECIFIED: 0;
  /** Pass. */
  readonly CALL_KIND_PASS: 1;
  /** Double the opponents' bid. */
  readonly CALL_KIND_DOUBLE: 2;
  /** Redouble after a double of your own team's bid. */
  readonly CALL_KIND_REDOUBLE: 3;
  /** A bid: see form, number, contract_number and denomination. */
  readonly CALL_KIND_BID: 4;
};
/** What a call does. */
export type CallKind = keyof typeof CallKind;

/**
 * The six bid forms (docs/rules.md, the auction): the same contract may be bid in several forms, each a
 * different signal to the partner.
 */
export declare const BidForm: {
  /** Not a bid (pass, double, redouble). */
  readonly BID_FORM_UNSPECIFIED: 0;
  /** `28S`: the number then the suit; holds the jack of that suit. */
  readonly BID_FORM_NUMBER_SUIT: 1;
  /** `S28`: the suit then the number; strong in the suit without its jack. */
  readonly BID_FORM_SUIT_NUMBER: 2;
  /** `28NT`: no trumps; a strong hand with no particular suit. */
  readonly BID_FORM_NO_TRUMPS: 3;
  /** `28NOES`: no trumps; holds no card of the suit most recently named in a bid. */
  readonly BID_FORM_NOES: 4;
  /** `+2S`: the previous bid plus the number, that suit trumps; that many high cards of the suit. */
  readonly BID_FORM_PLUS_SUIT: 5;
  /** `+2NOES`: the previous bid plus two, no trumps; as noes. */
  readonly BID_FORM_PLUS_NOES: 6;
};
/**
 * The six bid forms (docs/rules.md, the auction): the same contract may be bid in several forms, each a
 * different signal to the partner.
 */
export type BidForm = keyof typeof BidForm;

/** A call of the auction as a structured value. */
export interface Call {
  /** What the call does. */
  kind: CallKind;
  /** For a bid, its form; unspecified otherwise. */
  form: BidForm;
  /**
   * For a bid, the number as called: the increment for the plus forms (2 in `+2S`), the contract
   * number otherwise; 0 when not a bid.
   */
  number: number;
  /** For a bid, the contract number it makes (for `+2S` over 30, 32); 0 when not a bid. */
  contract_number: number;
  /** For a bid, the trump suit it names or no trumps; unspecified when not a bid. */
  denomination: Denomination;
}

/** One legal move as a structured value: a card in the play, a call in the auction. */
export type Move =
  | {
      /** Exactly one of them. */
      move: 'card';
      /** A card to play. */
      card: Card;
      call?: undefined;
    }
  | {
      /** Exactly one of them. */
      move: 'call';
      /** A call to make. */
      call: Call;
      card?: undefined;
    }
;

/** The answer to a DecisionRequest. */
export type MoveAnswer = {
  /** The decision_id of the request being answered. */
  decision_id: string;
} & (
  | {
      /** The move chosen. */
      choice: 'move_index';
      /** The index of the move in DecisionRequest.legal_moves (from 0). */
      move_index: number;
      notation?: undefined;
    }
  | {
      /** The move chosen. */
      choice: 'notation';
      /** The move in notation (any letter case). */
      notation: string;
      move_index?: undefined;
    }
);

/** Where a deal stands. */
export declare const Phase: {
  /** Never sent. */
  readonly PHASE_UNSPECIFIED: 0;
  /** The auction is on: the seat to act makes a call. */
  readonly PHASE_AUCTION: 1;
  /** The tricks are being played: the seat to act plays a card. */
  readonly PHASE_PLAY: 2;
  /** The deal is over (seen only in the last view of a match). */
  readonly PHASE_FINISHED: 3;
};
/** Where a deal stands. */
export type Phase = keyof typeof Phase;

/** The trump suit of a bid or contract, or no trumps. */
export declare const Denomination: {
  /** Never sent. */
  readonly DENOMINATION_UNSPECIFIED: 0;
  /** Spades are trumps. */
  readonly DENOMINATION_SPADES: 1;
  /** Hearts are trumps. */
  readonly DENOMINATION_HEARTS: 2;
  /** Diamonds are trumps. */
  readonly DENOMINATION_DIAMONDS: 3;
  /** Clubs are trumps. */
  readonly DENOMINATION_CLUBS: 4;
  /** No trumps. */
  readonly DENOMINATION_NO_TRUMPS: 5;
};
/** The trump suit of a bid or contract, or no trumps. */
export type Denomination = keyof typeof Denomination;

/** A call made in the auction. */
export interface CallMade {
  /** The seat that made the call. */
  seat: number;
  /** The call in canonical notation. */
  call: string;
}

/** The highest bid of an auction so far. */
export interface Bid {
  /** The seat that made the bid. */
  seat: number;
  /** The bid as called, in canonical notation (for example `+2S`). */
  call: string;
  /** The number the bid makes (for a plus bid, the previous bid plus the increment). */
  number: number;
  /** The trump suit it names, or no trumps. */
  denomination: Denomination;
}

/** The contract an auction ended with. */
export interface Contract {
  /** The contract number, 28 to 56. */
  number: number;
  /** The trump suit, or no trumps. */
  denomination: Denomination;
  /** The seat that made the contract's bid (after an all-pass auction: the seat to the dealer's right). */
  bidder: number;
  /** The contracting team. */
  team: number;
  /** 1, 2 when doubled, 4 when redoubled. */
  doubling: number;
  /** The winning bid as called; empty when every player passed. */
  call: string;
  /** True when every player passed and the contract is the all-pass 28 no trumps. */
  all_pass: boolean;
  /** The seat that doubled; absent when the contract is not doubled. */
  doubler?: number;
  /** The seat that redoubled; absent when the contract is not redoubled. */
  redoubler?: number;
}

/** A card played to a trick. */
export interface Play {
  /** The seat that played it. */
  seat: number;
  /** The card in canonical notation. */
  card: string;
  /** The same card as a structured value. */
  played_card: Card | null;
}

/** A completed trick. */
export interface Trick {
  /** The seat that led. */
  leader: number;
  /** The cards in the order played. */
  plays: Play[];
  /** The seat that won it. */
  winner: number;
  /** The card points in it. */
  points: number;
  /** The card that won it, as a structured value (the winner's card in plays). */
  winning_card: Card | null;
}

/** What one seat may know at one moment: its own hand and the public record, nothing else. */
export interface View {
  /** The seat whose view this is. */
  seat: number;
  /** The deal number, from 1. */
  deal_number: number;
  /** The dealer of this deal. */
  dealer: number;
  /** Where the deal stands. */
  phase: Phase;
  /** The seat to act. */
  to_act: number;
  /** The seats still at the table, in playing order. */
  seats: number[];
  /** Tables held by each team, indexed by team. */
  tables: number[];
  /** Teams out of tables, in the order they went out. */
  teams_out: number[];
  /** This seat's cards, sorted by suit (S, H, D, C) and high to low. */
  hand: string[];
  /** The calls of this deal so far, in order. */
  calls: CallMade[];
  /** The highest bid so far; absent before the first bid and after an all-pass auction. */
  high_bid: Bid | null;
  /** 1, 2 once doubled, 4 once redoubled. */
  doubling: number;
  /** The contract, once the auction is over. */
  contract: Contract | null;
  /** The tricks completed in this deal, in order. */
  tricks: Trick[];
  /** The cards on the table in the trick being played, in order. */
  trick: Play[];
  /** Points each team has taken in this deal so far, indexed by team. */
  points: number[];
  /** The suit led to the trick being played; unspecified when no card of it is on the table. */
  led_suit: Suit;
  /** The trump suit (or no trumps) once the auction is over; unspecified during the auction. */
  trump: Denomination;
  /** The seat whose card is winning the trick being played so far; absent when no card is on the table. */
  trick_winner?: number;
  /** The same cards as hand, as structured values, in the same order (hand_cards[i] is hand[i]). */
  hand_cards: Card[];
  /**
   * The card winning the trick being played so far (trick_winner's card); absent when no card is on the
   * table.
   */
  trick_winning_card: Card | null;
}

/** Tables moved from one team to another when a deal is settled. */
export interface Payment {
  /** The paying team. */
  payer: number;
  /** The receiving team. */
  payee: number;
  /** The number of tables moved. */
  tables: number;
}

/** A hand as dealt. */
export interface Hand {
  /** The seat it was dealt to. */
  seat: number;
  /** Its cards in canonical notation. */
  cards: string[];
  /** The same cards as structured values, in the same order (dealt_cards[i] is cards[i]). */
  dealt_cards: Card[];
}

/** The end of a deal; everything in it is public. */
export interface DealEnd {
  /** The deal number, from 1. */
  deal_number: number;
  /** The dealer. */
  dealer: number;
  /** The seats that were at the table, in playing order. */
  seats: number[];
  /** Every hand as dealt. */
  hands: Hand[];
  /** Every call, in order. */
  calls: CallMade[];
  /** The contract. */
  contract: Contract | null;
  /** Every trick, in order. */
  tricks: Trick[];
  /** Points taken by each team, indexed by team. */
  points: number[];
  /** Whether the contracting team took at least the contract number. */
  made: boolean;
  /** Tables moved, in the order paid. */
  payments: Payment[];
  /** Tables held by each team after the deal, indexed by team. */
  tables: number[];
  /** Teams that ran out of tables in this deal. */
  teams_out: number[];
}

/** What went wrong with a bot. */
export declare const FaultCause: {
  /** Never sent. */
  readonly FAULT_CAUSE_UNSPECIFIED: 0;
  /** The bot did not answer within its decision time and bank. */
  readonly FAULT_CAUSE_TIMEOUT: 1;
  /** The bot answered with a move that is not legal (an index out of range, a move not in the list). */
  readonly FAULT_CAUSE_ILLEGAL_MOVE: 2;
  /** The bot answered with something that is not a move (bad notation, the wrong kind of message). */
  readonly FAULT_CAUSE_MALFORMED_ANSWER: 3;
  /** The bot answered a decision other than the one asked. */
  readonly FAULT_CAUSE_WRONG_DECISION: 4;
  /** The bot closed the stream or its process went away during the match. */
  readonly FAULT_CAUSE_DISCONNECTED: 5;
  /** The bot could not be reached before the match. */
  readonly FAULT_CAUSE_UNREACHABLE: 6;
  /** The handshake failed: wrong protocol version or an unsupported player count or ruleset. */
  readonly FAULT_CAUSE_INCOMPATIBLE: 7;
  /**
   * The bot broke the protocol itself: a message that does not decode (bytes that are not protobuf, a
   * truncated message, text that is not UTF-8), a message over the size limit, or a flood of messages
   * nobody asked for. The stream cannot go on, so this always forfeits.
   */
  readonly FAULT_CAUSE_PROTOCOL_ERROR: 8;
};
/** What went wrong with a bot. */
export type FaultCause = keyof typeof FaultCause;

/** One bot fault recorded in a match. */
export interface Fault {
  /** The seat whose conversation failed. */
  seat: number;
  /** That seat's team. */
  team: number;
  /** What went wrong. */
  cause: FaultCause;
  /** A human-readable explanation. */
  detail: string;
  /** The deal in which it happened (0 before the first deal). */
  deal_number: number;
  /**
   * True when the fault policy let the match go on with a random legal move played in the bot's place
   * (a strike); false when the fault made the bot's team forfeit.
   */
  substituted: boolean;
}

/** The end of a match. */
export interface MatchEnd {
  /**
   * Why the match ended: "one_team_left", "deal_cap", "forfeit", or "arena_error" (the arena itself
   * failed, through no fault of the bots; such a match is never rated).
   */
  reason: string;
  /** Each team's rank, indexed by team (1 is best; equal ranks tie). */
  ranking: number[];
  /** Tables held by each team at the end, indexed by team. */
  tables: number[];
  /** The faults that happened, if any. */
  faults: Fault[];
}
