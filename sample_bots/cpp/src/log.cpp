#include "fiftysix/log.h"

#include <cstdio>
#include <mutex>

#include "logging.h"

namespace fiftysix {

namespace {

std::mutex& stderr_mutex() {
  static std::mutex mutex;
  return mutex;
}

// The bot's name as JSON; set once by serve before any other thread runs, read-only after.
std::string& quoted_name() {
  static std::string name = json_quote("");
  return name;
}

}  // namespace

void set_log_name(std::string name) { quoted_name() = json_quote(name); }

LogField text_field(std::string key, std::string_view value) { return {std::move(key), json_quote(value)}; }

LogField number_field(std::string key, std::int64_t value) { return {std::move(key), std::to_string(value)}; }

LogField flag_field(std::string key, bool value) { return {std::move(key), value ? "true" : "false"}; }

std::string json_quote(std::string_view text) {
  std::string quoted = "\"";
  for (const char character : text) {
    const auto byte = static_cast<unsigned char>(character);
    switch (character) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      default:
        if (byte < 0x20 || byte >= 0x7f) {
          // Bytes beyond ASCII may not be UTF-8 (an error message may quote anything): escape each one.
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(byte));
          quoted += escaped;
        } else {
          quoted += character;
        }
    }
  }
  quoted += '"';
  return quoted;
}

void log_event(std::string_view event, std::initializer_list<LogField> fields) {
  std::string line = "{\"event\":" + json_quote(event) + ",\"bot\":" + quoted_name();
  for (const LogField& field : fields) {
    line += "," + json_quote(field.key) + ":" + field.json;
  }
  line += "}\n";
  const std::lock_guard<std::mutex> lock(stderr_mutex());
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace fiftysix
