#include "strategy.h"

#include <array>
#include <optional>
#include <utility>

namespace cpp_simple {

namespace {

constexpr std::array<v1::Suit, 4> kSuits = {v1::SUIT_SPADES, v1::SUIT_HEARTS, v1::SUIT_DIAMONDS, v1::SUIT_CLUBS};

bool is_suit(int value) { return value >= v1::SUIT_SPADES && value <= v1::SUIT_CLUBS; }

// The position of a rank in J 9 A T K Q 8 7 (0 for the jack); a rank out of range counts as the lowest.
int rank_index(const v1::Card& card) {
  const int rank = card.rank();
  return rank >= v1::RANK_JACK && rank <= v1::RANK_SEVEN ? rank - v1::RANK_JACK : v1::RANK_SEVEN;
}

std::optional<std::uint32_t> team_of(const Teams& teams, std::uint32_t seat) {
  if (seat >= teams.size()) return std::nullopt;
  return teams[seat];
}

bool same_team(const Teams& teams, std::uint32_t seat, std::uint32_t other) {
  const std::optional<std::uint32_t> team = team_of(teams, seat);
  return team.has_value() && team == team_of(teams, other);
}

// The trump suit once the auction is over; nothing for no trumps or during the auction (Denomination and
// Suit share their numbers for the four suits).
std::optional<v1::Suit> trump_suit(const v1::View& view) {
  if (is_suit(view.trump())) return static_cast<v1::Suit>(view.trump());
  return std::nullopt;
}

}  // namespace

v1::Suit longest_suit(const Cards& hand) {
  v1::Suit best = v1::SUIT_SPADES;
  std::optional<std::pair<int, std::uint32_t>> best_key;
  for (const v1::Suit suit : kSuits) {
    std::pair<int, std::uint32_t> key{0, 0};  // (cards, points)
    for (const v1::Card& card : hand) {
      if (card.suit() == suit) {
        key.first += 1;
        key.second += card.points();
      }
    }
    if (!best_key || key > *best_key) {
      best = suit;
      best_key = key;
    }
  }
  return best;
}

std::size_t choose_call(const v1::View& view, const fiftysix::Moves& moves, const Teams& teams) {
  std::size_t fallback = 0;
  for (int index = 0; index < moves.size(); ++index) {
    if (moves[index].has_call() && moves[index].call().kind() == v1::CALL_KIND_PASS) {
      fallback = static_cast<std::size_t>(index);
      break;
    }
  }
  const Cards& hand = view.hand_cards();
  int jacks = 0;
  for (const v1::Card& card : hand) jacks += card.rank() == v1::RANK_JACK;
  if (jacks < 2) return fallback;
  if (view.has_high_bid() && same_team(teams, view.high_bid().seat(), view.seat())) {
    return fallback;  // never bid over partner
  }
  const v1::Suit suit = longest_suit(hand);
  bool holds_jack = false;
  for (const v1::Card& card : hand) holds_jack |= card.suit() == suit && card.rank() == v1::RANK_JACK;

  std::optional<std::size_t> best_index;
  std::uint32_t best_number = 0;
  for (int index = 0; index < moves.size(); ++index) {
    if (!moves[index].has_call()) continue;
    const v1::Call& call = moves[index].call();
    const bool number_suit = call.form() == v1::BID_FORM_NUMBER_SUIT;  // 28S: holds the jack
    const bool suit_number = call.form() == v1::BID_FORM_SUIT_NUMBER;  // S28: no jack
    if (call.kind() != v1::CALL_KIND_BID || !(number_suit || suit_number)) continue;
    const std::uint32_t number = call.contract_number();
    if (static_cast<int>(call.denomination()) != static_cast<int>(suit) || number > kMaxBid) continue;
    // The lowest number; of its two forms, the one that tells partner the truth about the jack.
    if (!best_index || number < best_number || (number == best_number && number_suit == holds_jack)) {
      best_index = static_cast<std::size_t>(index);
      best_number = number;
    }
  }
  return best_index.value_or(fallback);
}

std::size_t choose_card(const v1::View& view, const fiftysix::Moves& moves, const Teams& teams) {
  const std::optional<v1::Suit> trump = trump_suit(view);
  const bool partner_winning = view.has_trick_winner() && view.trick_winner() != view.seat() &&
                               same_team(teams, view.trick_winner(), view.seat());
  const auto strength = [&trump](const v1::Card& card) {
    return 2 * (v1::RANK_SEVEN - rank_index(card)) + (trump && card.suit() == *trump ? 1 : 0);
  };
  std::optional<std::size_t> best_index;
  for (int index = 0; index < moves.size(); ++index) {
    if (!moves[index].has_card()) continue;
    if (!best_index) {
      best_index = static_cast<std::size_t>(index);
      continue;
    }
    const int difference = strength(moves[index].card()) - strength(moves[static_cast<int>(*best_index)].card());
    if (partner_winning ? difference < 0 : difference > 0) best_index = static_cast<std::size_t>(index);
  }
  return best_index.value_or(0);
}

std::size_t decide(const v1::View& view, const fiftysix::Moves& moves, const Teams& teams) {
  if (moves.empty()) return 0;
  // The moves say which part of the deal this is; the phase decides only when they do not agree.
  bool cards = false;
  bool calls = false;
  for (const v1::Move& move : moves) {
    cards |= move.has_card();
    calls |= move.has_call();
  }
  const bool play = cards == calls ? view.phase() == v1::PHASE_PLAY : cards;
  return play ? choose_card(view, moves, teams) : choose_call(view, moves, teams);
}

}  // namespace cpp_simple
