// The C++ kit for 56 bots: implement fiftysix::Bot, and let fiftysix::serve do the rest.
//
//   class MyBot : public fiftysix::Bot { ... };
//   int main(int argc, char** argv) { return fiftysix::serve<MyBot>(argc, argv); }
//
// The kit serves fiftysix.v1.BotService and the standard health service over gRPC, answers the
// handshake, gives every seat's stream a bot of its own, answers each decision with the index the bot
// chose, reads --port, --port-file, --host and --socket, logs JSON lines to stderr and stops gracefully
// on SIGTERM. The bot sees the protocol's own messages (fiftysix::v1, generated from bot.proto; see
// docs/bot-guide.md section 2.3), with every card a structured v1::Card (View.hand_cards,
// Play.played_card, View.trick_winning_card, Trick.winning_card, Hand.dealt_cards) and every legal move a
// structured v1::Move: no notation to parse, whatever minor version of protocol 1 the arena speaks (the
// kit fills in from the notation what an older arena leaves out).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fiftysix/v1/bot.pb.h"

namespace fiftysix {

// The legal moves of a decision, in the arena's order: moves[i] is legal_moves[i], and the bot answers
// with that index.
using Moves = google::protobuf::RepeatedPtrField<v1::Move>;

// Who the bot is, as the handshake (Describe) tells the arena.
struct Description {
  std::string name;
  std::string version;
  std::string author;
  // The numbers of players it can play.
  std::vector<std::uint32_t> player_counts = {4, 6, 8};
  // The rulesets it can play; empty means every ruleset.
  std::vector<v1::Ruleset> rulesets;
};

// A bot: one object plays one seat of one match (serve makes a new one for every seat's stream), so its
// members are that seat's own state. The hooks are optional; a hook that throws ends that seat's stream
// with INTERNAL and the exception's message, which the arena records as the bot's fault.
class Bot {
 public:
  virtual ~Bot() = default;

  // Who the bot is; asked once, of a bot made for the purpose, when serve starts.
  virtual Description describe() const = 0;

  // The match begins: this seat, every seat's team (team_of_seats), the rules, the time control.
  virtual void on_match_start(const v1::MatchStart& /*start*/) {}

  // The index into `moves` of the move to make. `view` is what this seat may know now; `decision` is the
  // whole request (its decision_ms and bank_ms say the time there is). An index out of range is sent as
  // it is (and logged as bot_chose_illegal_move): the arena records it as this bot's illegal move.
  virtual std::size_t decide(const v1::View& view, const Moves& moves, const v1::DecisionRequest& decision) = 0;

  // A deal is over; everything in it is public now (every hand as dealt, every trick).
  virtual void on_deal_end(const v1::DealEnd& /*deal_end*/) {}

  // The match is over: why, every team's ranking and tables, the faults.
  virtual void on_match_end(const v1::MatchEnd& /*match_end*/) {}
};

// Makes the bot of each new seat; called on each new stream's own thread, so possibly at once.
using BotFactory = std::function<std::unique_ptr<Bot>()>;

// Serves the bots `make_bot` makes until SIGTERM or SIGINT, reading the command line:
//
//   --port N          port to listen on (default 50051; 0 picks a free port)
//   --port-file PATH  once serving, write the port bound to PATH (atomically: a temporary file, renamed)
//   --host HOST       address to listen on (default 127.0.0.1; an IPv6 address such as ::1 too)
//   --socket PATH     listen on this Unix-domain socket instead of a port (how a sandboxed bot is reached)
//
// Returns the exit status for main: 0 after a graceful stop, 1 when it cannot serve, 2 for a bad command
// line. It blocks SIGTERM and SIGINT in the calling thread (and so in every thread started after) to
// take them itself: call it before starting threads of your own.
int serve(const BotFactory& make_bot, int argc, char** argv);

// serve() with a factory that default-constructs a `BotType` for each seat.
template <typename BotType>
int serve(int argc, char** argv) {
  return serve([] { return std::unique_ptr<Bot>(std::make_unique<BotType>()); }, argc, argv);
}

}  // namespace fiftysix
