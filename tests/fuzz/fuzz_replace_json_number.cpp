// libFuzzer target: util::replace_json_number either throws std::invalid_argument or returns JSON text that
// differs from its input only where the number stood, and that a second replacement leaves unchanged.
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "util/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  for (std::string_view path : {"motor_deploy_config.p_instances_num", "a", "a.b", ""}) {
    std::string out;
    try {
      out = mindie::util::replace_json_number(raw, path, 42);
    } catch (const std::invalid_argument&) {
      continue;
    }
    boost::json::parse_options options;
    options.max_depth = mindie::util::kMaxJsonDepth;
    boost::json::error_code ec;
    boost::json::parse(out, ec, {}, options);
    if (ec) __builtin_trap();
    // Only the number's bytes change: the common prefix and suffix cover everything else.
    std::size_t prefix = 0;
    while (prefix < raw.size() && prefix < out.size() && raw[prefix] == out[prefix]) ++prefix;
    std::size_t suffix = 0;
    while (suffix < raw.size() - prefix && suffix < out.size() - prefix &&
           raw[raw.size() - 1 - suffix] == out[out.size() - 1 - suffix])
      ++suffix;
    if (out.size() - prefix - suffix > 2 || mindie::util::replace_json_number(out, path, 42) != out) __builtin_trap();
  }
  return 0;
}
