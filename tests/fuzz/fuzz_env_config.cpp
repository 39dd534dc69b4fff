// libFuzzer target: config::parse_env_config must accept its input or throw ValidationError, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "mindie/env_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto env = mindie::config::parse_env_config(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    if (env.raw.size() != size) __builtin_trap();
  } catch (const mindie::validation::ValidationError&) {
  }
  return 0;
}
