// The canonical notation (docs/rules.md#notation) read into the protocol's structured values, for an
// arena of an older minor version of protocol 1, which sends cards and moves in notation only.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "fiftysix/v1/bot.pb.h"

namespace fiftysix::kit {

// A card such as `JS`, `9H`, `TD` or `10d` (any letter case); nothing when the text is not a card.
std::optional<v1::Card> parse_card(std::string_view text);

// A call such as `pass`, `28S`, `S28`, `28NT`, `28NOES`, `+2S` or `+2NOES` (any letter case); nothing when
// the text is not a call. `previous_number` is the number of the highest bid so far (0 before the first
// bid): a plus bid's contract number is that plus its increment.
std::optional<v1::Call> parse_call(std::string_view text, std::uint32_t previous_number);

}  // namespace fiftysix::kit
