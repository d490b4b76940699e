package bot

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	pb "fiftysix/v1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

func TestCardsInNotation(t *testing.T) {
	for _, test := range []struct {
		card   Card
		text   string
		points int
	}{
		{Card{Spades, Jack}, "JS", 3},
		{Card{Hearts, Nine}, "9H", 2},
		{Card{Diamonds, Ten}, "TD", 1},
		{Card{Clubs, Ace}, "AC", 1},
		{Card{Clubs, Seven}, "7C", 0},
		{Card{}, "??", 0},
	} {
		if test.card.String() != test.text || test.card.Points() != test.points {
			t.Errorf("%v: %q and %d points, want %q and %d", test.card, test.card.String(), test.card.Points(), test.text, test.points)
		}
	}
	if !(Card{Hearts, King}).IsTrump(pb.Denomination_DENOMINATION_HEARTS) || (Card{Hearts, King}).IsTrump(NoTrumps) {
		t.Error("a heart is a trump under hearts and never under no trumps")
	}
}

func TestCallsInNotation(t *testing.T) {
	spades := pb.Denomination_DENOMINATION_SPADES
	for _, test := range []struct {
		call Call
		text string
	}{
		{Call{Kind: Pass}, "pass"},
		{Call{Kind: Redouble}, "redouble"},
		{Call{Kind: Bid, Form: NumberSuit, Number: 28, ContractNumber: 28, Denomination: spades}, "28S"},
		{Call{Kind: Bid, Form: SuitNumber, Number: 29, ContractNumber: 29, Denomination: spades}, "S29"},
		{Call{Kind: Bid, Form: PlusSuit, Number: 2, ContractNumber: 32, Denomination: spades}, "+2S"},
		{Call{Kind: Bid, Form: NoTrumpBid, Number: 28, ContractNumber: 28, Denomination: NoTrumps}, "28NT"},
		{Call{Kind: Bid, Form: PlusNoes, Number: 2, ContractNumber: 30, Denomination: NoTrumps}, "+2NOES"},
	} {
		if got := test.call.String(); got != test.text {
			t.Errorf("%+v is %q, want %q", test.call, got, test.text)
		}
	}
}

func card(text string, suit Suit, rank Rank) (string, *pb.Card) {
	return text, &pb.Card{Suit: suit, Rank: rank, Points: uint32(Card{suit, rank}.Points())}
}

func matchStart(seat uint32) *pb.PlaySeatRequest {
	return &pb.PlaySeatRequest{Event: &pb.PlaySeatRequest_MatchStart{MatchStart: &pb.MatchStart{
		ProtocolVersion: 1,
		MatchId:         "test",
		Rules:           &pb.MatchRules{Players: 4, Ruleset: Pairs},
		Seat:            seat,
		TeamOfSeats:     []uint32{0, 1, 0, 1},
		SeatNames:       []string{"a", "b", "c", "d"},
	}}}
}

// playDecision is seat 0's decision in the play: its partner, seat 2, is winning the trick with JH.
func playDecision(id uint64) *pb.PlaySeatRequest {
	jackText, jack := card("JH", Hearts, Jack)
	nineText, nine := card("9S", Spades, Nine)
	kingText, king := card("KH", Hearts, King)
	winner := uint32(2)
	view := &pb.View{
		Seat:             0,
		Phase:            Play,
		Hand:             []string{nineText, kingText},
		HandCards:        []*pb.Card{nine, king},
		Trick:            []*pb.Play{{Seat: 2, Card: jackText, PlayedCard: jack}},
		LedSuit:          Hearts,
		Trump:            pb.Denomination_DENOMINATION_SPADES,
		TrickWinner:      &winner,
		TrickWinningCard: jack,
	}
	moves := []*pb.Move{{Move: &pb.Move_Card{Card: king}}}
	return &pb.PlaySeatRequest{Event: &pb.PlaySeatRequest_Decision{Decision: &pb.DecisionRequest{
		DecisionId: id, View: view, LegalMoves: []string{kingText}, Moves: moves, DecisionMs: 1000,
	}}}
}

var matchEnd = &pb.PlaySeatRequest{Event: &pb.PlaySeatRequest_MatchEnd{MatchEnd: &pb.MatchEnd{Reason: "deal_cap"}}}

