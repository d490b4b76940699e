// One seat's conversation (one PlaySeat stream): its own bot, nothing shared with other seats. No gRPC
// server types here, so the conversation is tested without a network.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "fiftysix/bot.h"

namespace fiftysix::kit {

// What to do after one request from the arena.
struct Step {
  // The answer to send, if the request expects one.
  std::optional<v1::PlaySeatResponse> response;
  // True after MatchEnd: the kit ends its side of the stream with status OK.
  bool finished = false;
  // Not empty when the arena broke the protocol (a decision before MatchStart, a second MatchStart):
  // the kit ends the stream with INVALID_ARGUMENT and this message.
  std::string rejection;
  // Not empty when the bot's own code threw: the kit ends the stream with INTERNAL and this message, so
  // that the arena records the fault at once instead of waiting for an answer.
  std::string failure;
};

class Seat {
 public:
  explicit Seat(std::unique_ptr<Bot> bot) : bot_(std::move(bot)) {}

  // The step for the next request on this stream; the request's structured fields are filled in from
  // its notation where an older arena left them out (structured.h).
  Step handle(v1::PlaySeatRequest& request);

  // The seat this stream plays, once MatchStart has said it (for logs).
  std::optional<std::uint32_t> seat() const { return started_ ? std::optional<std::uint32_t>(seat_) : std::nullopt; }
  // The arena's id of the match, once MatchStart has said it (for logs).
  const std::string& match_id() const { return match_id_; }

 private:
  Step dispatch(v1::PlaySeatRequest& request);
  v1::PlaySeatResponse answer(v1::DecisionRequest& decision);

  std::unique_ptr<Bot> bot_;
  bool started_ = false;
  std::uint32_t seat_ = 0;
  std::string match_id_;
};

}  // namespace fiftysix::kit
