// Unit tests of the kit and the sample bot without a network: the command line, the notation an older
// arena sends and the structured fields filled in from it, one seat's conversation, the strategy.
// Table-driven, no framework: each failed check prints its line; the exit status is 1 if any failed.
// End-to-end tests (a real arena, the compliance check, matches) are tests/sample_bots/test_cpp_bot.py.

#include <cstdio>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_line.h"
#include "fiftysix/bot.h"
#include "notation.h"
#include "seat.h"
#include "strategy.h"
#include "structured.h"

namespace {

namespace v1 = fiftysix::v1;
namespace kit = fiftysix::kit;
using cpp_simple::Teams;

int failures = 0;

#define CHECK(condition)                                                                  \
  do {                                                                                    \
    if (!(condition)) {                                                                   \
      ++failures;                                                                         \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
    }                                                                                     \
  } while (false)

v1::Card card(const char* text) { return *kit::parse_card(text); }

bool same_card(const v1::Card& card, const char* text) {
  const v1::Card expected = ::card(text);
  return card.suit() == expected.suit() && card.rank() == expected.rank() && card.points() == expected.points();
}

// A view in notation only, as an arena of an older minor version of protocol 1 sends it.
v1::View view_with(std::uint32_t seat, std::initializer_list<const char*> hand, v1::Phase phase) {
  v1::View view;
  view.set_seat(seat);
  view.set_phase(phase);
  for (const char* card : hand) view.add_hand(card);
  return view;
}

void add_play(v1::View& view, std::uint32_t seat, const char* card) {
  v1::Play* play = view.add_trick();
  play->set_seat(seat);
  play->set_card(card);
}

v1::DecisionRequest decision_of(const v1::View& view, std::initializer_list<const char*> legal) {
  v1::DecisionRequest decision;
  decision.set_decision_id(7);
  *decision.mutable_view() = view;
  for (const char* move : legal) decision.add_legal_moves(move);
  return decision;
}

// The decision as the bot sees it: completed by the kit, then decided by the strategy.
std::size_t decide_from_notation(const v1::View& view, std::initializer_list<const char*> legal, const Teams& teams) {
  v1::DecisionRequest decision = decision_of(view, legal);
  kit::complete(decision);
  return cpp_simple::decide(decision.view(), decision.moves(), teams);
}

kit::Options parse(std::initializer_list<const char*> arguments) {
  std::vector<const char*> argv = {"/some/where/cpp_bot"};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return kit::parse_command_line(static_cast<int>(argv.size()), argv.data());
}

std::string usage_error(std::initializer_list<const char*> arguments) {
  try {
    parse(arguments);
  } catch (const kit::UsageError& error) {
    return error.message;
  }
  return "";
}

void test_command_line() {
  const kit::Options defaults = parse({});
  CHECK(defaults.port == 50051 && defaults.host == "127.0.0.1" && !defaults.port_file && !defaults.socket);
  const kit::Options given = parse({"--port", "0", "--port-file=/tmp/p", "--host", "::1"});
  CHECK(given.port == 0 && given.port_file == "/tmp/p" && given.host == "::1");
  CHECK(parse({"--socket", "/tmp/arena/bot.sock"}).socket == "/tmp/arena/bot.sock");
  // The arena adds --socket to an upload's run command: it wins over a port the command names.
  CHECK(parse({"--port", "0", "--socket=/tmp/s"}).socket == "/tmp/s");
  CHECK(parse({"--port", "9", "--help"}).help);
  CHECK(usage_error({"--port", "65536"}) == "--port needs a number from 0 to 65535, got '65536'");
  CHECK(usage_error({"--port", "-1"}) == "--port needs a number from 0 to 65535, got '-1'");
  CHECK(usage_error({"--port"}) == "--port needs a value");
  CHECK(usage_error({"--verbose"}) == "unknown argument '--verbose'");
  CHECK(usage_error({"--socket="}) == "--socket needs a path");
  CHECK(usage_error({"--socket", "/s", "--port-file", "/p"}) == "--port-file goes with a port, not with --socket");
  const char* argv[] = {"/some/where/cpp_bot"};
  CHECK(kit::program_name(1, argv) == "cpp_bot");
  CHECK(kit::program_name(0, argv) == "bot");
  CHECK(kit::usage("cpp_bot").find("usage: cpp_bot [--port N]") != std::string::npos);
}

void test_cards() {
  struct Case {
    const char* text;
    bool valid;
    v1::Suit suit;
    v1::Rank rank;
    std::uint32_t points;
  };
  const Case cases[] = {
      {"JS", true, v1::SUIT_SPADES, v1::RANK_JACK, 3},   {"9h", true, v1::SUIT_HEARTS, v1::RANK_NINE, 2},
      {"TD", true, v1::SUIT_DIAMONDS, v1::RANK_TEN, 1},  {"10c", true, v1::SUIT_CLUBS, v1::RANK_TEN, 1},
      {"AS", true, v1::SUIT_SPADES, v1::RANK_ACE, 1},    {"7C", true, v1::SUIT_CLUBS, v1::RANK_SEVEN, 0},
      {"QH", true, v1::SUIT_HEARTS, v1::RANK_QUEEN, 0},  {"", false, {}, {}, 0},
      {"J", false, {}, {}, 0},                           {"1S", false, {}, {}, 0},
      {"JX", false, {}, {}, 0},                          {"28S", false, {}, {}, 0},
  };
  for (const Case& test : cases) {
    const std::optional<v1::Card> card = kit::parse_card(test.text);
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
    v1::CallKind kind;
    v1::BidForm form;
    std::uint32_t number;
    std::uint32_t contract_number;
    v1::Denomination denomination;
  };
  const Case cases[] = {
      {"pass", true, v1::CALL_KIND_PASS, v1::BID_FORM_UNSPECIFIED, 0, 0, v1::DENOMINATION_UNSPECIFIED},
      {"DOUBLE", true, v1::CALL_KIND_DOUBLE, v1::BID_FORM_UNSPECIFIED, 0, 0, v1::DENOMINATION_UNSPECIFIED},
      {"redouble", true, v1::CALL_KIND_REDOUBLE, v1::BID_FORM_UNSPECIFIED, 0, 0, v1::DENOMINATION_UNSPECIFIED},
      {"28S", true, v1::CALL_KIND_BID, v1::BID_FORM_NUMBER_SUIT, 28, 28, v1::DENOMINATION_SPADES},
      {"h31", true, v1::CALL_KIND_BID, v1::BID_FORM_SUIT_NUMBER, 31, 31, v1::DENOMINATION_HEARTS},
      {"40NT", true, v1::CALL_KIND_BID, v1::BID_FORM_NO_TRUMPS, 40, 40, v1::DENOMINATION_NO_TRUMPS},
      {"29NOES", true, v1::CALL_KIND_BID, v1::BID_FORM_NOES, 29, 29, v1::DENOMINATION_NO_TRUMPS},
      {"+2D", true, v1::CALL_KIND_BID, v1::BID_FORM_PLUS_SUIT, 2, 32, v1::DENOMINATION_DIAMONDS},
      {"+2NOES", true, v1::CALL_KIND_BID, v1::BID_FORM_PLUS_NOES, 2, 32, v1::DENOMINATION_NO_TRUMPS},
      {"56C", true, v1::CALL_KIND_BID, v1::BID_FORM_NUMBER_SUIT, 56, 56, v1::DENOMINATION_CLUBS},
      {"27S", false, {}, {}, 0, 0, {}},
      {"57S", false, {}, {}, 0, 0, {}},
      {"+3NOES", false, {}, {}, 0, 0, {}},
      {"+0S", false, {}, {}, 0, 0, {}},
      {"28X", false, {}, {}, 0, 0, {}},
      {"S", false, {}, {}, 0, 0, {}},
      {"JS", false, {}, {}, 0, 0, {}},
  };
  for (const Case& test : cases) {
    const std::optional<v1::Call> call = kit::parse_call(test.text, 30);
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

void test_a_decision_is_completed_from_its_notation() {
  v1::View view = view_with(3, {"JH", "9H", "??"}, v1::PHASE_PLAY);
  view.mutable_contract()->set_denomination(v1::DENOMINATION_SPADES);
  add_play(view, 0, "TH");
  add_play(view, 1, "AH");
  add_play(view, 2, "KH");
  v1::Trick* done = view.add_tricks();
  done->set_winner(2);
  for (const auto& [seat, text] : {std::pair{1U, "QD"}, {2U, "JD"}, {3U, "JD"}, {0U, "9D"}}) {
    v1::Play* play = done->add_plays();
    play->set_seat(seat);
    play->set_card(text);
  }
  v1::DecisionRequest decision = decision_of(view, {"JH", "9H", "pass", "zz"});
  kit::complete(decision);
  const v1::View& completed = decision.view();
  CHECK(decision.moves_size() == 4 && same_card(decision.moves(0).card(), "JH"));
  CHECK(same_card(decision.moves(1).card(), "9H"));
  CHECK(decision.moves(2).call().kind() == v1::CALL_KIND_PASS);
  CHECK(!decision.moves(3).has_card() && !decision.moves(3).has_call());  // unreadable: an empty move
  // hand_cards one for one with hand, an unreadable card an empty one.
  CHECK(completed.hand_cards_size() == 3 && same_card(completed.hand_cards(1), "9H"));
  CHECK(completed.hand_cards(2).suit() == v1::SUIT_UNSPECIFIED);
  CHECK(completed.trump() == v1::DENOMINATION_SPADES);  // from the contract
  CHECK(completed.led_suit() == v1::SUIT_HEARTS);
  CHECK(same_card(completed.trick(1).played_card(), "AH"));
  CHECK(completed.has_trick_winner() && completed.trick_winner() == 1);
  CHECK(same_card(completed.trick_winning_card(), "AH"));
  CHECK(same_card(completed.tricks(0).plays(3).played_card(), "9D"));
  CHECK(same_card(completed.tricks(0).winning_card(), "JD"));

  // A trump wins over the suit led; of two identical cards the first played.
  v1::View trumped = view;
  add_play(trumped, 3, "7S");
  v1::DecisionRequest ruffed = decision_of(trumped, {"JH"});
  kit::complete(ruffed);
  CHECK(ruffed.view().trick_winner() == 3 && same_card(ruffed.view().trick_winning_card(), "7S"));
  v1::View twins = view_with(0, {}, v1::PHASE_PLAY);
  twins.set_trump(v1::DENOMINATION_NO_TRUMPS);
  add_play(twins, 1, "JD");
  add_play(twins, 2, "JS");
  add_play(twins, 3, "JD");
  v1::DecisionRequest first = decision_of(twins, {"JH"});
  kit::complete(first);
  CHECK(first.view().trick_winner() == 1 && first.view().trump() == v1::DENOMINATION_NO_TRUMPS);
}

void test_what_the_arena_sent_is_kept() {
  v1::DecisionRequest decision =
      decision_of(view_with(0, {"JS", "JH", "9S", "AS"}, v1::PHASE_PLAY), {"pass", "28S", "S28"});
  // Structured moves that say otherwise than the notation: the structured ones are what the bot gets.
  decision.add_moves()->mutable_call()->set_kind(v1::CALL_KIND_PASS);
  *decision.add_moves()->mutable_call() = *kit::parse_call("S28", 0);
  *decision.add_moves()->mutable_call() = *kit::parse_call("28S", 0);
  add_play(*decision.mutable_view(), 2, "KD");
  *decision.mutable_view()->mutable_trick(0)->mutable_played_card() = card("QC");
  decision.mutable_view()->set_trick_winner(2);
  decision.mutable_view()->set_trump(v1::DENOMINATION_HEARTS);
  decision.mutable_view()->mutable_contract()->set_denomination(v1::DENOMINATION_SPADES);
  for (const char* text : {"JS", "JH", "9S", "AC"}) *decision.mutable_view()->add_hand_cards() = card(text);
  v1::DecisionRequest completed = decision;
  kit::complete(completed);
  CHECK(completed.moves(1).call().form() == v1::BID_FORM_SUIT_NUMBER);
  CHECK(same_card(completed.view().hand_cards(3), "AC"));
  CHECK(same_card(completed.view().trick(0).played_card(), "QC"));
  CHECK(same_card(completed.view().trick_winning_card(), "QC"));  // the winner's card, as sent
  CHECK(completed.view().trump() == v1::DENOMINATION_HEARTS);
  // Lists not one for one with their notation are not believed: the notation is read instead.
  decision.add_moves();
  decision.mutable_view()->add_hand_cards();
  kit::complete(decision);
  CHECK(decision.moves_size() == 3 && decision.moves(1).call().form() == v1::BID_FORM_NUMBER_SUIT);
  CHECK(decision.view().hand_cards_size() == 4 && same_card(decision.view().hand_cards(3), "AS"));
}

void test_a_deal_end_is_completed() {
  v1::DealEnd deal_end;
  v1::Hand* hand = deal_end.add_hands();
  hand->add_cards("JS");
  hand->add_cards("TC");
  v1::Trick* trick = deal_end.add_tricks();
  trick->set_winner(1);
  for (const auto& [seat, text] : {std::pair{0U, "9S"}, {1U, "JS"}}) {
    v1::Play* play = trick->add_plays();
    play->set_seat(seat);
    play->set_card(text);
  }
  kit::complete(deal_end);
  CHECK(deal_end.hands(0).dealt_cards_size() == 2 && same_card(deal_end.hands(0).dealt_cards(1), "TC"));
  CHECK(same_card(deal_end.tricks(0).plays(0).played_card(), "9S"));
  CHECK(same_card(deal_end.tricks(0).winning_card(), "JS"));
}

// A bot that records what the kit gives it, and throws when told to.
class RecordingBot final : public fiftysix::Bot {
 public:
  explicit RecordingBot(std::vector<std::string>& events, std::size_t index = 0) : events_(events), index_(index) {}

  fiftysix::Description describe() const override { return {}; }
  void on_match_start(const v1::MatchStart& start) override {
    events_.push_back("match_start " + std::to_string(start.seat()));
  }
  std::size_t decide(const v1::View& view, const fiftysix::Moves& moves, const v1::DecisionRequest& decision) override {
    if (decision.decision_ms() == 13) throw std::runtime_error("unlucky");
    events_.push_back("decide " + std::to_string(moves.size()) + " " + std::to_string(view.hand_cards_size()));
    return index_;
  }
  void on_deal_end(const v1::DealEnd& deal_end) override {
    events_.push_back("deal_end " + std::to_string(deal_end.hands(0).dealt_cards_size()));
  }
  void on_match_end(const v1::MatchEnd& /*match_end*/) override { events_.push_back("match_end"); }

 private:
  std::vector<std::string>& events_;
  std::size_t index_;
};

void test_conversation() {
  std::vector<std::string> events;
  kit::Seat seat(std::make_unique<RecordingBot>(events, 1));
  v1::PlaySeatRequest request;
  request.mutable_decision()->set_decision_id(1);
  CHECK(seat.handle(request).rejection == "decision before match_start");

  v1::PlaySeatRequest start;
  start.mutable_match_start()->set_seat(1);
  start.mutable_match_start()->set_match_id("m1");
  kit::Step step = seat.handle(start);
  CHECK(step.response && step.response->has_ready());
  CHECK(seat.seat() == 1U && seat.match_id() == "m1");
  CHECK(seat.handle(start).rejection == "a second match_start on one stream");

  v1::PlaySeatRequest decision;
  *decision.mutable_decision() = decision_of(view_with(1, {"JS", "9S"}, v1::PHASE_PLAY), {"JS", "9S"});
  decision.mutable_decision()->set_decision_id(18446744073709551615ULL);
  step = seat.handle(decision);
  CHECK(step.response && step.response->move().decision_id() == 18446744073709551615ULL);
  CHECK(step.response->move().move_index() == 1);

  v1::PlaySeatRequest nothing;  // an event this kit does not know: ignored
  step = seat.handle(nothing);
  CHECK(!step.response && !step.finished && step.rejection.empty() && step.failure.empty());

  v1::PlaySeatRequest deal_end;
  deal_end.mutable_deal_end()->add_hands()->add_cards("JS");
  step = seat.handle(deal_end);
  CHECK(!step.response && !step.finished && step.rejection.empty());

  v1::PlaySeatRequest match_end;
  match_end.mutable_match_end();
  step = seat.handle(match_end);
  CHECK(!step.response && step.finished && step.rejection.empty());
  CHECK((events == std::vector<std::string>{"match_start 1", "decide 2 2", "deal_end 1", "match_end"}));

  // A bot that throws: the stream ends with the reason; an index out of range is sent as it is.
  kit::Seat failing(std::make_unique<RecordingBot>(events, 5));
  failing.handle(start);
  decision.mutable_decision()->set_decision_ms(13);
  CHECK(failing.handle(decision).failure == "the bot threw: unlucky");
  decision.mutable_decision()->set_decision_ms(1000);
  step = failing.handle(decision);
  CHECK(step.failure.empty() && step.response->move().move_index() == 5);
}

void test_longest_suit() {
  const auto hand = [](std::initializer_list<const char*> cards) {
    cpp_simple::Cards parsed;
    for (const char* text : cards) *parsed.Add() = card(text);
    return parsed;
  };
  CHECK(cpp_simple::longest_suit(hand({"JS", "9H", "AH", "KH"})) == v1::SUIT_HEARTS);
  CHECK(cpp_simple::longest_suit(hand({"KS", "QS", "JH", "9H"})) == v1::SUIT_HEARTS);  // tie: more points
  CHECK(cpp_simple::longest_suit(hand({"KD", "KC"})) == v1::SUIT_DIAMONDS);            // tie: first in S H D C
  CHECK(cpp_simple::longest_suit({}) == v1::SUIT_SPADES);
}

void test_auction() {
  const Teams teams = {0, 1, 0, 1};
  // One jack: pass (wherever pass is).
  CHECK(decide_from_notation(view_with(0, {"JS", "9S", "AH", "KH", "QD", "TC"}, v1::PHASE_AUCTION),
                             {"28S", "pass", "S28"}, teams) == 1);
  // Two jacks, spades the longest with its jack: the lowest bid, in the 28S form.
  const v1::View strong = view_with(0, {"JS", "9S", "AS", "JH", "QD", "TC"}, v1::PHASE_AUCTION);
  CHECK(decide_from_notation(strong, {"pass", "S28", "28S", "28H", "S29", "29S"}, teams) == 2);
  // Hearts the longest without its jack: the S28 form.
  const v1::View hearts = view_with(0, {"JS", "9H", "AH", "KH", "JD", "TC"}, v1::PHASE_AUCTION);
  CHECK(decide_from_notation(hearts, {"pass", "28H", "H28", "29H"}, teams) == 2);
  // No bid of that suit up to 32: pass.
  CHECK(decide_from_notation(strong, {"pass", "double", "33S", "S33"}, teams) == 0);
  // Never over a partner's bid.
  v1::View over_partner = strong;
  over_partner.mutable_high_bid()->set_seat(2);
  over_partner.mutable_high_bid()->set_number(28);
  CHECK(decide_from_notation(over_partner, {"pass", "29S", "S29"}, teams) == 0);
  // Over an opponent's bid it bids.
  v1::View over_opponent = over_partner;
  over_opponent.mutable_high_bid()->set_seat(1);
  CHECK(decide_from_notation(over_opponent, {"pass", "double", "29S", "S29"}, teams) == 2);
}

void test_play() {
  const Teams teams = {0, 1, 0, 1};
  v1::View view = view_with(3, {"JH", "9H", "KH", "QS"}, v1::PHASE_PLAY);
  view.set_trump(v1::DENOMINATION_SPADES);
  // Nothing on the table: the highest card.
  CHECK(decide_from_notation(view, {"JH", "9H", "KH", "QS"}, teams) == 0);
  // The partner (seat 1) winning: the lowest card.
  v1::View partner = view;
  add_play(partner, 0, "TH");
  add_play(partner, 1, "AH");
  add_play(partner, 2, "KH");
  CHECK(decide_from_notation(partner, {"JH", "9H", "KH"}, teams) == 2);
  // An opponent winning: play high.
  partner.set_trick_winner(2);
  CHECK(decide_from_notation(partner, {"JH", "9H", "KH"}, teams) == 0);
  // A trump counts over a plain card of the same rank: high is the trump, low the plain card.
  v1::View equal = view_with(0, {"KS", "KH"}, v1::PHASE_PLAY);
  equal.set_trump(v1::DENOMINATION_SPADES);
  CHECK(decide_from_notation(equal, {"KH", "KS"}, teams) == 1);
  // With no trumps the first of two equal cards.
  equal.set_trump(v1::DENOMINATION_NO_TRUMPS);
  CHECK(decide_from_notation(equal, {"KH", "KS"}, teams) == 0);
}

void test_odd_requests() {
  const Teams teams = {0, 1, 0, 1};
  // No moves at all: index 0.
  CHECK(decide_from_notation(view_with(0, {}, v1::PHASE_PLAY), {}, teams) == 0);
  // Notation that does not read, values out of every enum's range, seats without a team: still an
  // index in range.
  v1::View odd = view_with(9, {"JS", "JH", "??"}, static_cast<v1::Phase>(77));
  odd.set_trump(static_cast<v1::Denomination>(99));
  odd.mutable_high_bid()->set_seat(42);
  CHECK(decide_from_notation(odd, {"??", "28S", "zz"}, teams) < 3);
  v1::DecisionRequest cards = decision_of(view_with(1, {"JS"}, v1::PHASE_PLAY), {"JS", "9S"});
  v1::Card* weird = cards.add_moves()->mutable_card();
  weird->set_rank(static_cast<v1::Rank>(1000));
  weird->set_suit(static_cast<v1::Suit>(-3));
  cards.add_moves()->mutable_card()->set_rank(v1::RANK_NINE);
  cards.mutable_view()->set_trick_winner(12345);
  kit::complete(cards);
  CHECK(cpp_simple::decide(cards.view(), cards.moves(), {}) == 1);
  // A mixture of cards and calls is decided by the phase and never picks the wrong kind.
  CHECK(decide_from_notation(view_with(0, {"JS"}, v1::PHASE_PLAY), {"pass", "JS"}, teams) == 1);
}

}  // namespace

int main() {
  test_command_line();
  test_cards();
  test_calls();
  test_a_decision_is_completed_from_its_notation();
  test_what_the_arena_sent_is_kept();
  test_a_deal_end_is_completed();
  test_conversation();
  test_longest_suit();
  test_auction();
  test_play();
  test_odd_requests();
  if (failures == 0) std::puts("cpp_bot_tests: all passed");
  return failures == 0 ? 0 : 1;
}
