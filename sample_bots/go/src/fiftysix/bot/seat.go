package bot

import (
	"fmt"
	"runtime/debug"

	pb "fiftysix/v1"
)

// Bot plays one seat of one match: Serve makes a new one for every seat with the NewBot it is given, so
// a bot's fields are its seat's own state.
type Bot interface {
	// Decide returns the index of the chosen move: into Cards in the play, into Calls in the auction.
	Decide(decision *Decision) int
}

// NewBot makes the bot of a seat, when its match starts.
type NewBot func(match *Match) Bot

// DealEnder is a Bot that wants to hear of the end of every deal.
type DealEnder interface {
	DealEnd(end *DealEnd)
}

// MatchEnder is a Bot that wants to hear of the end of the match (why, the ranking, the faults).
type MatchEnder interface {
	MatchEnd(end *pb.MatchEnd)
}

// protocolError is a message from the arena that this kit cannot take: the stream ends with
// INVALID_ARGUMENT.
type protocolError string

func (e protocolError) Error() string { return string(e) }

func protocolErrorf(format string, args ...any) protocolError {
	return protocolError(fmt.Sprintf(format, args...))
}

// botError is a failure of the bot's own code (a panic): the stream ends with INTERNAL.
type botError struct {
	message string
}

func (e *botError) Error() string { return e.message }

// seat is one seat's conversation: the state of one PlaySeat stream.
type seat struct {
	newBot NewBot
	match  *Match
	bot    Bot
}

// handle takes one request: the response to send (nil for none), whether the conversation is over,
// or why it cannot go on (a protocolError or a *botError).
func (s *seat) handle(request *pb.PlaySeatRequest) (*pb.PlaySeatResponse, bool, error) {
	switch event := request.GetEvent().(type) {
	case *pb.PlaySeatRequest_MatchStart:
		if s.match != nil {
			return nil, false, protocolError("a second match_start on one stream")
		}
		s.match = matchOf(event.MatchStart)
		if s.match.Seat >= len(s.match.TeamOf) {
			return nil, false, protocolErrorf("seat %d has no team", s.match.Seat)
		}
		if err := guard(func() { s.bot = s.newBot(s.match) }); err != nil {
			return nil, false, err
		}
		return &pb.PlaySeatResponse{Answer: &pb.PlaySeatResponse_Ready{Ready: &pb.Ready{}}}, false, nil
	case *pb.PlaySeatRequest_Decision:
		if s.match == nil {
			return nil, false, protocolError("decision before match_start")
		}
		decision, err := decisionOf(s.match, event.Decision)
		if err != nil {
			return nil, false, err
		}
		var index int
		if err := guard(func() { index = s.bot.Decide(decision) }); err != nil {
			return nil, false, err
		}
		if index < 0 || index >= len(decision.LegalMoves) {
			Log("bot_chose_illegal_move", "index", index, "moves", len(decision.LegalMoves), "seat", s.match.Seat, "match_id", s.match.ID)
			index = len(decision.LegalMoves) // sent as it is out of range: the arena records the fault
		}
		answer := &pb.MoveAnswer{DecisionId: decision.id, Choice: &pb.MoveAnswer_MoveIndex{MoveIndex: uint32(index)}}
		return &pb.PlaySeatResponse{Answer: &pb.PlaySeatResponse_Move{Move: answer}}, false, nil
	case *pb.PlaySeatRequest_DealEnd:
		if s.match == nil {
			return nil, false, protocolError("deal_end before match_start")
		}
		if ender, ok := s.bot.(DealEnder); ok {
			return nil, false, guard(func() { ender.DealEnd(dealEndOf(event.DealEnd)) })
		}
		return nil, false, nil
	case *pb.PlaySeatRequest_MatchEnd:
		if s.match == nil {
			return nil, false, protocolError("match_end before match_start")
		}
		if ender, ok := s.bot.(MatchEnder); ok {
			return nil, true, guard(func() { ender.MatchEnd(event.MatchEnd) })
		}
		return nil, true, nil
	default:
		// An event of a newer arena, which this kit does not know: it expects no answer.
		Log("arena_message_ignored", "reason", "unknown event")
		return nil, false, nil
	}
}

// guard runs the bot's code, turning a panic into a *botError (logged with its stack as bot_failed).
func guard(run func()) (err error) {
	defer func() {
		if recovered := recover(); recovered != nil {
			Log("bot_failed", "error", fmt.Sprint(recovered), "stack", string(debug.Stack()))
			err = &botError{message: fmt.Sprintf("the bot panicked: %v", recovered)}
		}
	}()
	run()
	return nil
}
