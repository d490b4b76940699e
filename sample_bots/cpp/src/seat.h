// One seat's conversation (one PlaySeat stream): its own state, nothing shared with other seats. No gRPC
// server types here, so the conversation is tested without a network.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fiftysix/v1/bot.pb.h"
#include "strategy.h"

namespace cppbot {

namespace pb = fiftysix::v1;

// What to do after one request from the arena.
struct Step {
  // The answer to send, if the request expects one.
  std::optional<pb::PlaySeatResponse> response;
  // True after MatchEnd: the bot ends its side of the stream with status OK.
  bool finished = false;
  // Not empty when the arena broke the protocol (a decision before MatchStart, a second MatchStart):
  // the bot ends the stream with INVALID_ARGUMENT and this message.
  std::string rejection;
};

class Seat {
 public:
  // The step for the next request on this stream.
  Step handle(const pb::PlaySeatRequest& request);

  // The seat this stream plays, once MatchStart has said it (for logs).
  std::optional<std::uint32_t> seat() const { return started_ ? std::optional<std::uint32_t>(seat_) : std::nullopt; }
  // The arena's id of the match, once MatchStart has said it (for logs).
  const std::string& match_id() const { return match_id_; }

 private:
  bool started_ = false;
  std::uint32_t seat_ = 0;
  Teams teams_;
  std::string match_id_;
};

// The answer to a decision: its decision_id and the index of the chosen move in legal_moves.
pb::PlaySeatResponse answer(const pb::DecisionRequest& decision, const Teams& teams);

}  // namespace cppbot
