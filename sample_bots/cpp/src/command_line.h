// The command line every bot of the kit takes (serve reads it): where to listen, and where to say so.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fiftysix::kit {

struct Options {
  int port = 50051;
  std::string host = "127.0.0.1";
  std::optional<std::string> port_file;
  std::optional<std::string> socket;
  bool help = false;
};

// A command line that cannot be served: the message says what is wrong with it.
struct UsageError {
  std::string message;
};

// Reads --port, --port-file, --host and --socket, as `--name VALUE` or `--name=VALUE`, and -h/--help;
// throws UsageError for anything else. `argv[0]` is the program.
Options parse_command_line(int argc, const char* const* argv);

// The help text, naming `program`.
std::string usage(std::string_view program);

// The name the program was run by, without its folder (for messages).
std::string program_name(int argc, const char* const* argv);

}  // namespace fiftysix::kit
