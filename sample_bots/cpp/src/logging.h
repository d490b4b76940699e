// The kit's side of logging: the name every log line gives the bot.
#pragma once

#include <string>

namespace fiftysix {

// Sets the "bot" of every later log line; serve calls it once, before any thread logs.
void set_log_name(std::string name);

}  // namespace fiftysix
