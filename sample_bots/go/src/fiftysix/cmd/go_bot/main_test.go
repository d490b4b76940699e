package main

import (
	"testing"

	"fiftysix/bot"
	pb "fiftysix/v1"
)

var (
	match  = &bot.Match{Seat: 0, Players: 4, TeamOf: []int{0, 1, 0, 1}}
	spades = pb.Denomination_DENOMINATION_SPADES
	hand   = []bot.Card{{Suit: bot.Spades, Rank: bot.Jack}, {Suit: bot.Spades, Rank: bot.Ace}, {Suit: bot.Spades, Rank: bot.King}, {Suit: bot.Hearts, Rank: bot.Jack}}
	calls  = []bot.Call{
		{Kind: bot.Pass},
		{Kind: bot.Bid, Form: bot.NumberSuit, Number: 28, ContractNumber: 28, Denomination: pb.Denomination_DENOMINATION_HEARTS},
		{Kind: bot.Bid, Form: bot.SuitNumber, Number: 28, ContractNumber: 28, Denomination: spades},
		{Kind: bot.Bid, Form: bot.NumberSuit, Number: 28, ContractNumber: 28, Denomination: spades},
		{Kind: bot.Bid, Form: bot.NumberSuit, Number: 29, ContractNumber: 29, Denomination: spades},
	}
)

func auction(hand []bot.Card, highBidder int) *bot.Decision {
	view := &pb.View{}
	if highBidder >= 0 {
		view.HighBid = &pb.Bid{Seat: uint32(highBidder), Call: "28D", Number: 28}
	}
	return &bot.Decision{Match: match, Phase: bot.Auction, Hand: hand, Calls: calls, View: view, TrickWinner: -1}
}

func TestAuction(t *testing.T) {
	for name, test := range map[string]struct {
		decision *bot.Decision
		want     int
	}{
		"two jacks: the lowest bid in the longest suit, 28S holding its jack": {auction(hand, -1), 3},
		"one jack: pass":             {auction(hand[:3], -1), 0},
		"never over a partner's bid": {auction(hand, 2), 0},
		"over an opponent's bid":     {auction(hand, 1), 3},
	} {
		if got := (simple{}).Decide(test.decision); got != test.want {
			t.Errorf("%s: %s, want %s", name, calls[got], calls[test.want])
		}
	}
}

func TestPlay(t *testing.T) {
	cards := []bot.Card{{Suit: bot.Hearts, Rank: bot.Nine}, {Suit: bot.Spades, Rank: bot.Queen}, {Suit: bot.Hearts, Rank: bot.Queen}}
	for name, test := range map[string]struct {
		winner int
		want   int
	}{
		"a partner is winning: the lowest, a plain card before a trump": {2, 2},
		"an opponent is winning: the highest":                           {1, 0},
		"the table is empty: the highest":                               {-1, 0},
	} {
		decision := &bot.Decision{Match: match, Phase: bot.Play, Cards: cards, Trump: spades, TrickWinner: test.winner, View: &pb.View{}}
		if got := (simple{}).Decide(decision); got != test.want {
			t.Errorf("%s: %s, want %s", name, cards[got], cards[test.want])
		}
	}
}
