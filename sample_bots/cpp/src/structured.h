// What an arena of an older minor version of protocol 1 leaves out, filled in from the notation that
// every version sends, so that a bot reads every card and move as a structured value whatever the
// arena's version. What the arena sent is kept as it is, except a structured list that is not one for
// one with its notation (then the notation is read instead).
#pragma once

#include <optional>

#include "fiftysix/v1/bot.pb.h"

namespace fiftysix::kit {

// Fills in decision.moves (from legal_moves), and in the view hand_cards, every play's played_card,
// every trick's winning_card, trump (from the contract), led_suit, trick_winner and trick_winning_card.
void complete(v1::DecisionRequest& decision);

// Fills in every hand's dealt_cards, every play's played_card and every trick's winning_card.
void complete(v1::DealEnd& deal_end);

// The index in `plays` of the card winning them so far (docs/rules.md#who-wins-a-trick: the highest trump,
// else the highest card of the suit led; of two identical cards the first played); nothing when `plays`
// is empty. `trump` is nothing for no trumps.
std::optional<int> winning_play(const google::protobuf::RepeatedPtrField<v1::Play>& plays,
                                std::optional<v1::Suit> trump);

}  // namespace fiftysix::kit
