// Reading an input document for validation: JSON (user_config.json, env.json) with syntax errors at line and column
// and what a JSON parser silently lets through (a key twice in one object, a number beyond a double) as Problems;
// and the one wording of YAML syntax errors (overrides, the StormService config, the hardware profiles).
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string_view>

#include "validation/reader.h"

namespace mindie::validation {

/// Parses `raw`, which must hold one JSON object, adding its problems to `r`. A syntax error (with line and
/// column), a UTF-8 byte-order mark (Python's json, PyMotor's reader, refuses it too), nesting deeper than
/// util::kMaxJsonDepth, or a document that is not an object is one problem at path "" and gives nullopt. Otherwise
/// returns the object, after adding a problem for each key that appears twice in one object (JSON readers keep the
/// last value, so the first would be lost without a word) and each number beyond a double's range.
std::optional<boost::json::object> read_json_object(std::string_view raw, Reader& r);

/// A YAML syntax error (util::YamlError's what(), "<source>:L:C: msg") as the message of a Problem at path "":
/// "line L, column C: msg", without the file name (ValidationError's header names it). Text of another shape is
/// kept, less a leading "<source>: ".
std::string yaml_syntax_message(const std::string& what, std::string_view source);

}  // namespace mindie::validation
