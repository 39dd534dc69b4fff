// Structural OpenAPI v3 checks for CRD schemas, following the rules kube-apiserver applies to custom resources
// (k8s.io/apiextensions-apiserver validation + pruning) closely enough for tests.
#include "support/openapi_schema.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace mindie::testing {
namespace {

using nlohmann::json;

// --- YAML → JSON -------------------------------------------------------------------------------------------

// YAML 1.2 core schema resolution of a plain (unquoted) scalar.
json resolve_plain_scalar(const std::string& s) {
  // Nulls, booleans and numbers are short; long scalars (file contents) stay strings without running std::regex,
  // whose recursive matcher could exhaust the stack on megabyte inputs.
  if (s.size() > 128) return s;
  static const std::regex null_re("^(~|null|Null|NULL|)$");
  static const std::regex true_re("^(true|True|TRUE)$");
  static const std::regex false_re("^(false|False|FALSE)$");
  static const std::regex int_re("^[-+]?[0-9]+$");
  static const std::regex oct_re("^0o[0-7]+$");
  static const std::regex hex_re("^0x[0-9a-fA-F]+$");
  static const std::regex float_re(R"(^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$)");
  static const std::regex inf_re(R"(^[-+]?\.(inf|Inf|INF)$)");
  static const std::regex nan_re(R"(^\.(nan|NaN|NAN)$)");
  if (std::regex_match(s, null_re)) return nullptr;
  if (std::regex_match(s, true_re)) return true;
  if (std::regex_match(s, false_re)) return false;
  try {
    if (std::regex_match(s, int_re)) {
      if (s[0] == '-') return static_cast<std::int64_t>(std::stoll(s));
      const unsigned long long v = std::stoull(s[0] == '+' ? s.substr(1) : s);
      if (v <= static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max()))
        return static_cast<std::int64_t>(v);
      return static_cast<std::uint64_t>(v);
    }
    if (std::regex_match(s, oct_re)) return static_cast<std::int64_t>(std::stoll(s.substr(2), nullptr, 8));
    if (std::regex_match(s, hex_re)) return static_cast<std::int64_t>(std::stoll(s.substr(2), nullptr, 16));
    if (std::regex_match(s, float_re)) return std::stod(s);
  } catch (const std::out_of_range&) {
    return std::stod(s);  // integers beyond 64 bits degrade to floats, as in Go's YAML decoders
  }
  if (std::regex_match(s, inf_re)) return s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
  if (std::regex_match(s, nan_re)) return std::nan("");
  return s;
}

json node_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null: return nullptr;
    case YAML::NodeType::Scalar:
      // Tag "?" marks a plain scalar; quoted scalars carry "!" and explicit tags are honoured for !!str.
      if (node.Tag() == "?") return resolve_plain_scalar(node.Scalar());
      return node.Scalar();
    case YAML::NodeType::Sequence: {
      json arr = json::array();
      for (const auto& item : node) arr.push_back(node_to_json(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      json obj = json::object();
      for (const auto& kv : node) obj[kv.first.as<std::string>()] = node_to_json(kv.second);
      return obj;
    }
  }
  return nullptr;
}

// --- validation ----------------------------------------------------------------------------------------------

std::string join_field(const std::string& root, const std::string& key) {
  return root.empty() ? key : root + "." + key;
}

// Go's %v-like rendering of a value inside "Invalid value: ..." messages.
std::string render_value(const json& v) {
  if (v.is_object()) return "\"object\"";
  if (v.is_array()) return "\"array\"";
  return v.dump();
}

std::string type_name_of(const json& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number()) return "number";
  return "null";
}

bool is_integral(const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
  }
  return false;
}

bool matches_type(const std::string& type, const json& v) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "integer") return is_integral(v);
  if (type == "number") return v.is_number();
  if (type == "null") return v.is_null();
  return true;
}

