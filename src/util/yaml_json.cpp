// YAML <-> Boost.JSON conversion on top of yaml-cpp. yaml-cpp does not resolve scalar types itself (every scalar
// is text), so plain scalars are resolved here by the YAML 1.2 core schema, which is what Kubernetes tooling
// (sigs.k8s.io/yaml) does for the manifests this project reads and writes.
#include "util/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <regex>
#include <string_view>

namespace mindie::util {
namespace {

const std::string kTagStr = "tag:yaml.org,2002:str";
const std::string kTagInt = "tag:yaml.org,2002:int";
const std::string kTagFloat = "tag:yaml.org,2002:float";
const std::string kTagBool = "tag:yaml.org,2002:bool";
const std::string kTagNull = "tag:yaml.org,2002:null";

std::string where(const std::string& source, const YAML::Mark& mark) {
  if (mark.is_null()) return source;
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

bool is_null_word(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

std::optional<bool> bool_word(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

// YAML 1.2 core schema integer forms: decimal with optional sign, 0o octal, 0x hex.
std::optional<boost::json::value> core_int(std::string_view s) {
  static const std::regex dec("[-+]?[0-9]+"), oct("0o[0-7]+"), hex("0x[0-9a-fA-F]+");
  const std::string str(s);
  int base = 10;
  std::string_view digits = s;
  if (std::regex_match(str, oct)) {
    base = 8;
    digits.remove_prefix(2);
  } else if (std::regex_match(str, hex)) {
    base = 16;
    digits.remove_prefix(2);
  } else if (!std::regex_match(str, dec)) {
    return std::nullopt;
  }
  bool negative = false;
  if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) {
    negative = digits.front() == '-';
    digits.remove_prefix(1);
  }
  std::uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (ec == std::errc() && end == digits.data() + digits.size()) {
    constexpr auto int64_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (!negative && magnitude <= int64_max) return boost::json::value(static_cast<std::int64_t>(magnitude));
    if (!negative) return boost::json::value(magnitude);
    if (magnitude <= int64_max + 1) return boost::json::value(static_cast<std::int64_t>(0 - magnitude));
  }
  // Too large for 64 bits: the value is still a number, kept approximately like JSON parsers do.
  return boost::json::value(std::strtod(str.c_str(), nullptr));
}

// YAML 1.2 core schema floats. Infinity and NaN resolve too but cannot be represented in JSON.
std::optional<double> core_float(std::string_view s, bool& non_finite) {
  static const std::regex num(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  static const std::regex inf(R"([-+]?(\.inf|\.Inf|\.INF))"), nan(R"(\.nan|\.NaN|\.NAN)");
  const std::string str(s);
  non_finite = false;
  if (std::regex_match(str, num)) return std::strtod(str.c_str(), nullptr);
  if (std::regex_match(str, inf) || std::regex_match(str, nan)) {
    non_finite = true;
    return std::numeric_limits<double>::quiet_NaN();
  }
  return std::nullopt;
}

// Resolves a plain scalar by the core schema. Sets `non_finite` for .inf/.nan.
boost::json::value resolve_plain(std::string_view s, bool& non_finite) {
  non_finite = false;
  if (is_null_word(s)) return nullptr;
  if (auto b = bool_word(s)) return *b;
  if (auto i = core_int(s)) return *i;
  if (auto d = core_float(s, non_finite)) return *d;
  return boost::json::string(s);
}

boost::json::value convert(const YAML::Node& node, const std::string& source) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      const std::string& text = node.Scalar();
      // "!" marks a quoted (or block) scalar: always a string. "?" marks a plain scalar: resolve by content.
      if (tag == "!" || tag == kTagStr) return boost::json::string(text);
      bool non_finite = false;
      boost::json::value v = resolve_plain(text, non_finite);
      if (non_finite)
        throw YamlError(where(source, node.Mark()) + ": " + text + " cannot be represented in JSON");
      const bool explicit_mismatch = (tag == kTagInt && !v.is_int64() && !v.is_uint64()) ||
                                     (tag == kTagFloat && !v.is_number()) || (tag == kTagBool && !v.is_bool()) ||
                                     (tag == kTagNull && !v.is_null());
      if (explicit_mismatch) throw YamlError(where(source, node.Mark()) + ": \"" + text + "\" is not a " + tag);
      if (tag == kTagFloat && !v.is_double()) return v.to_number<double>();
      return v;
    }
    case YAML::NodeType::Sequence: {
      boost::json::array arr;
      arr.reserve(node.size());
      for (const auto& item : node) arr.push_back(convert(item, source));
      return arr;
    }
    case YAML::NodeType::Map: {
      boost::json::object obj;
      for (const auto& kv : node) {
        if (!kv.first.IsScalar())
          throw YamlError(where(source, kv.first.Mark()) + ": mapping keys must be scalars");
        const std::string& key = kv.first.Scalar();
        // Duplicate keys are an error in Kubernetes' strict decoding; silently keeping one would hide a typo.
        if (obj.contains(key)) throw YamlError(where(source, kv.first.Mark()) + ": duplicate key \"" + key + "\"");
        obj.emplace(key, convert(kv.second, source));
      }
      return obj;
    }
  }
  return nullptr;
}

// True when a plain (unquoted) scalar `s` would not read back as the string `s`: core-schema non-strings, plus
// the YAML 1.1 words (yes/no/on/off/y/n) that older Kubernetes decoders still treat as booleans.
bool needs_quotes(std::string_view s) {
  bool non_finite = false;
  if (!resolve_plain(s, non_finite).is_string() || non_finite) return true;
  static constexpr std::array<std::string_view, 16> yaml11 = {"y", "Y", "n", "N", "yes", "Yes", "YES", "no",
                                                              "No", "NO", "on", "On", "ON", "off", "Off", "OFF"};
  for (auto w : yaml11)
    if (s == w) return true;
  return false;
}

// yaml-cpp writes literal blocks with "clip" chomping only ("|"), which reads back with exactly one final line
// break. So a literal block is used for multi-line text ending in exactly one '\n' whose lines need no escaping
// and whose first line does not start with a space (that would need an indentation indicator); other multi-line
// text is double-quoted.
bool literal_block_ok(std::string_view s) {
  if (s.size() < 2 || s.back() != '\n' || s[s.size() - 2] == '\n') return false;
  if (s.find('\n') == s.size() - 1) return false;  // a single line plus newline gains nothing from a block
  if (s.front() == ' ' || s.front() == '\n') return false;
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\n') || c == 0x7f) return false;
  for (std::size_t pos = 0; (pos = s.find('\n', pos)) != std::string_view::npos; ++pos)
    if (pos > 0 && s[pos - 1] == ' ') return false;  // trailing spaces are invisible and easily lost
  return true;
}

void emit_string(YAML::Emitter& out, std::string_view s) {
  if (literal_block_ok(s))
    out << YAML::Literal << std::string(s.substr(0, s.size() - 1));  // the block's own line end restores it
  else if (s.find('\n') != std::string_view::npos || needs_quotes(s))
    out << YAML::DoubleQuoted << std::string(s);
  else
    out << std::string(s);
}

// Shortest text that reads back as the same double and as a float (never as an integer).
std::string format_double(double d) {
  std::array<char, 64> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), d);
  std::string s(buf.data(), ec == std::errc() ? end : buf.data());
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // "2" would read back as an integer
  return s;
}

