// Unit tests of the bot's logic without a network: notation, strategy, and one seat's conversation.
// Table-driven, no framework: each failed check prints its line; the exit status is the number failed.
// End-to-end tests (a real arena, the compliance check, matches) are tests/sample_bots/test_cpp_bot.py.

#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "notation.h"
#include "seat.h"
#include "strategy.h"

namespace {

namespace pb = fiftysix::v1;
using cppbot::Teams;

int failures = 0;

#define CHECK(condition)                                                       \
  do {                                                                         \
    if (!(condition)) {                                                        \
      ++failures;                                                              \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
    }                                                                          \
  } while (false)

pb::View view_with(std::uint32_t seat, std::initializer_list<const char*> hand, pb::Phase phase) {
  pb::View view;
  view.set_seat(seat);
  view.set_phase(phase);
  for (const char* card : hand) view.add_hand(card);
  return view;
}

pb::DecisionRequest decision_of(const pb::View& view, std::initializer_list<const char*> legal) {
  pb::DecisionRequest decision;
  decision.set_decision_id(7);
  *decision.mutable_view() = view;
  for (const char* move : legal) decision.add_legal_moves(move);
  return decision;
}

std::uint32_t decide_from_notation(const pb::View& view, std::initializer_list<const char*> legal,
                                   const Teams& teams) {
  const pb::DecisionRequest decision = decision_of(view, legal);
  return cppbot::decide(decision.view(), cppbot::structured_moves(decision), teams);
}

void test_cards() {
  struct Case {
    const char* text;
    bool valid;
    pb::Suit suit;
    pb::Rank rank;
    std::uint32_t points;
  };
  const Case cases[] = {
      {"JS", true, pb::SUIT_SPADES, pb::RANK_JACK, 3},   {"9h", true, pb::SUIT_HEARTS, pb::RANK_NINE, 2},
      {"TD", true, pb::SUIT_DIAMONDS, pb::RANK_TEN, 1},  {"10c", true, pb::SUIT_CLUBS, pb::RANK_TEN, 1},
      {"AS", true, pb::SUIT_SPADES, pb::RANK_ACE, 1},    {"7C", true, pb::SUIT_CLUBS, pb::RANK_SEVEN, 0},
      {"QH", true, pb::SUIT_HEARTS, pb::RANK_QUEEN, 0},  {"", false, {}, {}, 0},
      {"J", false, {}, {}, 0},                           {"1S", false, {}, {}, 0},
      {"JX", false, {}, {}, 0},                          {"28S", false, {}, {}, 0},
  };
  for (const Case& test : cases) {
    const std::optional<pb::Card> card = cppbot::parse_card(test.text);
    CHECK(card.has_value() == test.valid);
    if (card && test.valid) {
      CHECK(card->suit() == test.suit);
      CHECK(card->rank() == test.rank);
      CHECK(card->points() == test.points);
    }
  }
}

void test_calls() {
  struct Case {
    const char* text;
    bool valid;
    pb::CallKind kind;
    pb::BidForm form;
    std::uint32_t number;
    std::uint32_t contract_number;
    pb::Denomination denomination;
  };
  const Case cases[] = {
      {"pass", true, pb::CALL_KIND_PASS, pb::BID_FORM_UNSPECIFIED, 0, 0, pb::DENOMINATION_UNSPECIFIED},
      {"DOUBLE", true, pb::CALL_KIND_DOUBLE, pb::BID_FORM_UNSPECIFIED, 0, 0, pb::DENOMINATION_UNSPECIFIED},
      {"redouble", true, pb::CALL_KIND_REDOUBLE, pb::BID_FORM_UNSPECIFIED, 0, 0, pb::DENOMINATION_UNSPECIFIED},
      {"28S", true, pb::CALL_KIND_BID, pb::BID_FORM_NUMBER_SUIT, 28, 28, pb::DENOMINATION_SPADES},
      {"h31", true, pb::CALL_KIND_BID, pb::BID_FORM_SUIT_NUMBER, 31, 31, pb::DENOMINATION_HEARTS},
      {"40NT", true, pb::CALL_KIND_BID, pb::BID_FORM_NO_TRUMPS, 40, 40, pb::DENOMINATION_NO_TRUMPS},
      {"29NOES", true, pb::CALL_KIND_BID, pb::BID_FORM_NOES, 29, 29, pb::DENOMINATION_NO_TRUMPS},
      {"+2D", true, pb::CALL_KIND_BID, pb::BID_FORM_PLUS_SUIT, 2, 32, pb::DENOMINATION_DIAMONDS},
      {"+2NOES", true, pb::CALL_KIND_BID, pb::BID_FORM_PLUS_NOES, 2, 32, pb::DENOMINATION_NO_TRUMPS},
      {"56C", true, pb::CALL_KIND_BID, pb::BID_FORM_NUMBER_SUIT, 56, 56, pb::DENOMINATION_CLUBS},
      {"27S", false, {}, {}, 0, 0, {}},
      {"57S", false, {}, {}, 0, 0, {}},
      {"+3NOES", false, {}, {}, 0, 0, {}},
      {"+0S", false, {}, {}, 0, 0, {}},
      {"28X", false, {}, {}, 0, 0, {}},
      {"S", false, {}, {}, 0, 0, {}},
      {"JS", false, {}, {}, 0, 0, {}},
  };
  for (const Case& test : cases) {
    const std::optional<pb::Call> call = cppbot::parse_call(test.text, 30);
    CHECK(call.has_value() == test.valid);
    if (call && test.valid) {
      CHECK(call->kind() == test.kind);
      CHECK(call->form() == test.form);
      CHECK(call->number() == test.number);
      CHECK(call->contract_number() == test.contract_number);
      CHECK(call->denomination() == test.denomination);
    }
  }
}

void test_longest_suit() {
  const auto hand = [](std::initializer_list<const char*> cards) {
    std::vector<pb::Card> parsed;
    for (const char* card : cards) parsed.push_back(*cppbot::parse_card(card));
    return parsed;
  };
  CHECK(cppbot::longest_suit(hand({"JS", "9H", "AH", "KH"})) == pb::SUIT_HEARTS);
  CHECK(cppbot::longest_suit(hand({"KS", "QS", "JH", "9H"})) == pb::SUIT_HEARTS);  // tie: more points
  CHECK(cppbot::longest_suit(hand({"KD", "KC"})) == pb::SUIT_DIAMONDS);            // tie: first in S H D C
  CHECK(cppbot::longest_suit({}) == pb::SUIT_SPADES);
}

void test_auction() {
  const Teams teams = {0, 1, 0, 1};
  // One jack: pass (wherever pass is).
  CHECK(decide_from_notation(view_with(0, {"JS", "9S", "AH", "KH", "QD", "TC"}, pb::PHASE_AUCTION),
                             {"28S", "pass", "S28"}, teams) == 1);
  // Two jacks, spades the longest with its jack: the lowest bid, in the 28S form.
  const pb::View strong = view_with(0, {"JS", "9S", "AS", "JH", "QD", "TC"}, pb::PHASE_AUCTION);
  CHECK(decide_from_notation(strong, {"pass", "S28", "28S", "28H", "S29", "29S"}, teams) == 2);
  // Hearts the longest without its jack: the S28 form.
  const pb::View hearts = view_with(0, {"JS", "9H", "AH", "KH", "JD", "TC"}, pb::PHASE_AUCTION);
  CHECK(decide_from_notation(hearts, {"pass", "28H", "H28", "29H"}, teams) == 2);
  // No bid of that suit up to 32: pass.
  CHECK(decide_from_notation(strong, {"pass", "double", "33S", "S33"}, teams) == 0);
  // Never over a partner's bid.
  pb::View over_partner = strong;
  over_partner.mutable_high_bid()->set_seat(2);
  over_partner.mutable_high_bid()->set_number(28);
  CHECK(decide_from_notation(over_partner, {"pass", "29S", "S29"}, teams) == 0);
  // Over an opponent's bid it bids.
  pb::View over_opponent = over_partner;
  over_opponent.mutable_high_bid()->set_seat(1);
  CHECK(decide_from_notation(over_opponent, {"pass", "double", "29S", "S29"}, teams) == 2);
}

void test_play() {
  const Teams teams = {0, 1, 0, 1};
  pb::View view = view_with(3, {"JH", "9H", "KH", "QS"}, pb::PHASE_PLAY);
  view.mutable_contract()->set_denomination(pb::DENOMINATION_SPADES);
  // Nothing on the table: the highest card.
  CHECK(decide_from_notation(view, {"JH", "9H", "KH", "QS"}, teams) == 0);
  // The partner (seat 1) winning: the lowest card; of two queens-or-lower the plain one.
  pb::View partner = view;
  auto* play = partner.add_trick();
  play->set_seat(0);
  play->set_card("TH");
  play = partner.add_trick();
  play->set_seat(1);
  play->set_card("AH");
  play = partner.add_trick();
  play->set_seat(2);
  play->set_card("KH");
  CHECK(decide_from_notation(partner, {"JH", "9H", "KH"}, teams) == 2);
  // An opponent trumps: the trump wins the trick, so play high.
  play = partner.add_trick();
  play->set_seat(2);
  play->set_card("7S");
  CHECK(decide_from_notation(partner, {"JH", "9H", "KH"}, teams) == 0);
  // trick_winner, when the arena fills it, is believed over the cards.
  pb::View told = partner;
  told.set_trick_winner(1);
  CHECK(decide_from_notation(told, {"JH", "9H", "KH"}, teams) == 2);
  // A trump counts over a plain card of the same rank: high is the trump, low the plain card.
  pb::View equal = view_with(0, {"KS", "KH"}, pb::PHASE_PLAY);
  equal.set_trump(pb::DENOMINATION_SPADES);
  CHECK(decide_from_notation(equal, {"KH", "KS"}, teams) == 1);
  // With no trumps the first of two equal cards.
  equal.set_trump(pb::DENOMINATION_NO_TRUMPS);
  equal.mutable_contract()->set_denomination(pb::DENOMINATION_SPADES);  // trump wins over the contract
  CHECK(decide_from_notation(equal, {"KH", "KS"}, teams) == 0);
}

void test_structured_moves_are_used_as_sent() {
  pb::DecisionRequest decision = decision_of(view_with(0, {"JS", "JH", "9S", "AS"}, pb::PHASE_AUCTION),
                                             {"pass", "28S", "S28"});
  // Structured moves that say otherwise than the notation: the structured ones are what the bot reads.
  decision.add_moves()->mutable_call()->set_kind(pb::CALL_KIND_PASS);
  pb::Call* low = decision.add_moves()->mutable_call();
  *low = *cppbot::parse_call("S28", 0);
  pb::Call* high = decision.add_moves()->mutable_call();
  *high = *cppbot::parse_call("28S", 0);
  CHECK(cppbot::structured_moves(decision)[1].call().form() == pb::BID_FORM_SUIT_NUMBER);
  CHECK(cppbot::answer(decision, {0, 1, 0, 1}).move().move_index() == 2);
  // Moves not parallel to legal_moves are not believed: the notation is read instead.
  decision.add_moves();
  CHECK(cppbot::answer(decision, {0, 1, 0, 1}).move().move_index() == 1);
}

void test_odd_requests() {
  const Teams teams = {0, 1, 0, 1};
  // No moves at all: index 0, the decision id echoed.
  pb::DecisionRequest empty;
  empty.set_decision_id(18446744073709551615ULL);
  CHECK(cppbot::answer(empty, teams).move().move_index() == 0);
  CHECK(cppbot::answer(empty, teams).move().decision_id() == 18446744073709551615ULL);
  // Notation that does not read, values out of every enum's range, seats without a team: still an
  // index in range.
  pb::DecisionRequest odd = decision_of(view_with(9, {"JS", "JH", "??"}, static_cast<pb::Phase>(77)),
                                        {"??", "28S", "zz"});
  odd.mutable_view()->set_trump(static_cast<pb::Denomination>(99));
  odd.mutable_view()->mutable_high_bid()->set_seat(42);
  CHECK(cppbot::answer(odd, teams).move().move_index() < 3);
  pb::DecisionRequest cards = decision_of(view_with(1, {"JS"}, pb::PHASE_PLAY), {"JS", "9S"});
  pb::Card* weird = cards.add_moves()->mutable_card();
  weird->set_rank(static_cast<pb::Rank>(1000));
  weird->set_suit(static_cast<pb::Suit>(-3));
  cards.add_moves()->mutable_card()->set_rank(pb::RANK_NINE);
  cards.mutable_view()->set_trick_winner(12345);
  CHECK(cppbot::answer(cards, {}).move().move_index() == 1);
  // A mixture of cards and calls is decided by the phase and never picks the wrong kind.
  pb::DecisionRequest mixed = decision_of(view_with(0, {"JS"}, pb::PHASE_PLAY), {"pass", "JS"});
  CHECK(cppbot::answer(mixed, teams).move().move_index() == 1);
}

void test_conversation() {
  cppbot::Seat seat;
  pb::PlaySeatRequest request;
  request.mutable_decision()->set_decision_id(1);
  CHECK(seat.handle(request).rejection == "decision before match_start");

  pb::PlaySeatRequest start;
  start.mutable_match_start()->set_seat(1);
  for (const std::uint32_t team : {0U, 1U, 0U, 1U}) start.mutable_match_start()->add_team_of_seats(team);
  cppbot::Step step = seat.handle(start);
  CHECK(step.response && step.response->has_ready());
  CHECK(seat.handle(start).rejection == "a second match_start on one stream");

  pb::PlaySeatRequest decision;
  *decision.mutable_decision() = decision_of(view_with(1, {"JS"}, pb::PHASE_PLAY), {"JS"});
  decision.mutable_decision()->set_decision_id(99);
  step = seat.handle(decision);
  CHECK(step.response && step.response->move().decision_id() == 99 && step.response->move().move_index() == 0);

  pb::PlaySeatRequest nothing;  // an event this bot does not know: ignored
  step = seat.handle(nothing);
  CHECK(!step.response && !step.finished && step.rejection.empty());

  pb::PlaySeatRequest deal_end;
  deal_end.mutable_deal_end();
  step = seat.handle(deal_end);
  CHECK(!step.response && !step.finished && step.rejection.empty());

  pb::PlaySeatRequest match_end;
  match_end.mutable_match_end();
  step = seat.handle(match_end);
  CHECK(!step.response && step.finished && step.rejection.empty());
}

}  // namespace

int main() {
  test_cards();
  test_calls();
  test_longest_suit();
  test_auction();
  test_play();
  test_structured_moves_are_used_as_sent();
  test_odd_requests();
  test_conversation();
  if (failures == 0) std::puts("cpp_bot_tests: all passed");
  return failures == 0 ? 0 : 1;
}
