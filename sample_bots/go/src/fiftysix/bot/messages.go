package bot

import (
	pb "fiftysix/v1"
)

// Match is the start of a match, for the seat a bot plays.
type Match struct {
	ID        string
	Seat      int
	Players   int
	Ruleset   Ruleset
	DealCap   int // the most deals the match lasts; 0 for no cap
	TeamOf    []int
	SeatNames []string
	// DecisionMs is the time for each decision before the bank is drawn on; BankMs the match's bank.
	DecisionMs int
	BankMs     int
}

func matchOf(start *pb.MatchStart) *Match {
	teams := make([]int, len(start.GetTeamOfSeats()))
	for seat, team := range start.GetTeamOfSeats() {
		teams[seat] = int(team)
	}
	return &Match{
		ID:         start.GetMatchId(),
		Seat:       int(start.GetSeat()),
		Players:    int(start.GetRules().GetPlayers()),
		Ruleset:    start.GetRules().GetRuleset(),
		DealCap:    int(start.GetRules().GetDealCap()),
		TeamOf:     teams,
		SeatNames:  start.GetSeatNames(),
		DecisionMs: int(start.GetTimeControl().GetDecisionMs()),
		BankMs:     int(start.GetTimeControl().GetBankMs()),
	}
}

// Team is the team of this bot's seat.
func (m *Match) Team() int {
	return m.TeamOf[m.Seat]
}

// IsPartner says whether another seat is on this bot's team.
func (m *Match) IsPartner(seat int) bool {
	return seat != m.Seat && seat >= 0 && seat < len(m.TeamOf) && m.TeamOf[seat] == m.Team()
}

// PlayedCard is a card played to a trick, and who played it.
type PlayedCard struct {
	Seat int
	Card Card
}

// Trick is a completed trick.
type Trick struct {
	Leader      int
	Plays       []PlayedCard
	Winner      int
	WinningCard Card
	Points      int
}

func playsOf(plays []*pb.Play) []PlayedCard {
	values := make([]PlayedCard, len(plays))
	for i, play := range plays {
		values[i] = PlayedCard{Seat: int(play.GetSeat()), Card: CardOf(play.GetPlayedCard())}
	}
	return values
}

func tricksOf(tricks []*pb.Trick) []Trick {
	values := make([]Trick, len(tricks))
	for i, trick := range tricks {
		values[i] = Trick{
			Leader:      int(trick.GetLeader()),
			Plays:       playsOf(trick.GetPlays()),
			Winner:      int(trick.GetWinner()),
			WinningCard: CardOf(trick.GetWinningCard()),
			Points:      int(trick.GetPoints()),
		}
	}
	return values
}

// Decision is what a bot must decide on: its seat's view, with every card as a value, and the legal
// moves. Decide answers with an index into Cards (in the play) or Calls (in the auction), which is the
// same index in LegalMoves.
type Decision struct {
	Match *Match
	Phase Phase
	// Hand is this seat's cards, sorted by suit (S H D C) and high to low.
	Hand []Card
	// Cards are the legal cards in the play (nil in the auction); Calls the legal calls in the auction.
	Cards []Card
	Calls []Call
	// LegalMoves is the same moves in notation ("JS", "28S", "pass"), for logs.
	LegalMoves []string
	// Trump is the contract's trump suit or NoTrumps (unspecified during the auction); LedSuit the suit
	// led to the trick on the table (unspecified when it is empty).
	Trump   Denomination
	LedSuit Suit
	// Table is the trick being played, in order; TrickWinner the seat winning it so far with
	// WinningCard (-1 and the zero Card when the table is empty).
	Table       []PlayedCard
	TrickWinner int
	WinningCard Card
	// Tricks are this deal's completed tricks.
	Tricks []Trick
	// DecisionMs is the time for this decision before the bank is drawn on; BankMs what is left of it.
	DecisionMs int
	BankMs     int
	// View is the whole view as the arena sent it: the calls so far (View.Calls), the high bid
	// (View.HighBid, nil before the first bid), the contract, the tables and points of each team.
	View *pb.View

	id uint64
}

// PartnerWinning says whether a partner's card is winning the trick on the table.
func (d *Decision) PartnerWinning() bool {
	return d.TrickWinner >= 0 && d.Match.IsPartner(d.TrickWinner)
}

// decisionOf reads a decision request; it refuses one whose structured fields do not match the
// notation (an arena older than this kit sends none).
func decisionOf(match *Match, request *pb.DecisionRequest) (*Decision, error) {
	view := request.GetView()
	if view == nil {
		return nil, protocolError("a decision with no view")
	}
	legal := request.GetLegalMoves()
	moves := request.GetMoves()
	if len(legal) == 0 || len(moves) != len(legal) {
		return nil, protocolErrorf("a decision with %d legal moves and %d structured moves (an arena older than this kit sends none)", len(legal), len(moves))
	}
	if len(view.GetHandCards()) != len(view.GetHand()) {
		return nil, protocolErrorf("a view with %d cards in hand and %d structured (an arena older than this kit sends none)", len(view.GetHand()), len(view.GetHandCards()))
	}
	decision := &Decision{
		Match:       match,
		Phase:       view.GetPhase(),
		Hand:        CardsOf(view.GetHandCards()),
		LegalMoves:  legal,
		Trump:       view.GetTrump(),
		LedSuit:     view.GetLedSuit(),
		Table:       playsOf(view.GetTrick()),
		TrickWinner: -1,
		Tricks:      tricksOf(view.GetTricks()),
		DecisionMs:  int(request.GetDecisionMs()),
		BankMs:      int(request.GetBankMs()),
		View:        view,
		id:          request.GetDecisionId(),
	}
	if view.TrickWinner != nil {
		decision.TrickWinner = int(view.GetTrickWinner())
		decision.WinningCard = CardOf(view.GetTrickWinningCard())
	}
	for _, move := range moves {
		switch {
		case move.GetCard() != nil && decision.Phase == Play:
			decision.Cards = append(decision.Cards, CardOf(move.GetCard()))
		case move.GetCall() != nil && decision.Phase == Auction:
			decision.Calls = append(decision.Calls, CallOf(move.GetCall()))
		default:
			return nil, protocolErrorf("a move of the wrong kind for the %s", decision.Phase)
		}
	}
	return decision, nil
}

// DealEnd is the end of a deal: everything about it, now public.
type DealEnd struct {
	// Hands is every hand as dealt, by seat.
	Hands  map[int][]Card
	Tricks []Trick
	// Message is the whole message as the arena sent it (calls, contract, points, payments, tables).
	Message *pb.DealEnd
}

func dealEndOf(message *pb.DealEnd) *DealEnd {
	hands := make(map[int][]Card, len(message.GetHands()))
	for _, hand := range message.GetHands() {
		hands[int(hand.GetSeat())] = CardsOf(hand.GetDealtCards())
	}
	return &DealEnd{Hands: hands, Tricks: tricksOf(message.GetTricks()), Message: message}
}
