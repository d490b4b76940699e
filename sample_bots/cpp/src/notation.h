// The canonical notation (docs/rules.md#notation) read into the protocol's structured values.
//
// The bot decides on structured moves (DecisionRequest.moves). An arena of an older minor version of
// protocol 1 sends only legal_moves in notation; then the bot reads them itself, and reads its hand and
// the trick on the table (strings in every version) the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "fiftysix/v1/bot.pb.h"

namespace cppbot {

namespace pb = fiftysix::v1;

// A card such as `JS`, `9H`, `TD` or `10d` (any letter case); nothing when the text is not a card.
std::optional<pb::Card> parse_card(std::string_view text);

// A call such as `pass`, `28S`, `S28`, `28NT`, `28NOES`, `+2S` or `+2NOES` (any letter case); nothing when
// the text is not a call. `previous_number` is the number of the highest bid so far (0 before the first
// bid): a plus bid's contract number is that plus its increment.
std::optional<pb::Call> parse_call(std::string_view text, std::uint32_t previous_number);

// The legal moves of a decision as structured values, index for index with legal_moves: `moves` as the
// arena sent them when they match legal_moves one for one; otherwise legal_moves read from notation (an
// entry that does not read is a Move with neither card nor call, which no strategy picks).
std::vector<pb::Move> structured_moves(const pb::DecisionRequest& decision);

}  // namespace cppbot
