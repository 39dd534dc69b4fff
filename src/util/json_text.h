// JSON text as the operator wrote it: the nesting bound of the inputs, and replacing one number without
// re-serialising the document, so a stored baseline keeps its formatting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mindie::util {

/// The deepest nesting of objects and arrays accepted in user_config.json and env.json. Real files nest about five
/// levels (engine sections); the bound turns pathological input into a clear error.
inline constexpr std::size_t kMaxJsonDepth = 128;

/// Returns `raw` with the number at `path` (util::child_path syntax, e.g. "motor_deploy_config.p_instances_num")
/// replaced by `value`, every other byte unchanged. Throws std::invalid_argument when `raw` is not JSON (or nests
/// deeper than kMaxJsonDepth) or the path does not hold a number.
std::string replace_json_number(std::string_view raw, std::string_view path, std::int64_t value);

/// The shortest text that reads back as the same double and as a float, never as an integer: "0.9", "1.0",
/// "1e-05" (what Python's str() gives for the float, so env values match what PyMotor's deployer writes; YAML
/// reads it back as a float too). Finite values only.
std::string float_text(double d);

}  // namespace mindie::util
