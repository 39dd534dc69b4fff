// Indented JSON output (Boost.JSON 1.81 only serializes compactly).
#pragma once

#include <boost/json.hpp>
#include <string>

namespace mindie::util {

/// `v` as JSON text indented by `indent` spaces per level, keys in stored order, as `kubectl -o json` prints
/// (kubectl indents by 4). No trailing newline.
std::string json_pretty(const boost::json::value& v, int indent = 4);

}  // namespace mindie::util
