// Logging, as the kit does it: one JSON object per line on stderr, like the Python and JavaScript bots,
// each naming the bot (the name its describe() gives, once serve has started).
//
//   fiftysix::log_event("bid_chosen", {fiftysix::text_field("call", "28S"), fiftysix::number_field("seat", 2)});
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace fiftysix {

// One key and its value, already rendered as JSON.
struct LogField {
  std::string key;
  std::string json;
};

// A field whose value is a string (escaped as JSON needs).
LogField text_field(std::string key, std::string_view value);
// A field whose value is a number.
LogField number_field(std::string key, std::int64_t value);
// A field whose value is true or false.
LogField flag_field(std::string key, bool value);

// `text` as a JSON string literal, quotes included; bytes that are not printable ASCII are escaped.
std::string json_quote(std::string_view text);

// Writes {"event": event, "bot": NAME, fields...} as one line on stderr; safe from any thread.
void log_event(std::string_view event, std::initializer_list<LogField> fields = {});

}  // namespace fiftysix