// Patterns come from CRDs and are RE2 syntax; ECMAScript covers what CRDs use. Compiled once per pattern.
const std::regex* compiled_pattern(const std::string& pattern) {
  static std::mutex mu;
  static std::map<std::string, std::optional<std::regex>> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(pattern);
  if (it == cache.end()) {
    std::optional<std::regex> re;
    try {
      re.emplace(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
      // An unsupported pattern is skipped rather than rejecting every object.
    }
    it = cache.emplace(pattern, std::move(re)).first;
  }
  return it->second ? &*it->second : nullptr;
}

class Validator {
 public:
  std::vector<SchemaViolation> out;

  void check(const json& s, const json& v, const std::string& path, bool is_root) {
    if (!s.is_object()) return;
    // Nulls of non-nullable fields are pruned by kube-apiserver before validation, so they are not violations.
    if (v.is_null()) return;

    if (s.value("x-kubernetes-int-or-string", false)) {
      if (!is_integral(v) && !v.is_string()) type_error(path, v, "integer or string");
      return;
    }
    if (s.contains("anyOf") && s["anyOf"].is_array() && !any_of_matches(s["anyOf"], v, path)) {
      add(path, "FieldValueInvalid", invalid(v, path + " in body must match at least one schema in anyOf"));
      return;
    }
    if (s.contains("type") && s["type"].is_string()) {
      const std::string type = s["type"];
      if (!matches_type(type, v)) {
        type_error(path, v, type);
        return;
      }
    }
    // JSON Schema's list of types (the tool's own report schemas, docs/schemas: ["integer", "null"]).
    if (s.contains("type") && s["type"].is_array()) {
      std::string types;
      bool matched = false;
      for (const auto& t : s["type"]) {
        if (!t.is_string()) continue;
        matched = matched || matches_type(t.get<std::string>(), v);
        types += (types.empty() ? "" : " or ") + t.get<std::string>();
      }
      if (!matched) {
        type_error(path, v, types);
        return;
      }
    }
    if (s.contains("enum") && s["enum"].is_array()) check_enum(s["enum"], v, path);
    if (v.is_number()) check_number(s, v, path);
    if (v.is_string()) check_string(s, v.get<std::string>(), path);
    if (v.is_array()) check_array(s, v, path);
    if (v.is_object()) check_object(s, v, path, is_root);
  }

 private:
  void add(const std::string& field, const std::string& reason, std::string message) {
    out.push_back({field, reason, std::move(message)});
  }

  static std::string invalid(const json& v, const std::string& detail) {
    return "Invalid value: " + render_value(v) + ": " + detail;
  }

  void type_error(const std::string& path, const json& v, const std::string& type) {
    add(path, "FieldValueTypeInvalid",
        "Invalid value: \"" + type_name_of(v) + "\": " + path + " in body must be of type " + type + ": \"" +
            type_name_of(v) + "\"");
  }

  bool any_of_matches(const json& branches, const json& v, const std::string& path) {
    for (const auto& branch : branches) {
      Validator sub;
      sub.check(branch, v, path, false);
      if (sub.out.empty()) return true;
    }
    return branches.empty();
  }

  void check_enum(const json& values, const json& v, const std::string& path) {
    for (const auto& e : values)
      if (e == v) return;
    std::string supported;
    for (const auto& e : values) supported += (supported.empty() ? "" : ", ") + e.dump();
    add(path, "FieldValueNotSupported", "Unsupported value: " + v.dump() + ": supported values: " + supported);
  }

  void check_number(const json& s, const json& v, const std::string& path) {
    const double d = v.get<double>();
    if (s.contains("minimum") && s["minimum"].is_number()) {
      const double min = s["minimum"].get<double>();
      const bool exclusive = s.value("exclusiveMinimum", false);
      if (exclusive ? d <= min : d < min)
        add(path, "FieldValueInvalid",
            invalid(v, path + " in body should be greater than " + std::string(exclusive ? "" : "or equal to ") +
                           s["minimum"].dump()));
    }
    if (s.contains("maximum") && s["maximum"].is_number()) {
      const double max = s["maximum"].get<double>();
      const bool exclusive = s.value("exclusiveMaximum", false);
      if (exclusive ? d >= max : d > max)
        add(path, "FieldValueInvalid",
            invalid(v, path + " in body should be less than " + std::string(exclusive ? "" : "or equal to ") +
                           s["maximum"].dump()));
    }
    const std::string format = s.value("format", "");
    if (format == "int32" && is_integral(v)) {
      if (d < std::numeric_limits<std::int32_t>::min() || d > std::numeric_limits<std::int32_t>::max())
        add(path, "FieldValueInvalid", invalid(v, path + " in body must be of type int32"));
    }
  }

  void check_string(const json& s, const std::string& str, const std::string& path) {
    const json v = str;
    // Lengths count characters (runes), as Go's validator does.
    std::size_t runes = 0;
    for (unsigned char c : str)
      if ((c & 0xC0) != 0x80) ++runes;
    if (s.contains("minLength") && s["minLength"].is_number() && runes < s["minLength"].get<std::size_t>())
      add(path, "FieldValueInvalid",
          invalid(v, path + " in body should be at least " + s["minLength"].dump() + " chars long"));
    if (s.contains("maxLength") && s["maxLength"].is_number() && runes > s["maxLength"].get<std::size_t>())
      add(path, "FieldValueTooLong", "Too long: may not be more than " + s["maxLength"].dump() + " bytes");
    if (s.contains("pattern") && s["pattern"].is_string()) {
      const std::regex* re = compiled_pattern(s["pattern"]);
      // Very long values are not run through std::regex (recursive, stack-hungry); maxLength bounds them anyway.
      if (re && str.size() <= 16384 && !std::regex_search(str, *re))
        add(path, "FieldValueInvalid",
            invalid(v, path + " in body should match '" + s["pattern"].get<std::string>() + "'"));
    }
    if (s.value("format", "") == "date-time") {
      static const std::regex rfc3339(R"(^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$)");
      if (!std::regex_match(str, rfc3339))
        add(path, "FieldValueInvalid", invalid(v, path + " in body must be of type date-time"));
    }
  }

  void check_array(const json& s, const json& v, const std::string& path) {
    if (s.contains("minItems") && s["minItems"].is_number() && v.size() < s["minItems"].get<std::size_t>())
      add(path, "FieldValueInvalid",
          invalid(v, path + " in body should have at least " + s["minItems"].dump() + " items"));
    if (s.contains("maxItems") && s["maxItems"].is_number() && v.size() > s["maxItems"].get<std::size_t>())
      add(path, "FieldValueTooMany",
          "Too many: " + std::to_string(v.size()) + ": must have at most " + s["maxItems"].dump() + " items");
    if (!s.contains("items")) return;
    for (std::size_t i = 0; i < v.size(); ++i) check(s["items"], v[i], path + "[" + std::to_string(i) + "]", false);
  }

  void check_object(const json& s, const json& v, const std::string& path, bool is_root) {
    const json empty = json::object();
    const json& props = s.contains("properties") && s["properties"].is_object() ? s["properties"] : empty;
    if (s.contains("required") && s["required"].is_array())
      for (const auto& r : s["required"])
        if (r.is_string() && (!v.contains(r.get<std::string>()) || v[r.get<std::string>()].is_null()))
          add(join_field(path, r.get<std::string>()), "FieldValueRequired", "Required value");

    const bool embedded = is_root || s.value("x-kubernetes-embedded-resource", false);
    const bool preserve = s.value("x-kubernetes-preserve-unknown-fields", false);
    const json* additional = s.contains("additionalProperties") ? &s["additionalProperties"] : nullptr;
    for (const auto& [key, child] : v.items()) {
      const std::string child_path = join_field(path, key);
      if (props.contains(key)) {
        // ObjectMeta of a (embedded) resource is validated by the API server itself, not by the schema.
        if (embedded && key == "metadata") continue;
        check(props[key], child, child_path, false);
      } else if (additional && additional->is_object()) {
        check(*additional, child, child_path, false);
      } else if (additional && additional->is_boolean() && additional->get<bool>()) {
        continue;
      } else if (embedded && (key == "apiVersion" || key == "kind" || key == "metadata")) {
        continue;
      } else if (!preserve) {
        add(child_path, "FieldValueUnknown", "unknown field \"" + child_path + "\"");
      }
    }
  }
};

}  // namespace

