// cpp-simple: a sample 56 bot in C++, served over gRPC from code generated from the arena's own
// protos/fiftysix/v1/bot.proto. Its strategy is the JavaScript sample bot's (see strategy.h).
//
//   cpp_bot [--port N] [--port-file PATH] [--host HOST]
//
// Logs one JSON object per line to stderr; SIGTERM or SIGINT stops it (conversations in progress get a
// second to end) with exit status 0.

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "log.h"
#include "service.h"

namespace {

using cppbot::log_event;
using cppbot::number_field;
using cppbot::text_field;

constexpr int kMaxMessageBytes = 4 * 1024 * 1024;
constexpr std::chrono::seconds kShutdownGrace{1};

constexpr const char* kUsage =
    "Serve the cpp-simple bot for 56 over gRPC.\n\n"
    "usage: cpp_bot [--port N] [--port-file PATH] [--host HOST]\n"
    "  --port N          port to listen on (default 50051; 0 picks a free port)\n"
    "  --port-file PATH  once serving, write the port to PATH (atomically: a temporary file, renamed)\n"
    "  --host HOST       address to listen on (default 127.0.0.1)\n";

struct Options {
  int port = 50051;
  std::string host = "127.0.0.1";
  std::optional<std::string> port_file;
};

struct UsageError {
  std::string message;
};

int parse_port(const std::string& text) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(text) > 65535) {
    throw UsageError{"--port needs a number from 0 to 65535, got '" + text + "'"};
  }
  return std::stoi(text);
}

// Reads --name VALUE and --name=VALUE; exits for --help.
Options parse_command_line(int argc, char** argv) {
  Options options;
  for (int index = 1; index < argc; ++index) {
    std::string argument = argv[index];
    if (argument == "-h" || argument == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    std::optional<std::string> value;
    if (const std::size_t equals = argument.find('='); argument.rfind("--", 0) == 0 && equals != std::string::npos) {
      value = argument.substr(equals + 1);
      argument.resize(equals);
    }
    if (argument != "--port" && argument != "--port-file" && argument != "--host") {
      throw UsageError{"unknown argument '" + argument + "'"};
    }
    if (!value) {
      if (index + 1 >= argc) throw UsageError{argument + " needs a value"};
      value = argv[++index];
    }
    if (argument == "--port") {
      options.port = parse_port(*value);
    } else if (argument == "--port-file") {
      if (value->empty()) throw UsageError{"--port-file needs a path"};
      options.port_file = *value;
    } else {
      if (value->empty()) throw UsageError{"--host needs an address"};
      options.host = *value;
    }
  }
  return options;
}

// Writes the port to a temporary file beside `path`, then renames it over `path`, so that a reader never
// sees half a number. Returns an error message, empty on success.
std::string write_port_file(const std::string& path, int port) {
  const std::string temporary = path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream file(temporary, std::ios::trunc);
    file << port << '\n';
    file.close();
    if (!file) {
      std::remove(temporary.c_str());
      return "cannot write " + temporary;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string error = std::strerror(errno);
    std::remove(temporary.c_str());
    return "cannot rename " + temporary + " to " + path + ": " + error;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    options = parse_command_line(argc, argv);
  } catch (const UsageError& error) {
    std::fprintf(stderr, "cpp_bot: error: %s\n%s", error.message.c_str(), kUsage);
    return 2;
  }

  // SIGTERM and SIGINT are blocked in every thread (gRPC's threads inherit the mask) and taken by
  // sigwait() below, so that the shutdown runs as ordinary code rather than in a signal handler.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // The standard grpc.health.v1 service; "" (the whole server) is SERVING while the server runs.
  grpc::EnableDefaultHealthCheckService(true);
  cppbot::BotService service;
  const bool bracketed = options.host.find(':') != std::string::npos && options.host.front() != '[';
  const std::string host = bracketed ? "[" + options.host + "]" : options.host;
  const std::string address = host + ":" + std::to_string(options.port);
  int bound_port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound_port);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  // gRPC binds with SO_REUSEPORT by default, so a second process could silently share a port with the
  // first; a port already in use is an error instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound_port == 0) {
    log_event("bot_failed_to_start", {text_field("error", "cannot listen on " + address),
                                      text_field("host", options.host), number_field("port", options.port)});
    return 1;
  }
  if (grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService()) {
    health->SetServingStatus("fiftysix.v1.BotService", true);
  }
  if (options.port_file) {
    if (const std::string error = write_port_file(*options.port_file, bound_port); !error.empty()) {
      log_event("bot_failed_to_start", {text_field("error", error), text_field("port_file", *options.port_file)});
      server->Shutdown(std::chrono::system_clock::now());
      return 1;
    }
  }
  log_event("bot_serving", {text_field("host", options.host), number_field("port", bound_port)});

  int signal_number = 0;
  while (sigwait(&stop_signals, &signal_number) != 0) {
  }
  log_event("bot_stopping", {text_field("signal", signal_number == SIGINT ? "SIGINT" : "SIGTERM")});
  const auto started = std::chrono::steady_clock::now();
  if (grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService()) {
    health->Shutdown();  // every service NOT_SERVING from now on
  }
  // New calls are refused at once; calls in progress may end within the grace, then they are cancelled.
  server->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
  server->Wait();
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  log_event("bot_stopped", {number_field("elapsed_ms", elapsed.count())});
  return 0;
}
