// Label and field selectors as kube-apiserver parses them (k8s.io/apimachinery/pkg/labels and pkg/fields).
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace mindie::sandbox {

/// Thrown for an unparsable selector; the server answers 400 BadRequest with what().
struct SelectorError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// A parsed label selector: requirements joined by AND.
/// Grammar (labels.Parse): `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>N`, `k<N`, comma
/// separated; keys are qualified names (optional DNS prefix + "/"), values label values (≤ 63 chars, may be empty).
class LabelSelector {
 public:
  enum class Op { Equals, NotEquals, In, NotIn, Exists, DoesNotExist, GreaterThan, LessThan };
  struct Requirement {
    std::string key;
    Op op;
    std::vector<std::string> values;
  };

  /// Parses `text` ("" selects everything). Throws SelectorError.
  static LabelSelector parse(const std::string& text);
  /// True when `labels` (a JSON object of strings, or null) satisfies every requirement.
  bool matches(const nlohmann::json& labels) const;
  const std::vector<Requirement>& requirements() const { return reqs_; }

 private:
  std::vector<Requirement> reqs_;
};

/// A parsed field selector: `path=value`, `path==value`, `path!=value`, comma = AND.
class FieldSelector {
 public:
  /// Parses `text` and checks each field is selectable for `kind` (metadata.name and metadata.namespace everywhere;
  /// a few status/spec fields for Pods and Events, like kube-apiserver). Throws SelectorError
  /// ("field label not supported: x").
  static FieldSelector parse(const std::string& text, const std::string& kind);
  bool matches(const nlohmann::json& object) const;

 private:
  struct Term {
    std::string path;
    bool negate;
    std::string value;
  };
  std::vector<Term> terms_;
};

/// DNS-1123 label (≤ 63, [a-z0-9]([-a-z0-9]*[a-z0-9])?).
bool is_dns1123_label(const std::string& s);
/// DNS-1123 subdomain (≤ 253, dot-separated labels).
bool is_dns1123_subdomain(const std::string& s);
/// Label/annotation key: optional DNS subdomain prefix + "/" + name (≤ 63, alphanumeric ends, [-_.] inside).
bool is_qualified_name(const std::string& s);
/// Label value: empty or ≤ 63 chars, alphanumeric ends, [-_.] inside.
bool is_label_value(const std::string& s);

}  // namespace mindie::sandbox