std::vector<SchemaViolation> validate_schema(const nlohmann::json& schema, const nlohmann::json& value,
                                             const std::string& root) {
  Validator v;
  v.check(schema, value, root, root.empty());
  return std::move(v.out);
}

nlohmann::json yaml_to_nlohmann(const std::string& text) {
  try {
    return node_to_json(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(std::string("invalid YAML: ") + e.what());
  }
}

std::vector<CrdVersionSchema> load_crd_schemas(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read CRD file " + path);
  std::stringstream buf;
  buf << in.rdbuf();
  std::vector<json> docs;
  try {
    for (const auto& doc : YAML::LoadAll(buf.str())) docs.push_back(node_to_json(doc));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error("cannot parse CRD file " + path + ": " + e.what());
  }
  std::vector<CrdVersionSchema> out;
  for (const auto& crd : docs) {
    if (!crd.is_object() || crd.value("kind", "") != "CustomResourceDefinition") continue;
    const json spec = crd.value("spec", json::object());
    const json names = spec.value("names", json::object());
    if (!spec.contains("versions") || !spec["versions"].is_array())
      throw std::runtime_error("CRD without spec.versions in " + path);
    for (const auto& ver : spec["versions"]) {
      CrdVersionSchema s;
      s.group = spec.value("group", "");
      s.kind = names.value("kind", "");
      s.plural = names.value("plural", "");
      s.version = ver.value("name", "");
      s.namespaced = spec.value("scope", "Namespaced") == "Namespaced";
      s.status_subresource = ver.contains("subresources") && ver["subresources"].is_object() &&
                             ver["subresources"].contains("status");
      if (ver.contains("schema") && ver["schema"].is_object())
        s.schema = ver["schema"].value("openAPIV3Schema", json::object());
      if (s.group.empty() || s.kind.empty() || s.plural.empty() || s.version.empty())
        throw std::runtime_error("CRD with missing group/names/version in " + path);
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace mindie::testing