type recorder struct {
	decisions []*Decision
	index     int
	panics    bool
	ended     bool
}

func (r *recorder) Decide(decision *Decision) int {
	if r.panics {
		panic("no idea")
	}
	r.decisions = append(r.decisions, decision)
	return r.index
}

func (r *recorder) MatchEnd(*pb.MatchEnd) { r.ended = true }

func TestSeatGivesTheBotCardsAsValuesAndAnswersByIndex(t *testing.T) {
	bot := &recorder{}
	conversation := &seat{newBot: func(*Match) Bot { return bot }}
	response, over, err := conversation.handle(matchStart(0))
	if err != nil || over || response.GetReady() == nil {
		t.Fatalf("match start: %v %v %v", response, over, err)
	}
	response, over, err = conversation.handle(playDecision(1 << 63))
	if err != nil || over {
		t.Fatalf("decision: %v %v", over, err)
	}
	if move := response.GetMove(); move.GetDecisionId() != 1<<63 || move.GetMoveIndex() != 0 {
		t.Errorf("answer %v, want decision 2^63, index 0", move)
	}
	decision := bot.decisions[0]
	if decision.Hand[1] != (Card{Hearts, King}) || decision.Cards[0] != (Card{Hearts, King}) || decision.Calls != nil {
		t.Errorf("hand %v, cards %v, calls %v", decision.Hand, decision.Cards, decision.Calls)
	}
	if !decision.PartnerWinning() || decision.WinningCard != (Card{Hearts, Jack}) || decision.Table[0].Seat != 2 {
		t.Errorf("the partner's JH is winning: %v %v %v", decision.PartnerWinning(), decision.WinningCard, decision.Table)
	}
	if _, over, err = conversation.handle(matchEnd); err != nil || !over || !bot.ended {
		t.Errorf("match end: over %v, told %v, %v", over, bot.ended, err)
	}
}

func TestSeatRefusesWhatItCannotTake(t *testing.T) {
	noMoves := playDecision(3)
	noMoves.GetDecision().Moves = nil
	noHandCards := playDecision(4)
	noHandCards.GetDecision().View.HandCards = nil
	for name, requests := range map[string][]*pb.PlaySeatRequest{
		"decision before match start":     {playDecision(1)},
		"second match start":              {matchStart(0), matchStart(0)},
		"no structured moves":             {matchStart(0), noMoves},
		"no structured cards in the hand": {matchStart(0), noHandCards},
		"a seat with no team":             {matchStart(7)},
	} {
		conversation := &seat{newBot: func(*Match) Bot { return &recorder{} }}
		var err error
		for _, request := range requests {
			if _, _, err = conversation.handle(request); err != nil {
				break
			}
		}
		var rejected protocolError
		if !errors.As(err, &rejected) {
			t.Errorf("%s: %v, want a protocol error", name, err)
		}
	}
}

func TestSeatTurnsAPanicIntoAnErrorAndAnIndexOutOfRangeIntoAnIllegalAnswer(t *testing.T) {
	conversation := &seat{newBot: func(*Match) Bot { return &recorder{panics: true} }}
	conversation.handle(matchStart(0))
	var failed *botError
	if _, _, err := conversation.handle(playDecision(1)); !errors.As(err, &failed) {
		t.Errorf("a panic in Decide gave %v", err)
	}
	conversation = &seat{newBot: func(*Match) Bot { return &recorder{index: -1} }}
	conversation.handle(matchStart(0))
	response, _, err := conversation.handle(playDecision(1))
	if err != nil || response.GetMove().GetMoveIndex() != 1 {
		t.Errorf("index -1 gave %v, %v; want index 1, out of range", response, err)
	}
	if response, over, err := conversation.handle(&pb.PlaySeatRequest{}); response != nil || over || err != nil {
		t.Errorf("an event this kit does not know is ignored, got %v %v %v", response, over, err)
	}
}

