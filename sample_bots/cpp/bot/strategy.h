// The strategy of the JavaScript sample bot (sample_bots/js/bot.js), decided on structured values:
//
// - Auction: pass unless the hand holds at least two jacks; then bid the lowest legal bid in the longest
//   suit (`28S` form when holding that suit's jack, `S28` otherwise), never above kMaxBid and never over
//   a partner's bid. Never doubles or redoubles.
// - Play: when a partner is winning the trick, play the lowest-ranked legal card; otherwise the
//   highest-ranked one (rank order J 9 A T K Q 8 7; of two cards of one rank the trump counts as the
//   higher, so playing low spends a plain card and playing high a trump).
//
// Nothing here throws or trusts the arena: an odd request (no moves, moves of the wrong kind, values out
// of an enum's range, a seat without a team) still gives an index, a legal one whenever there is any.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fiftysix/bot.h"

namespace cpp_simple {

namespace v1 = fiftysix::v1;
using Cards = google::protobuf::RepeatedPtrField<v1::Card>;

// The highest number this bot ever bids (a contract of 28-39 costs 2 tables when lost, 40 or more 3).
inline constexpr std::uint32_t kMaxBid = 32;

// The team of every seat, indexed by seat (MatchStart.team_of_seats).
using Teams = std::vector<std::uint32_t>;

// The index into `moves` of the move to make; 0 when there is no move at all.
std::size_t decide(const v1::View& view, const fiftysix::Moves& moves, const Teams& teams);

// A call in the auction, as decide() makes it.
std::size_t choose_call(const v1::View& view, const fiftysix::Moves& moves, const Teams& teams);

// A card in the play, as decide() makes it.
std::size_t choose_card(const v1::View& view, const fiftysix::Moves& moves, const Teams& teams);

// The suit with the most cards; ties go to the one with more points, then to the first in S H D C.
v1::Suit longest_suit(const Cards& hand);

}  // namespace cpp_simple
