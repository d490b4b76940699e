// go_bot: the Go kit's sample bot, go-simple. It plays the JavaScript sample bot's strategy
// (sample_bots/js/bot.js), on the structured cards the kit gives it:
//
//   - Auction: pass unless the hand holds at least two jacks; then bid the lowest legal bid in the
//     longest suit (28S holding that suit's jack, S28 without it), never above maxBid and never over a
//     partner's bid. Never double or redouble.
//   - Play: when a partner is winning the trick, play the lowest-ranked legal card; otherwise the
//     highest-ranked one (of two cards of one rank, the trump counts as the higher).
//
// Usage: go_bot [--port N] [--host HOST] [--port-file PATH] [--socket PATH]
package main

import "fiftysix/bot"

// maxBid is the highest number it bids (a lost contract of 28 to 39 costs 2 tables, of 40 or more 3).
const maxBid = 32

type simple struct{}

func (simple) Decide(d *bot.Decision) int {
	if d.Phase == bot.Play {
		return chooseCard(d)
	}
	return chooseCall(d)
}

// longestSuit is the suit with the most cards; ties go to more points, then to the first in S H D C.
func longestSuit(hand []bot.Card) bot.Suit {
	best, bestCount, bestPoints := bot.Spades, -1, -1
	for _, suit := range bot.Suits {
		count, points := 0, 0
		for _, card := range hand {
			if card.Suit == suit {
				count, points = count+1, points+card.Points()
			}
		}
		if count > bestCount || (count == bestCount && points > bestPoints) {
			best, bestCount, bestPoints = suit, count, points
		}
	}
	return best
}

func chooseCall(d *bot.Decision) int {
	pass := 0
	for i, call := range d.Calls {
		if call.Kind == bot.Pass {
			pass = i
			break
		}
	}
	jacks := 0
	for _, card := range d.Hand {
		if card.Rank == bot.Jack {
			jacks++
		}
	}
	if high := d.View.GetHighBid(); jacks < 2 || (high != nil && d.Match.IsPartner(int(high.GetSeat()))) {
		return pass
	}
	suit := longestSuit(d.Hand)
	holdsJack := false
	for _, card := range d.Hand {
		holdsJack = holdsJack || card == bot.Card{Suit: suit, Rank: bot.Jack}
	}
	best, bestNumber := pass, maxBid+1
	for i, call := range d.Calls {
		withJack := call.Form == bot.NumberSuit
		plain := withJack || call.Form == bot.SuitNumber
		if !plain || call.Denomination != bot.Denomination(suit) || call.ContractNumber > maxBid {
			continue
		}
		// The lowest number; of its two forms, the one that tells the partner the truth about the jack.
		if call.ContractNumber < bestNumber || (call.ContractNumber == bestNumber && withJack == holdsJack) {
			best, bestNumber = i, call.ContractNumber
		}
	}
	return best
}

func chooseCard(d *bot.Decision) int {
	strength := func(card bot.Card) int {
		trump := 0
		if card.IsTrump(d.Trump) {
			trump = 1
		}
		return 2*int(bot.Seven+1-card.Rank) + trump
	}
	low := d.PartnerWinning()
	best := 0
	for i, card := range d.Cards {
		difference := strength(card) - strength(d.Cards[best])
		if (low && difference < 0) || (!low && difference > 0) {
			best = i
		}
	}
	return best
}

func main() {
	bot.Serve(
		bot.Info{Name: "go-simple", Version: "1.0.0", Author: "fiftysix arena"},
		func(*bot.Match) bot.Bot { return simple{} },
	)
}