func TestParseFlags(t *testing.T) {
	options, err := ParseFlags("bot", nil)
	if err != nil || options != (Options{Host: "127.0.0.1", Port: 50051}) {
		t.Errorf("defaults: %+v %v", options, err)
	}
	options, err = ParseFlags("bot", []string{"--port", "0", "--port-file=/tmp/p"})
	if err != nil || options.Port != 0 || options.PortFile != "/tmp/p" {
		t.Errorf("--port 0 --port-file: %+v %v", options, err)
	}
	for _, arguments := range [][]string{{"--port", "65536"}, {"--port", "x"}, {"extra"}, {"--bogus"}, {"--socket", "s", "--port-file", "p"}} {
		if _, err := ParseFlags("bot", arguments); err == nil {
			t.Errorf("%v: no error", arguments)
		}
	}
}

// started serves a recorder bot on port 0 with a port file, and connects to it.
func started(t *testing.T) (*Server, *grpc.ClientConn, string) {
	t.Helper()
	portFile := filepath.Join(t.TempDir(), "port")
	server, err := Start(Info{Name: "test", Version: "1"}, func(*Match) Bot { return &recorder{} }, Options{Host: "127.0.0.1", PortFile: portFile})
	if err != nil {
		t.Fatal(err)
	}
	connection, err := grpc.Dial("127.0.0.1:"+strconv.Itoa(server.Port()), grpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	return server, connection, portFile
}

func TestServesTheHandshakeHealthAndASeatOnLoopback(t *testing.T) {
	server, connection, portFile := started(t)
	defer server.Stop("test")
	defer connection.Close()
	written, err := os.ReadFile(portFile)
	if err != nil || string(written) != strconv.Itoa(server.Port())+"\n" {
		t.Errorf("port file %q (%v), want the port and a newline", written, err)
	}
	if left, _ := os.ReadDir(filepath.Dir(portFile)); len(left) != 1 {
		t.Errorf("a temporary file is left beside the port file: %v", left)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reply, err := pb.NewBotServiceClient(connection).Describe(ctx, &pb.DescribeRequest{ProtocolVersion: 1})
	if err != nil || reply.GetName() != "test" || reply.GetProtocolVersion() != 1 || len(reply.GetPlayerCounts()) != 3 {
		t.Errorf("describe: %v %v", reply, err)
	}
	for _, name := range []string{"", ServiceName} {
		health, err := healthpb.NewHealthClient(connection).Check(ctx, &healthpb.HealthCheckRequest{Service: name})
		if err != nil || health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health of %q: %v %v", name, health, err)
		}
	}
	stream, err := pb.NewBotServiceClient(connection).PlaySeat(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, request := range []*pb.PlaySeatRequest{matchStart(0), playDecision(1<<64 - 1), matchEnd} {
		if err := stream.Send(request); err != nil {
			t.Fatal(err)
		}
	}
	if response, err := stream.Recv(); err != nil || response.GetReady() == nil {
		t.Errorf("ready: %v %v", response, err)
	}
	if response, err := stream.Recv(); err != nil || response.GetMove().GetDecisionId() != 1<<64-1 {
		t.Errorf("move: %v %v", response, err)
	}
	// The request side stays open: the bot ends the conversation itself, with status OK, after MatchEnd.
	if response, err := stream.Recv(); err != io.EOF {
		t.Errorf("after match end: %v %v, want the end of the stream", response, err)
	}
}

func TestAMessageItCannotTakeEndsTheStreamWithInvalidArgument(t *testing.T) {
	server, connection, _ := started(t)
	defer server.Stop("test")
	defer connection.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := pb.NewBotServiceClient(connection).PlaySeat(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(playDecision(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a decision before match start: %v, want INVALID_ARGUMENT", err)
	}
}

func TestStopCancelsAConversationStillOpenAfterTheGrace(t *testing.T) {
	server, connection, _ := started(t)
	defer connection.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := pb.NewBotServiceClient(connection).PlaySeat(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(matchStart(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	server.Stop("test")
	if _, err := stream.Recv(); err == nil || err == io.EOF {
		t.Errorf("the open conversation ended with %v, want an error status", err)
	}
}

func TestServesOnAUnixSocket(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "bot.sock")
	server, err := Start(Info{Name: "test"}, func(*Match) Bot { return &recorder{} }, Options{Socket: socket})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Stop("test")
	connection, err := grpc.Dial("unix:"+socket, grpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	defer connection.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if reply, err := pb.NewBotServiceClient(connection).Describe(ctx, &pb.DescribeRequest{}); err != nil || reply.GetName() != "test" {
		t.Errorf("describe over the socket: %v %v", reply, err)
	}
}
