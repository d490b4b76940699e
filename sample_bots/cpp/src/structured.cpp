#include "structured.h"

#include <string>

#include "notation.h"

namespace fiftysix::kit {

namespace {

using Plays = google::protobuf::RepeatedPtrField<v1::Play>;

// A card's notation as a structured value; an empty Card (no suit, no rank) when it does not read, so
// that a list stays one for one with its notation.
v1::Card card_of(const std::string& notation) { return parse_card(notation).value_or(v1::Card()); }

void complete_cards(const google::protobuf::RepeatedPtrField<std::string>& notation,
                    google::protobuf::RepeatedPtrField<v1::Card>& cards) {
  if (cards.size() == notation.size()) return;
  cards.Clear();
  for (const std::string& card : notation) *cards.Add() = card_of(card);
}

void complete_plays(Plays& plays) {
  for (v1::Play& play : plays) {
    if (!play.has_played_card()) *play.mutable_played_card() = card_of(play.card());
  }
}

// The card `seat` played in `plays`; nothing when it played none there.
std::optional<v1::Card> card_played_by(const Plays& plays, std::uint32_t seat) {
  for (const v1::Play& play : plays) {
    if (play.seat() == seat) return play.played_card();
  }
  return std::nullopt;
}

void complete_tricks(google::protobuf::RepeatedPtrField<v1::Trick>& tricks) {
  for (v1::Trick& trick : tricks) {
    complete_plays(*trick.mutable_plays());
    if (trick.has_winning_card()) continue;
    if (std::optional<v1::Card> card = card_played_by(trick.plays(), trick.winner())) {
      *trick.mutable_winning_card() = std::move(*card);
    }
  }
}

bool is_suit(int value) { return value >= v1::SUIT_SPADES && value <= v1::SUIT_CLUBS; }

// The position of a card's rank in J 9 A T K Q 8 7 (0 for the jack); a rank out of range is the lowest.
int rank_order(const v1::Card& card) {
  const int rank = card.rank();
  return rank >= v1::RANK_JACK && rank <= v1::RANK_SEVEN ? rank - v1::RANK_JACK : v1::RANK_SEVEN;
}

void complete_moves(v1::DecisionRequest& decision) {
  const auto& legal = decision.legal_moves();
  if (decision.moves_size() == legal.size()) return;
  const std::uint32_t previous_number = decision.view().has_high_bid() ? decision.view().high_bid().number() : 0;
  decision.clear_moves();
  for (const std::string& notation : legal) {
    v1::Move& move = *decision.add_moves();
    if (std::optional<v1::Card> card = parse_card(notation)) {
      *move.mutable_card() = std::move(*card);
    } else if (std::optional<v1::Call> call = parse_call(notation, previous_number)) {
      *move.mutable_call() = std::move(*call);
    }  // neither: a Move with nothing in it, which no bot would pick by its contents
  }
}

void complete_view(v1::View& view) {
  complete_cards(view.hand(), *view.mutable_hand_cards());
  complete_tricks(*view.mutable_tricks());
  complete_plays(*view.mutable_trick());
  if (view.trump() == v1::DENOMINATION_UNSPECIFIED && view.has_contract()) {
    view.set_trump(view.contract().denomination());
  }
  if (view.trick().empty()) return;
  if (view.led_suit() == v1::SUIT_UNSPECIFIED) view.set_led_suit(view.trick(0).played_card().suit());
  if (!view.has_trick_winner()) {
    // Denomination and Suit share their numbers for the four suits.
    std::optional<v1::Suit> trump;
    if (is_suit(view.trump())) trump = static_cast<v1::Suit>(view.trump());
    view.set_trick_winner(view.trick(*winning_play(view.trick(), trump)).seat());
  }
  if (!view.has_trick_winning_card()) {
    if (std::optional<v1::Card> card = card_played_by(view.trick(), view.trick_winner())) {
      *view.mutable_trick_winning_card() = std::move(*card);
    }
  }
}

}  // namespace

std::optional<int> winning_play(const Plays& plays, std::optional<v1::Suit> trump) {
  std::optional<int> best;
  for (int index = 0; index < plays.size(); ++index) {
    const v1::Card& card = plays[index].played_card();
    if (!best) {
      best = index;
      continue;
    }
    const v1::Card& best_card = plays[*best].played_card();
    if (card.suit() == best_card.suit()) {
      if (rank_order(card) < rank_order(best_card)) best = index;  // strictly higher: the first of two wins
    } else if (trump && card.suit() == *trump) {
      best = index;
    }
  }
  return best;
}

void complete(v1::DecisionRequest& decision) {
  complete_moves(decision);
  complete_view(*decision.mutable_view());
}

void complete(v1::DealEnd& deal_end) {
  for (v1::Hand& hand : *deal_end.mutable_hands()) complete_cards(hand.cards(), *hand.mutable_dealt_cards());
  complete_tricks(*deal_end.mutable_tricks());
}

}  // namespace fiftysix::kit
