#include "command_line.h"

namespace fiftysix::kit {

namespace {

int parse_port(const std::string& text) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(text) > 65535) {
    throw UsageError{"--port needs a number from 0 to 65535, got '" + text + "'"};
  }
  return std::stoi(text);
}

}  // namespace

Options parse_command_line(int argc, const char* const* argv) {
  Options options;
  for (int index = 1; index < argc; ++index) {
    std::string argument = argv[index];
    if (argument == "-h" || argument == "--help") {
      options.help = true;
      return options;
    }
    std::optional<std::string> value;
    if (const std::size_t equals = argument.find('='); argument.rfind("--", 0) == 0 && equals != std::string::npos) {
      value = argument.substr(equals + 1);
      argument.resize(equals);
    }
    if (argument != "--port" && argument != "--port-file" && argument != "--host" && argument != "--socket") {
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
    } else if (argument == "--host") {
      if (value->empty()) throw UsageError{"--host needs an address"};
      options.host = *value;
    } else {
      if (value->empty()) throw UsageError{"--socket needs a path"};
      options.socket = *value;
    }
  }
  // The arena adds --socket to an uploaded bot's run command, which may name a port of its own: the
  // socket wins, as in the Python SDK. A port file has no port to hold then.
  if (options.socket && options.port_file) throw UsageError{"--port-file goes with a port, not with --socket"};
  return options;
}

std::string usage(std::string_view program) {
  const std::string name(program);
  return "Serve a 56 bot over gRPC.\n\n"
         "usage: " + name + " [--port N] [--port-file PATH] [--host HOST] [--socket PATH]\n"
         "  --port N          port to listen on (default 50051; 0 picks a free port)\n"
         "  --port-file PATH  once serving, write the port to PATH (atomically: a temporary file, renamed)\n"
         "  --host HOST       address to listen on (default 127.0.0.1)\n"
         "  --socket PATH     listen on this Unix-domain socket instead of a port\n";
}

std::string program_name(int argc, const char* const* argv) {
  if (argc < 1 || argv[0] == nullptr || *argv[0] == '\0') return "bot";
  const std::string path = argv[0];
  return path.substr(path.find_last_of('/') + 1);
}

}  // namespace fiftysix::kit