void emit(YAML::Emitter& out, const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      out << YAML::Null;
      break;
    case boost::json::kind::bool_:
      out << v.get_bool();
      break;
    case boost::json::kind::int64:
      out << v.get_int64();
      break;
    case boost::json::kind::uint64:
      out << v.get_uint64();
      break;
    case boost::json::kind::double_:
      if (!std::isfinite(v.get_double())) throw YamlError("cannot emit a non-finite number as YAML");
      out << format_double(v.get_double());
      break;
    case boost::json::kind::string:
      emit_string(out, v.get_string());
      break;
    case boost::json::kind::array:
      if (v.get_array().empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        break;
      }
      out << YAML::BeginSeq;
      for (const auto& item : v.get_array()) emit(out, item);
      out << YAML::EndSeq;
      break;
    case boost::json::kind::object:
      if (v.get_object().empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        break;
      }
      out << YAML::BeginMap;
      for (const auto& kv : v.get_object()) {
        out << YAML::Key;
        emit_string(out, kv.key());
        out << YAML::Value;
        emit(out, kv.value());
      }
      out << YAML::EndMap;
      break;
  }
}

}  // namespace

std::vector<boost::json::value> yaml_to_json_all(const std::string& text, const std::string& source) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    throw YamlError(where(source, e.mark) + ": " + e.msg);
  }
  std::vector<boost::json::value> out;
  for (const auto& doc : docs) {
    // Empty documents ("---" with nothing after it) carry nothing to apply; kubectl skips them too.
    if (doc.IsNull()) continue;
    try {
      out.push_back(convert(doc, source));
    } catch (const YAML::Exception& e) {
      throw YamlError(where(source, e.mark) + ": " + e.msg);
    }
  }
  return out;
}

boost::json::value yaml_to_json(const std::string& text, const std::string& source) {
  auto docs = yaml_to_json_all(text, source);
  if (docs.size() != 1)
    throw YamlError(source + ": expected one YAML document, found " + std::to_string(docs.size()));
  return std::move(docs.front());
}

std::string json_to_yaml(const boost::json::value& v) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetNullFormat(YAML::LowerNull);
  out.SetBoolFormat(YAML::TrueFalseBool);
  out.SetBoolFormat(YAML::LowerCase);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  emit(out, v);
  if (!out.good()) throw YamlError(std::string("cannot emit YAML: ") + out.GetLastError());
  std::string s = out.c_str();
  if (s.empty() || s.back() != '\n') s += '\n';
  return s;
}

}  // namespace mindie::util
