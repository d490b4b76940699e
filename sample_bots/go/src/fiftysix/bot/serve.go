package bot

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	pb "fiftysix/v1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// ProtocolVersion is the version of the protocol this kit speaks.
const ProtocolVersion = 1

// ServiceName is the name the health service reports the bot under, beside "" (the whole server).
const ServiceName = "fiftysix.v1.BotService"

const (
	maxMessageBytes = 4 << 20
	// Grace is how long conversations in progress may go on once the bot is told to stop.
	Grace = time.Second
)

// Info is who the bot is, for the arena's handshake (Describe).
type Info struct {
	Name    string
	Version string
	Author  string
	// PlayerCounts are the player counts the bot plays (nil: 4, 6 and 8); Rulesets the rulesets (nil:
	// every ruleset).
	PlayerCounts []int
	Rulesets     []Ruleset
}

// Options say where the bot listens: a TCP port on Host (Port 0 picks a free one, written to PortFile
// when given) or, when Socket is set, a Unix-domain socket at that path (how a sandboxed bot is reached).
type Options struct {
	Host     string
	Port     int
	PortFile string
	Socket   string
}

// ParseFlags reads --port N (default 50051), --host HOST (default 127.0.0.1), --port-file PATH and
// --socket PATH; flag.ErrHelp for -h or --help.
func ParseFlags(program string, arguments []string) (Options, error) {
	options := Options{}
	flags := flag.NewFlagSet(program, flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	flags.StringVar(&options.Host, "host", "127.0.0.1", "")
	flags.IntVar(&options.Port, "port", 50051, "")
	flags.StringVar(&options.PortFile, "port-file", "", "")
	flags.StringVar(&options.Socket, "socket", "", "")
	if err := flags.Parse(arguments); err != nil {
		return options, err
	}
	switch {
	case flags.NArg() > 0:
		return options, fmt.Errorf("unexpected argument %q", flags.Arg(0))
	case options.Port < 0 || options.Port > 65535:
		return options, fmt.Errorf("--port needs a number from 0 to 65535, got %d", options.Port)
	case options.Socket != "" && options.PortFile != "":
		return options, errors.New("--socket and --port-file do not go together")
	}
	return options, nil
}

// Usage is the help of the options ParseFlags reads.
func Usage(program string) string {
	return "usage: " + program + " [--port N] [--host HOST] [--port-file PATH] [--socket PATH]\n" +
		"  --port N          port to listen on (default 50051; 0 picks a free port)\n" +
		"  --host HOST       address to listen on (default 127.0.0.1, where the arena connects)\n" +
		"  --port-file PATH  once serving, write the port to PATH (a temporary file, renamed over it)\n" +
		"  --socket PATH     listen on this Unix-domain socket instead of a port (sandboxed bots)\n"
}

// Serve runs the bot as a program: it reads the options from the command line, serves until SIGTERM
// or SIGINT (the conversations in progress get Grace to end) and exits: 0 once stopped, 1 when it
// cannot listen, 2 for bad options.
func Serve(info Info, newBot NewBot) {
	program := filepath.Base(os.Args[0])
	options, err := ParseFlags(program, os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(os.Stdout, "Serve the %s bot for 56 over gRPC.\n\n%s", info.Name, Usage(program))
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: error: %v\n%s", program, err, Usage(program))
		os.Exit(2)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	server, err := Start(info, newBot, options)
	if err != nil {
		Log("bot_failed_to_start", "error", err)
		os.Exit(1)
	}
	select {
	case received := <-signals:
		server.Stop(map[os.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[received])
	case err := <-server.failed:
		Log("bot_failed", "error", err)
		os.Exit(1)
	}
}

// Server is a bot being served.
type Server struct {
	grpc   *grpc.Server
	health *health.Server
	port   int
	failed chan error
}

// Start serves the bot in the background, as the options say, and returns once it listens (and has
// written its port file).
func Start(info Info, newBot NewBot, options Options) (*Server, error) {
	setLogName(info.Name)
	listener, err := listen(options)
	if err != nil {
		return nil, err
	}
	server := &Server{
		grpc:   grpc.NewServer(grpc.MaxRecvMsgSize(maxMessageBytes), grpc.MaxSendMsgSize(maxMessageBytes)),
		health: health.NewServer(),
		failed: make(chan error, 1),
	}
	pb.RegisterBotServiceServer(server.grpc, &service{info: info, newBot: newBot})
	healthpb.RegisterHealthServer(server.grpc, server.health)
	server.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	server.health.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_SERVING)
	if address, ok := listener.Addr().(*net.TCPAddr); ok {
		server.port = address.Port
	}
	go func() {
		if err := server.grpc.Serve(listener); err != nil {
			server.failed <- err
		}
	}()
	if options.Socket != "" {
		Log("bot_serving", "socket", options.Socket)
		return server, nil
	}
	if options.PortFile != "" {
		if err := writePortFile(options.PortFile, server.port); err != nil {
			server.grpc.Stop()
			return nil, err
		}
	}
	Log("bot_serving", "host", options.Host, "port", server.port)
	return server, nil
}

func listen(options Options) (net.Listener, error) {
	if options.Socket != "" {
		return net.Listen("unix", options.Socket)
	}
	return net.Listen("tcp", net.JoinHostPort(options.Host, strconv.Itoa(options.Port)))
}

// writePortFile writes the port to a temporary file beside path, then renames it over path, so that a
// reader never sees half a number.
func writePortFile(path string, port int) error {
	temporary := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	if err := os.WriteFile(temporary, []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(temporary, path); err != nil {
		_ = os.Remove(temporary)
		return err
	}
	return nil
}

// Port is the TCP port the bot listens on (0 on a socket).
func (s *Server) Port() int {
	return s.port
}

// Stop stops serving: the health service says NOT_SERVING, new calls are refused, and the
// conversations in progress get Grace to end before they are cancelled. `reason` is logged.
func (s *Server) Stop(reason string) {
	Log("bot_stopping", "signal", reason)
	started := time.Now()
	s.health.Shutdown()
	stopped := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(stopped)
	}()
	forced := false
	select {
	case <-stopped:
	case <-time.After(Grace):
		forced = true
		s.grpc.Stop()
		<-stopped
	}
	Log("bot_stopped", "forced", forced, "elapsed_ms", time.Since(started).Milliseconds())
}

// service is the BotService of one bot.
type service struct {
	pb.UnimplementedBotServiceServer
	info   Info
	newBot NewBot
}

func (s *service) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	counts := s.info.PlayerCounts
	if counts == nil {
		counts = []int{4, 6, 8}
	}
	reply := &pb.DescribeResponse{
		Name:            s.info.Name,
		Version:         s.info.Version,
		ProtocolVersion: ProtocolVersion,
		Rulesets:        s.info.Rulesets,
		Author:          s.info.Author,
	}
	for _, count := range counts {
		reply.PlayerCounts = append(reply.PlayerCounts, uint32(count))
	}
	return reply, nil
}

// PlaySeat is one seat's conversation: its own seat state, ended by the bot after MatchEnd.
func (s *service) PlaySeat(stream pb.BotService_PlaySeatServer) error {
	conversation := &seat{newBot: s.newBot}
	for {
		request, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil // the arena stopped writing without a MatchEnd
		}
		if err != nil {
			return err // cancelled: the arena went away
		}
		response, over, err := conversation.handle(request)
		var rejected protocolError
		switch {
		case errors.As(err, &rejected):
			Log("arena_message_rejected", "error", err, "seat", seatOf(conversation))
			return status.Error(codes.InvalidArgument, err.Error())
		case err != nil:
			return status.Error(codes.Internal, err.Error())
		}
		if response != nil {
			if err := stream.Send(response); err != nil {
				return err
			}
		}
		if over {
			return nil
		}
	}
}

func seatOf(conversation *seat) int {
	if conversation.match == nil {
		return -1
	}
	return conversation.match.Seat
}
