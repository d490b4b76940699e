#include "notation.h"

#include <cctype>
#include <string>

namespace fiftysix::kit {

namespace {

constexpr std::uint32_t kLowestBid = 28;
constexpr std::uint32_t kHighestBid = 56;

std::string upper(std::string_view text) {
  std::string result;
  result.reserve(text.size());
  for (const char character : text) {
    result += static_cast<char>(std::toupper(static_cast<unsigned char>(character)));
  }
  return result;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::optional<v1::Suit> suit_of_letter(char letter) {
  switch (letter) {
    case 'S':
      return v1::SUIT_SPADES;
    case 'H':
      return v1::SUIT_HEARTS;
    case 'D':
      return v1::SUIT_DIAMONDS;
    case 'C':
      return v1::SUIT_CLUBS;
    default:
      return std::nullopt;
  }
}

std::optional<v1::Rank> rank_of_text(std::string_view text) {
  if (text == "10") return v1::RANK_TEN;
  if (text.size() != 1) return std::nullopt;
  switch (text[0]) {
    case 'J':
      return v1::RANK_JACK;
    case '9':
      return v1::RANK_NINE;
    case 'A':
      return v1::RANK_ACE;
    case 'T':
      return v1::RANK_TEN;
    case 'K':
      return v1::RANK_KING;
    case 'Q':
      return v1::RANK_QUEEN;
    case '8':
      return v1::RANK_EIGHT;
    case '7':
      return v1::RANK_SEVEN;
    default:
      return std::nullopt;
  }
}

std::uint32_t points_of(v1::Rank rank) {
  switch (rank) {
    case v1::RANK_JACK:
      return 3;
    case v1::RANK_NINE:
      return 2;
    case v1::RANK_ACE:
    case v1::RANK_TEN:
      return 1;
    default:
      return 0;
  }
}

// One or two decimal digits as a number (longer runs are out of every range here).
std::optional<std::uint32_t> small_number(std::string_view digits) {
  if (digits.empty() || digits.size() > 2) return std::nullopt;
  std::uint32_t number = 0;
  for (const char digit : digits) {
    if (!std::isdigit(static_cast<unsigned char>(digit))) return std::nullopt;
    number = number * 10 + static_cast<std::uint32_t>(digit - '0');
  }
  return number;
}

v1::Call bid(v1::BidForm form, std::uint32_t number, std::uint32_t contract_number, v1::Denomination denomination) {
  v1::Call call;
  call.set_kind(v1::CALL_KIND_BID);
  call.set_form(form);
  call.set_number(number);
  call.set_contract_number(contract_number);
  call.set_denomination(denomination);
  return call;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

std::optional<v1::Card> parse_card(std::string_view text) {
  const std::string card_text = upper(trimmed(text));
  if (card_text.size() < 2) return std::nullopt;
  const std::optional<v1::Suit> suit = suit_of_letter(card_text.back());
  const std::optional<v1::Rank> rank = rank_of_text(std::string_view(card_text).substr(0, card_text.size() - 1));
  if (!suit || !rank) return std::nullopt;
  v1::Card card;
  card.set_suit(*suit);
  card.set_rank(*rank);
  card.set_points(points_of(*rank));
  return card;
}

std::optional<v1::Call> parse_call(std::string_view text, std::uint32_t previous_number) {
  const std::string call_text = upper(trimmed(text));
  const std::string_view call(call_text);
  v1::Call plain;
  if (call == "PASS") plain.set_kind(v1::CALL_KIND_PASS);
  if (call == "DOUBLE") plain.set_kind(v1::CALL_KIND_DOUBLE);
  if (call == "REDOUBLE") plain.set_kind(v1::CALL_KIND_REDOUBLE);
  if (plain.kind() != v1::CALL_KIND_UNSPECIFIED) return plain;
  if (call.size() < 3) return std::nullopt;

  if (call.front() == '+') {  // +2S, +2NOES
    if (call == "+2NOES") {
      return bid(v1::BID_FORM_PLUS_NOES, 2, previous_number + 2, v1::DENOMINATION_NO_TRUMPS);
    }
    const std::optional<v1::Suit> suit = suit_of_letter(call.back());
    const std::optional<std::uint32_t> increment = small_number(call.substr(1, call.size() - 2));
    if (!suit || !increment || *increment < 1 || *increment > kHighestBid - kLowestBid) return std::nullopt;
    // Suit and Denomination share their numbers for the four suits.
    return bid(v1::BID_FORM_PLUS_SUIT, *increment, previous_number + *increment, static_cast<v1::Denomination>(*suit));
  }

  if (const std::optional<v1::Suit> suit = suit_of_letter(call.front())) {  // S28
    const std::optional<std::uint32_t> number = small_number(call.substr(1));
    if (!number || *number < kLowestBid || *number > kHighestBid) return std::nullopt;
    return bid(v1::BID_FORM_SUIT_NUMBER, *number, *number, static_cast<v1::Denomination>(*suit));
  }

  // 28S, 28NT, 28NOES
  v1::BidForm form = v1::BID_FORM_NUMBER_SUIT;
  v1::Denomination denomination = v1::DENOMINATION_UNSPECIFIED;
  std::string_view digits;
  if (ends_with(call, "NOES")) {
    form = v1::BID_FORM_NOES;
    denomination = v1::DENOMINATION_NO_TRUMPS;
    digits = call.substr(0, call.size() - 4);
  } else if (ends_with(call, "NT")) {
    form = v1::BID_FORM_NO_TRUMPS;
    denomination = v1::DENOMINATION_NO_TRUMPS;
    digits = call.substr(0, call.size() - 2);
  } else if (const std::optional<v1::Suit> suit = suit_of_letter(call.back())) {
    denomination = static_cast<v1::Denomination>(*suit);
    digits = call.substr(0, call.size() - 1);
  } else {
    return std::nullopt;
  }
  const std::optional<std::uint32_t> number = small_number(digits);
  if (!number || *number < kLowestBid || *number > kHighestBid) return std::nullopt;
  return bid(form, *number, *number, denomination);
}

}  // namespace fiftysix::kit
