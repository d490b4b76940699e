#include "seat.h"

#include "log.h"
#include "notation.h"

namespace cppbot {

pb::PlaySeatResponse answer(const pb::DecisionRequest& decision, const Teams& teams) {
  const std::vector<pb::Move> moves = structured_moves(decision);
  std::uint32_t index = decide(decision.view(), moves, teams);
  // The answer names an entry of legal_moves; outside it (only when the arena sent no legal_moves, or
  // moves without legal_moves) there is no legal answer, and 0 is as good as any.
  if (index >= static_cast<std::uint32_t>(decision.legal_moves_size())) index = 0;
  pb::PlaySeatResponse response;
  pb::MoveAnswer* move = response.mutable_move();
  move->set_decision_id(decision.decision_id());
  move->set_move_index(index);
  return response;
}

Step Seat::handle(const pb::PlaySeatRequest& request) {
  Step step;
  switch (request.event_case()) {
    case pb::PlaySeatRequest::kMatchStart: {
      if (started_) {
        step.rejection = "a second match_start on one stream";
        return step;
      }
      const pb::MatchStart& start = request.match_start();
      started_ = true;
      seat_ = start.seat();
      teams_.assign(start.team_of_seats().begin(), start.team_of_seats().end());
      match_id_ = start.match_id();
      step.response.emplace().mutable_ready();
      return step;
    }
    case pb::PlaySeatRequest::kDecision:
      if (!started_) {
        step.rejection = "decision before match_start";
        return step;
      }
      step.response = answer(request.decision(), teams_);
      return step;
    case pb::PlaySeatRequest::kDealEnd:
      if (!started_) step.rejection = "deal_end before match_start";
      return step;
    case pb::PlaySeatRequest::kMatchEnd:
      if (!started_) {
        step.rejection = "match_end before match_start";
        return step;
      }
      step.finished = true;
      return step;
    case pb::PlaySeatRequest::EVENT_NOT_SET:
      break;
  }
  // An event this bot does not know (a newer arena's, or none at all): nothing to answer, and no reason
  // to end a conversation that may go on.
  log_event("arena_message_ignored", {text_field("reason", "a request with no event this bot knows"),
                                      text_field("match_id", match_id_)});
  return step;
}

}  // namespace cppbot
