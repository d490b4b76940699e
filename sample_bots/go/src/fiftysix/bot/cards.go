package bot

import (
	"strconv"

	pb "fiftysix/v1"
)

// The protocol's enums under the game's own names. They are the generated types themselves (aliases),
// so a value read from a raw message compares with them as it is.
type (
	// Suit is a card's suit.
	Suit = pb.Suit
	// Rank is a card's rank; a lower number is a higher card (the jack, 1, beats its whole suit).
	Rank = pb.Rank
	// Denomination is a contract's trump suit or no trumps; it shares its numbers with Suit.
	Denomination = pb.Denomination
	// CallKind says what a call does: pass, double, redouble or bid.
	CallKind = pb.CallKind
	// BidForm is the form a bid is made in, each a different signal to the partner.
	BidForm = pb.BidForm
	// Phase is where a deal stands: the auction or the play.
	Phase = pb.Phase
	// Ruleset is how the seats make teams.
	Ruleset = pb.Ruleset
)

// The four suits, in the order the arena sorts them.
const (
	Spades   = pb.Suit_SUIT_SPADES
	Hearts   = pb.Suit_SUIT_HEARTS
	Diamonds = pb.Suit_SUIT_DIAMONDS
	Clubs    = pb.Suit_SUIT_CLUBS
)

// Suits lists the four suits, spades first.
var Suits = [4]Suit{Spades, Hearts, Diamonds, Clubs}

// The eight ranks, highest first (eights and sevens only in 8-player deals).
const (
	Jack  = pb.Rank_RANK_JACK
	Nine  = pb.Rank_RANK_NINE
	Ace   = pb.Rank_RANK_ACE
	Ten   = pb.Rank_RANK_TEN
	King  = pb.Rank_RANK_KING
	Queen = pb.Rank_RANK_QUEEN
	Eight = pb.Rank_RANK_EIGHT
	Seven = pb.Rank_RANK_SEVEN
)

// NoTrumps is the denomination of a no-trumps contract (and of a noes bid); during the auction the
// trump is pb.Denomination_DENOMINATION_UNSPECIFIED.
const NoTrumps = pb.Denomination_DENOMINATION_NO_TRUMPS

// The phases a decision comes in.
const (
	Auction = pb.Phase_PHASE_AUCTION
	Play    = pb.Phase_PHASE_PLAY
)

// The kinds of call.
const (
	Pass     = pb.CallKind_CALL_KIND_PASS
	Double   = pb.CallKind_CALL_KIND_DOUBLE
	Redouble = pb.CallKind_CALL_KIND_REDOUBLE
	Bid      = pb.CallKind_CALL_KIND_BID
)

// The six bid forms (docs/rules.md, the auction).
const (
	NumberSuit = pb.BidForm_BID_FORM_NUMBER_SUIT // 28S: holds the jack of the suit
	SuitNumber = pb.BidForm_BID_FORM_SUIT_NUMBER // S28: strong in the suit without its jack
	NoTrumpBid = pb.BidForm_BID_FORM_NO_TRUMPS   // 28NT
	Noes       = pb.BidForm_BID_FORM_NOES        // 28NOES: holds no card of the suit last named
	PlusSuit   = pb.BidForm_BID_FORM_PLUS_SUIT   // +2S
	PlusNoes   = pb.BidForm_BID_FORM_PLUS_NOES   // +2NOES
)

// The two rulesets.
const (
	Pairs       = pb.Ruleset_RULESET_PAIRS
	Partnership = pb.Ruleset_RULESET_PARTNERSHIP
)

const (
	suitLetters = " SHDC"
	rankLetters = " J9ATKQ87"
)

// Card is a card as a value: comparable with ==, usable as a map key. The double pack holds two copies
// of every card; they are the same value.
type Card struct {
	Suit Suit
	Rank Rank
}

// CardOf is the value of a structured card from a message (the zero Card for nil).
func CardOf(card *pb.Card) Card {
	return Card{Suit: card.GetSuit(), Rank: card.GetRank()}
}

// CardsOf is the values of a list of structured cards, in the same order.
func CardsOf(cards []*pb.Card) []Card {
	values := make([]Card, len(cards))
	for i, card := range cards {
		values[i] = CardOf(card)
	}
	return values
}

// Points is the card's points: 3 for a jack, 2 for a nine, 1 for an ace or a ten, 0 otherwise.
func (c Card) Points() int {
	switch c.Rank {
	case Jack:
		return 3
	case Nine:
		return 2
	case Ace, Ten:
		return 1
	default:
		return 0
	}
}

// IsTrump says whether the card is of the trump suit (never under no trumps or during the auction).
func (c Card) IsTrump(trump Denomination) bool {
	return trump != NoTrumps && Denomination(c.Suit) == trump
}

// String is the card in the arena's notation: rank then suit, as in "JS", "9H", "TD".
func (c Card) String() string {
	if c.Rank < Jack || c.Rank > Seven || c.Suit < Spades || c.Suit > Clubs {
		return "??"
	}
	return string([]byte{rankLetters[c.Rank], suitLetters[c.Suit]})
}

// Call is a call of the auction as a value.
type Call struct {
	Kind CallKind
	// Form, Number, ContractNumber and Denomination are for a bid: Number as called (the increment of a
	// plus bid, 2 in +2S), ContractNumber what it makes (+2S over 30 makes 32).
	Form           BidForm
	Number         int
	ContractNumber int
	Denomination   Denomination
}

// CallOf is the value of a structured call from a message.
func CallOf(call *pb.Call) Call {
	return Call{
		Kind:           call.GetKind(),
		Form:           call.GetForm(),
		Number:         int(call.GetNumber()),
		ContractNumber: int(call.GetContractNumber()),
		Denomination:   call.GetDenomination(),
	}
}

// String is the call in the arena's notation: "pass", "double", "redouble", "28S", "S28", "28NT",
// "28NOES", "+2S", "+2NOES".
func (c Call) String() string {
	switch c.Kind {
	case Pass:
		return "pass"
	case Double:
		return "double"
	case Redouble:
		return "redouble"
	}
	number := strconv.Itoa(c.Number)
	suit := ""
	if c.Denomination >= pb.Denomination_DENOMINATION_SPADES && c.Denomination <= pb.Denomination_DENOMINATION_CLUBS {
		suit = suitLetters[c.Denomination : c.Denomination+1]
	}
	switch c.Form {
	case NumberSuit:
		return number + suit
	case SuitNumber:
		return suit + number
	case NoTrumpBid:
		return number + "NT"
	case Noes:
		return number + "NOES"
	case PlusSuit:
		return "+" + number + suit
	case PlusNoes:
		return "+" + number + "NOES"
	}
	return "?"
}
