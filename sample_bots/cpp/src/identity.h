// Who the bot is, as Describe tells the arena and as every log line says.
#pragma once

#include <cstdint>

namespace cppbot {

inline constexpr const char* kBotName = "cpp-simple";
inline constexpr const char* kBotVersion = "1.0.0";
inline constexpr const char* kBotAuthor = "fiftysix arena";
inline constexpr std::uint32_t kProtocolVersion = 1;

}  // namespace cppbot
