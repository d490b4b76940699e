#include "seat.h"

#include <algorithm>
#include <exception>
#include <limits>

#include "fiftysix/log.h"
#include "structured.h"

namespace fiftysix::kit {

Step Seat::handle(v1::PlaySeatRequest& request) {
  try {
    return dispatch(request);
  } catch (const std::exception& error) {
    Step step;
    step.failure = std::string("the bot threw: ") + error.what();
    return step;
  } catch (...) {
    Step step;
    step.failure = "the bot threw something that is not a std::exception";
    return step;
  }
}

Step Seat::dispatch(v1::PlaySeatRequest& request) {
  Step step;
  switch (request.event_case()) {
    case v1::PlaySeatRequest::kMatchStart: {
      if (started_) {
        step.rejection = "a second match_start on one stream";
        return step;
      }
      const v1::MatchStart& start = request.match_start();
      started_ = true;
      seat_ = start.seat();
      match_id_ = start.match_id();
      bot_->on_match_start(start);
      step.response.emplace().mutable_ready();
      return step;
    }
    case v1::PlaySeatRequest::kDecision:
      if (!started_) {
        step.rejection = "decision before match_start";
        return step;
      }
      step.response = answer(*request.mutable_decision());
      return step;
    case v1::PlaySeatRequest::kDealEnd:
      if (!started_) {
        step.rejection = "deal_end before match_start";
        return step;
      }
      complete(*request.mutable_deal_end());
      bot_->on_deal_end(request.deal_end());
      return step;
    case v1::PlaySeatRequest::kMatchEnd:
      if (!started_) {
        step.rejection = "match_end before match_start";
        return step;
      }
      bot_->on_match_end(request.match_end());
      step.finished = true;
      return step;
    case v1::PlaySeatRequest::EVENT_NOT_SET:
      break;
  }
  // An event this kit does not know (a newer arena's, or none at all): nothing to answer, and no reason
  // to end a conversation that may go on.
  log_event("arena_message_ignored",
            {text_field("reason", "a request with no event this bot knows"), text_field("match_id", match_id_)});
  return step;
}

v1::PlaySeatResponse Seat::answer(v1::DecisionRequest& decision) {
  complete(decision);
  const std::size_t index = bot_->decide(decision.view(), decision.moves(), decision);
  if (index >= static_cast<std::size_t>(decision.legal_moves_size())) {
    // Sent as it is: the arena records the illegal move as this bot's fault, which is what it is.
    log_event("bot_chose_illegal_move", {number_field("move_index", static_cast<std::int64_t>(index)),
                                         number_field("legal_moves", decision.legal_moves_size()),
                                         number_field("seat", seat_), text_field("match_id", match_id_)});
  }
  v1::PlaySeatResponse response;
  v1::MoveAnswer* move = response.mutable_move();
  move->set_decision_id(decision.decision_id());
  constexpr std::size_t kLargest = std::numeric_limits<std::uint32_t>::max();
  move->set_move_index(static_cast<std::uint32_t>(std::min(index, kLargest)));
  return response;
}

}  // namespace fiftysix::kit
