// cpp-simple: the C++ kit's sample bot (see strategy.h for how it plays).
//
//   cpp_bot [--port N] [--port-file PATH] [--host HOST] [--socket PATH]

#include "fiftysix/bot.h"
#include "strategy.h"

namespace {

class SimpleBot final : public fiftysix::Bot {
 public:
  fiftysix::Description describe() const override {
    fiftysix::Description description;
    description.name = "cpp-simple";
    description.version = "1.0.0";
    description.author = "fiftysix arena";
    return description;  // player_counts 4, 6 and 8, every ruleset: the defaults
  }

  void on_match_start(const fiftysix::v1::MatchStart& start) override {
    teams_.assign(start.team_of_seats().begin(), start.team_of_seats().end());
  }

  std::size_t decide(const fiftysix::v1::View& view, const fiftysix::Moves& moves,
                     const fiftysix::v1::DecisionRequest& /*decision*/) override {
    return cpp_simple::decide(view, moves, teams_);
  }

 private:
  cpp_simple::Teams teams_;  // every seat's team, indexed by seat
};

}  // namespace

int main(int argc, char** argv) { return fiftysix::serve<SimpleBot>(argc, argv); }
