#include "service.h"

#include <exception>
#include <memory>
#include <string>

#include "fiftysix/log.h"
#include "seat.h"

namespace fiftysix::kit {

namespace {

LogField seat_field(const Seat& seat) {
  return number_field("seat", seat.seat() ? static_cast<std::int64_t>(*seat.seat()) : -1);
}

}  // namespace

grpc::Status BotService::Describe(grpc::ServerContext* /*context*/, const v1::DescribeRequest* /*request*/,
                                  v1::DescribeResponse* response) {
  response->set_name(description_.name);
  response->set_version(description_.version);
  response->set_protocol_version(kProtocolVersion);
  for (const std::uint32_t players : description_.player_counts) response->add_player_counts(players);
  for (const v1::Ruleset ruleset : description_.rulesets) response->add_rulesets(ruleset);
  response->set_author(description_.author);
  return grpc::Status::OK;
}

grpc::Status BotService::PlaySeat(grpc::ServerContext* /*context*/,
                                  grpc::ServerReaderWriter<v1::PlaySeatResponse, v1::PlaySeatRequest>* stream) {
  std::unique_ptr<Bot> bot;
  std::string failure;
  try {
    bot = make_bot_();
    if (bot == nullptr) failure = "the bot factory made no bot";
  } catch (const std::exception& error) {
    failure = std::string("the bot factory threw: ") + error.what();
  }
  if (!failure.empty()) {
    log_event("bot_failed", {text_field("error", failure)});
    return {grpc::StatusCode::INTERNAL, failure};
  }
  Seat seat(std::move(bot));
  v1::PlaySeatRequest request;
  // Read returns false once the arena stops writing, cancels the stream or goes away, and when the
  // server shuts down: then there is nothing left to answer.
  while (stream->Read(&request)) {
    const Step step = seat.handle(request);
    if (!step.rejection.empty()) {
      log_event("arena_message_rejected",
                {text_field("error", step.rejection), seat_field(seat), text_field("match_id", seat.match_id())});
      return {grpc::StatusCode::INVALID_ARGUMENT, step.rejection};
    }
    if (!step.failure.empty()) {
      log_event("bot_failed",
                {text_field("error", step.failure), seat_field(seat), text_field("match_id", seat.match_id())});
      return {grpc::StatusCode::INTERNAL, step.failure};
    }
    if (step.response && !stream->Write(*step.response)) {
      return grpc::Status::OK;  // the stream is gone: nobody to tell
    }
    if (step.finished) return grpc::Status::OK;  // after MatchEnd the kit ends its side of the stream
  }
  return grpc::Status::OK;
}

}  // namespace fiftysix::kit
