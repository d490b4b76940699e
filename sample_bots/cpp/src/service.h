// The gRPC service: Describe and one PlaySeat stream per seat, on gRPC's synchronous server (each stream
// has a thread of its own for as long as it lasts; a match needs at most 8).
#pragma once

#include <grpcpp/grpcpp.h>

#include "fiftysix/v1/bot.grpc.pb.h"

namespace cppbot {

namespace pb = fiftysix::v1;

class BotService final : public pb::BotService::Service {
 public:
  grpc::Status Describe(grpc::ServerContext* context, const pb::DescribeRequest* request,
                        pb::DescribeResponse* response) override;

  grpc::Status PlaySeat(grpc::ServerContext* context,
                        grpc::ServerReaderWriter<pb::PlaySeatResponse, pb::PlaySeatRequest>* stream) override;
};

}  // namespace cppbot
