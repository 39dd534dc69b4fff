// Conversions between YAML text and Boost.JSON values, used for the built-in manifests, kubeconfig-like inputs
// and `-o yaml` output.
#pragma once

#include <boost/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace mindie::util {

/// Raised for YAML that cannot be parsed or converted; the message names `source` and the line.
class YamlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses every document of a YAML stream into JSON values. Plain scalars resolve by the YAML 1.2 core schema
/// (null/~, true/false, integers, floats); quoted scalars are always strings. Throws YamlError.
std::vector<boost::json::value> yaml_to_json_all(const std::string& text, const std::string& source);

/// Parses a single-document YAML text. Throws YamlError (also when the stream holds 0 or >1 documents).
boost::json::value yaml_to_json(const std::string& text, const std::string& source);

/// Emits `v` as one YAML document in kubectl's style (block style, 2-space indent, keys in stored order),
/// quoting strings that would otherwise read back as another type ("true", "1", "", "null", ...).
/// Multi-line strings are emitted as literal blocks. No leading "---".
std::string json_to_yaml(const boost::json::value& v);

}  // namespace mindie::util
