// The gRPC service: Describe and one PlaySeat stream per seat, on gRPC's synchronous server (each stream
// has a thread of its own for as long as it lasts; a match needs at most 8).
#pragma once

#include <grpcpp/grpcpp.h>

#include "fiftysix/bot.h"
#include "fiftysix/v1/bot.grpc.pb.h"

namespace fiftysix::kit {

// The version of the protocol this kit speaks.
inline constexpr std::uint32_t kProtocolVersion = 1;

class BotService final : public v1::BotService::Service {
 public:
  // `description` is what Describe answers; `make_bot` makes the bot of each new stream.
  BotService(Description description, BotFactory make_bot)
      : description_(std::move(description)), make_bot_(std::move(make_bot)) {}

  grpc::Status Describe(grpc::ServerContext* context, const v1::DescribeRequest* request,
                        v1::DescribeResponse* response) override;

  grpc::Status PlaySeat(grpc::ServerContext* context,
                        grpc::ServerReaderWriter<v1::PlaySeatResponse, v1::PlaySeatRequest>* stream) override;

 private:
  const Description description_;
  const BotFactory make_bot_;
};

}  // namespace fiftysix::kit
