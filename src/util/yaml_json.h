// Conversions between YAML text and Boost.JSON values, used for the built-in manifests, kubeconfig-like inputs
// and `-o yaml` output.
#pragma once

#include <boost/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mindie::util {

/// Raised for YAML that cannot be parsed or converted; the message names `source` and the line.
class YamlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// True when `s` is strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view s);

/// Parses every document of a YAML stream into JSON values. Plain scalars resolve by the YAML 1.2 core schema
/// (null/~, true/false, integers, floats); quoted scalars are always strings. Throws YamlError for malformed YAML,
/// text that is not UTF-8 (or holds a noncharacter: U+FDD0..U+FDEF, U+xxFFFE, U+xxFFFF), duplicate or non-scalar
/// keys, numbers JSON cannot hold (.inf, .nan, beyond the double range), nesting deeper than yaml-cpp's limit, an
/// alias that refers to a node containing it, and alias expansion beyond 10,000 + 4 × (input bytes) values in all
/// ("billion laughs").
std::vector<boost::json::value> yaml_to_json_all(const std::string& text, const std::string& source);

/// Parses a single-document YAML text. Throws YamlError (also when the stream holds 0 or >1 documents).
boost::json::value yaml_to_json(const std::string& text, const std::string& source);

/// Emits `v` as one YAML document in kubectl's style (block style, 2-space indent, keys in stored order),
/// quoting strings that would otherwise read back as another type ("true", "1", "", "null", ...).
/// Multi-line strings are emitted as literal blocks. No leading "---". Throws YamlError for non-finite numbers and
/// for strings that are not UTF-8 or hold a noncharacter (yaml-cpp would alter them).
std::string json_to_yaml(const boost::json::value& v);

}  // namespace mindie::util
