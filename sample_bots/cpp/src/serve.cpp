// fiftysix::serve: the command line, the server with the bot service and the health service, the port
// file, and the graceful stop on SIGTERM or SIGINT.

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "command_line.h"
#include "fiftysix/bot.h"
#include "fiftysix/log.h"
#include "logging.h"
#include "service.h"

namespace fiftysix {

namespace {

constexpr int kMaxMessageBytes = 4 * 1024 * 1024;
constexpr std::chrono::seconds kShutdownGrace{1};
constexpr const char* kServiceName = "fiftysix.v1.BotService";

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

// The address gRPC listens on: unix:PATH for a socket, HOST:PORT otherwise (an IPv6 host in brackets).
std::string listening_address(const kit::Options& options) {
  if (options.socket) return "unix:" + *options.socket;
  const bool bracketed = options.host.find(':') != std::string::npos && options.host.front() != '[';
  return (bracketed ? "[" + options.host + "]" : options.host) + ":" + std::to_string(options.port);
}

}  // namespace

int serve(const BotFactory& make_bot, int argc, char** argv) {
  const std::string program = kit::program_name(argc, argv);
  kit::Options options;
  try {
    options = kit::parse_command_line(argc, argv);
  } catch (const kit::UsageError& error) {
    std::fprintf(stderr, "%s: error: %s\n%s", program.c_str(), error.message.c_str(), kit::usage(program).c_str());
    return 2;
  }
  if (options.help) {
    std::fputs(kit::usage(program).c_str(), stdout);
    return 0;
  }

  Description description;
  try {
    const std::unique_ptr<Bot> bot = make_bot();
    if (bot == nullptr) throw std::runtime_error("the bot factory made no bot");
    description = bot->describe();
  } catch (const std::exception& error) {
    log_event("bot_failed_to_start", {text_field("error", std::string("describe() failed: ") + error.what())});
    return 1;
  }
  set_log_name(description.name);

  // SIGTERM and SIGINT are blocked in every thread (gRPC's threads inherit the mask) and taken by
  // sigwait() below, so that the shutdown runs as ordinary code rather than in a signal handler.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // The standard grpc.health.v1 service; "" (the whole server) is SERVING while the server runs.
  grpc::EnableDefaultHealthCheckService(true);
  kit::BotService service(description, make_bot);
  const std::string address = listening_address(options);
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
    log_event("bot_failed_to_start", {text_field("error", "cannot listen on " + address)});
    return 1;
  }
  if (grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService()) {
    health->SetServingStatus(kServiceName, true);
  }
  if (options.port_file) {
    if (const std::string error = write_port_file(*options.port_file, bound_port); !error.empty()) {
      log_event("bot_failed_to_start", {text_field("error", error), text_field("port_file", *options.port_file)});
      server->Shutdown(std::chrono::system_clock::now());
      return 1;
    }
  }
  if (options.socket) {
    log_event("bot_serving", {text_field("socket", *options.socket)});
  } else {
    log_event("bot_serving", {text_field("host", options.host), number_field("port", bound_port)});
  }

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

}  // namespace fiftysix
