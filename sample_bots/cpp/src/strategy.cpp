#include "strategy.h"

#include <array>

#include "notation.h"

namespace cppbot {

namespace {

constexpr std::array<pb::Suit, 4> kSuits = {pb::SUIT_SPADES, pb::SUIT_HEARTS, pb::SUIT_DIAMONDS, pb::SUIT_CLUBS};

bool is_suit(int value) { return value >= pb::SUIT_SPADES && value <= pb::SUIT_CLUBS; }

// The position of a rank in J 9 A T K Q 8 7 (0 for the jack); a rank out of range counts as the lowest.
int rank_index(const pb::Card& card) {
  const int rank = card.rank();
  return rank >= pb::RANK_JACK && rank <= pb::RANK_SEVEN ? rank - pb::RANK_JACK : pb::RANK_SEVEN;
}

std::optional<std::uint32_t> team_of(const Teams& teams, std::uint32_t seat) {
  if (seat >= teams.size()) return std::nullopt;
  return teams[seat];
}

bool same_team(const Teams& teams, std::uint32_t seat, std::uint32_t other) {
  const std::optional<std::uint32_t> team = team_of(teams, seat);
  return team.has_value() && team == team_of(teams, other);
}

std::vector<pb::Card> hand_of(const pb::View& view) {
  std::vector<pb::Card> hand;
  for (const std::string& notation : view.hand()) {
    if (std::optional<pb::Card> card = parse_card(notation)) hand.push_back(std::move(*card));
  }
  return hand;
}

}  // namespace

pb::Suit longest_suit(const std::vector<pb::Card>& hand) {
  pb::Suit best = pb::SUIT_SPADES;
  std::optional<std::pair<int, std::uint32_t>> best_key;
  for (const pb::Suit suit : kSuits) {
    std::pair<int, std::uint32_t> key{0, 0};  // (cards, points)
    for (const pb::Card& card : hand) {
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

std::optional<pb::Suit> trump_suit(const pb::View& view) {
  int denomination = view.trump();
  if (denomination == pb::DENOMINATION_UNSPECIFIED && view.has_contract()) {
    denomination = view.contract().denomination();
  }
  // Denomination and Suit share their numbers for the four suits.
  if (is_suit(denomination)) return static_cast<pb::Suit>(denomination);
  return std::nullopt;
}

std::optional<std::uint32_t> trick_winner(const pb::View& view, std::optional<pb::Suit> trump) {
  if (view.has_trick_winner()) return view.trick_winner();
  std::optional<std::uint32_t> best_seat;
  std::optional<pb::Card> best_card;
  for (const pb::Play& play : view.trick()) {
    const std::optional<pb::Card> card = parse_card(play.card());
    if (!card) continue;
    if (!best_card) {
      best_seat = play.seat();
      best_card = card;
    } else if (card->suit() == best_card->suit()) {
      // Strictly higher: of two identical cards the one played first wins.
      if (rank_index(*card) < rank_index(*best_card)) {
        best_seat = play.seat();
        best_card = card;
      }
    } else if (trump && card->suit() == *trump) {
      best_seat = play.seat();
      best_card = card;
    }
  }
  return best_seat;
}

std::uint32_t choose_call(const pb::View& view, const std::vector<pb::Move>& moves, const Teams& teams) {
  std::uint32_t fallback = 0;
  for (std::uint32_t index = 0; index < moves.size(); ++index) {
    if (moves[index].has_call() && moves[index].call().kind() == pb::CALL_KIND_PASS) {
      fallback = index;
      break;
    }
  }
  const std::vector<pb::Card> hand = hand_of(view);
  int jacks = 0;
  for (const pb::Card& card : hand) jacks += card.rank() == pb::RANK_JACK;
  if (jacks < 2) return fallback;
  if (view.has_high_bid() && same_team(teams, view.high_bid().seat(), view.seat())) {
    return fallback;  // never bid over partner
  }
  const pb::Suit suit = longest_suit(hand);
  bool holds_jack = false;
  for (const pb::Card& card : hand) holds_jack |= card.suit() == suit && card.rank() == pb::RANK_JACK;

  std::optional<std::uint32_t> best_index;
  std::uint32_t best_number = 0;
  for (std::uint32_t index = 0; index < moves.size(); ++index) {
    if (!moves[index].has_call()) continue;
    const pb::Call& call = moves[index].call();
    const bool number_suit = call.form() == pb::BID_FORM_NUMBER_SUIT;  // 28S: holds the jack
    const bool suit_number = call.form() == pb::BID_FORM_SUIT_NUMBER;  // S28: no jack
    if (call.kind() != pb::CALL_KIND_BID || !(number_suit || suit_number)) continue;
    const std::uint32_t number = call.contract_number();
    if (static_cast<int>(call.denomination()) != static_cast<int>(suit) || number > kMaxBid) continue;
    // The lowest number; of its two forms, the one that tells partner the truth about the jack.
    if (!best_index || number < best_number || (number == best_number && number_suit == holds_jack)) {
      best_index = index;
      best_number = number;
    }
  }
  return best_index.value_or(fallback);
}

std::uint32_t choose_card(const pb::View& view, const std::vector<pb::Move>& moves, const Teams& teams) {
  const std::optional<pb::Suit> trump = trump_suit(view);
  const std::optional<std::uint32_t> winner = trick_winner(view, trump);
  const bool partner_winning = winner && *winner != view.seat() && same_team(teams, *winner, view.seat());
  const auto strength = [&trump](const pb::Card& card) {
    return 2 * (pb::RANK_SEVEN - rank_index(card)) + (trump && card.suit() == *trump ? 1 : 0);
  };
  std::optional<std::uint32_t> best_index;
  for (std::uint32_t index = 0; index < moves.size(); ++index) {
    if (!moves[index].has_card()) continue;
    if (!best_index) {
      best_index = index;
      continue;
    }
    const int difference = strength(moves[index].card()) - strength(moves[*best_index].card());
    if (partner_winning ? difference < 0 : difference > 0) best_index = index;
  }
  return best_index.value_or(0);
}

std::uint32_t decide(const pb::View& view, const std::vector<pb::Move>& moves, const Teams& teams) {
  if (moves.empty()) return 0;
  // The moves say which part of the deal this is; the phase decides only when they do not agree.
  bool cards = false;
  bool calls = false;
  for (const pb::Move& move : moves) {
    cards |= move.has_card();
    calls |= move.has_call();
  }
  const bool play = cards == calls ? view.phase() == pb::PHASE_PLAY : cards;
  return play ? choose_card(view, moves, teams) : choose_call(view, moves, teams);
}

}  // namespace cppbot
