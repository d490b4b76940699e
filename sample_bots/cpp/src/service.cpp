#include "service.h"

#include <exception>

#include "identity.h"
#include "log.h"
#include "seat.h"

namespace cppbot {

namespace {

LogField seat_field(const Seat& seat) {
  return number_field("seat", seat.seat() ? static_cast<std::int64_t>(*seat.seat()) : -1);
}

}  // namespace

grpc::Status BotService::Describe(grpc::ServerContext* /*context*/, const pb::DescribeRequest* /*request*/,
                                  pb::DescribeResponse* response) {
  response->set_name(kBotName);
  response->set_version(kBotVersion);
  response->set_protocol_version(kProtocolVersion);
  for (const std::uint32_t players : {4U, 6U, 8U}) response->add_player_counts(players);
  // No rulesets: every ruleset.
  response->set_author(kBotAuthor);
  return grpc::Status::OK;
}

grpc::Status BotService::PlaySeat(
    grpc::ServerContext* /*context*/,
    grpc::ServerReaderWriter<pb::PlaySeatResponse, pb::PlaySeatRequest>* stream) {
  Seat seat;
  pb::PlaySeatRequest request;
  // Read returns false once the arena stops writing, cancels the stream or goes away, and when the
  // server shuts down: then there is nothing left to answer.
  while (stream->Read(&request)) {
    Step step;
    try {
      step = seat.handle(request);
    } catch (const std::exception& error) {
      // Only memory running out gets here; a decision still gets an answer.
      log_event("bot_failed", {text_field("error", error.what()), seat_field(seat),
                               text_field("match_id", seat.match_id())});
      if (request.has_decision()) {
        step.response.emplace().mutable_move()->set_decision_id(request.decision().decision_id());
        step.response->mutable_move()->set_move_index(0);
      }
    }
    if (!step.rejection.empty()) {
      log_event("arena_message_rejected",
                {text_field("error", step.rejection), seat_field(seat), text_field("match_id", seat.match_id())});
      return {grpc::StatusCode::INVALID_ARGUMENT, step.rejection};
    }
    if (step.response && !stream->Write(*step.response)) {
      return grpc::Status::OK;  // the stream is gone: nobody to tell
    }
    if (step.finished) return grpc::Status::OK;  // after MatchEnd the bot ends its side of the stream
  }
  return grpc::Status::OK;
}

}  // namespace cppbot
