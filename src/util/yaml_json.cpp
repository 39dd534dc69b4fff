// YAML <-> Boost.JSON conversion on top of yaml-cpp. yaml-cpp does not resolve scalar types itself (every scalar
// is text), so plain scalars are resolved here by the YAML 1.2 core schema, which is what Kubernetes tooling
// (sigs.k8s.io/yaml) does for the manifests this project reads and writes.
#include "util/yaml_json.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

#include "util/json_text.h"

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

// The value budget of one stream: kMaxValuesBase + kMaxValuesPerByte × input bytes. Without aliases a value
// takes at least one byte of text, so only alias expansion comes near it.
constexpr std::size_t kMaxValuesBase = 10000;
constexpr std::size_t kMaxValuesPerByte = 4;

bool is_null_word(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

std::optional<bool> bool_word(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

// At most this many characters of an offending scalar are quoted in messages.
constexpr std::size_t kExcerptChars = 40;

std::string excerpt(std::string_view s) {
  if (s.size() <= kExcerptChars) return std::string(s);
  return std::string(s.substr(0, kExcerptChars - 3)) + "...";
}

// True when `s` is one or more digits of `base` (8, 10 or 16). Hand-written scanners, not std::regex: libstdc++'s
// regex matcher recurses once per character and overflows the stack on long scalars.
bool all_digits(std::string_view s, int base) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [base](unsigned char c) {
    if (base == 8) return c >= '0' && c <= '7';
    if (base == 16) return std::isxdigit(c) != 0;
    return std::isdigit(c) != 0;
  });
}

// YAML 1.2 core schema integer forms: decimal with optional sign, 0o octal, 0x hex. Sets `unrepresentable` when
// the integer is too large for a JSON number (octal/hex beyond 64 bits, decimal beyond the double range); decimal
// integers beyond 64 bits are kept approximately as doubles, as JSON parsers do.
std::optional<boost::json::value> core_int(std::string_view s, bool& unrepresentable) {
  int base = 10;
  bool negative = false;
  std::string_view digits = s;
  if (s.starts_with("0o") || s.starts_with("0x")) {
    base = s[1] == 'o' ? 8 : 16;
    digits.remove_prefix(2);
  } else if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    digits.remove_prefix(1);
  }
  if (!all_digits(digits, base)) return std::nullopt;
  std::uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (ec == std::errc() && end == digits.data() + digits.size()) {
    constexpr auto int64_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (!negative && magnitude <= int64_max) return boost::json::value(static_cast<std::int64_t>(magnitude));
    if (!negative) return boost::json::value(magnitude);
    if (magnitude <= int64_max + 1) return boost::json::value(static_cast<std::int64_t>(0 - magnitude));
  }
  const double d = base == 10 ? std::strtod(std::string(s).c_str(), nullptr) : HUGE_VAL;
  unrepresentable = !std::isfinite(d);
  return boost::json::value(d);
}

// True for the core schema float syntax [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_core_float(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const std::size_t int_digits = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0 && int_digits == 0) return false;
  } else if (int_digits == 0) {
    return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// YAML 1.2 core schema floats. Sets `unrepresentable` for .inf/.nan and for numbers beyond the double range: JSON
// has no spelling for them.
std::optional<double> core_float(std::string_view s, bool& unrepresentable) {
  if (is_core_float(s)) {
    const double d = std::strtod(std::string(s).c_str(), nullptr);
    unrepresentable = !std::isfinite(d);
    return d;
  }
  std::string_view unsigned_s = s;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) unsigned_s.remove_prefix(1);
  for (std::string_view word : {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"}) {
    if (unsigned_s == word && (s.size() == word.size() || word[1] == 'i' || word[1] == 'I')) {
      unrepresentable = true;
      return std::numeric_limits<double>::quiet_NaN();
    }
  }
  return std::nullopt;
}

// Resolves a plain scalar by the core schema. Sets `unrepresentable` for numbers JSON cannot hold (.inf, .nan,
// out of range).
boost::json::value resolve_plain(std::string_view s, bool& unrepresentable) {
  unrepresentable = false;
  if (is_null_word(s)) return nullptr;
  if (auto b = bool_word(s)) return *b;
  if (auto i = core_int(s, unrepresentable)) return *i;
  if (auto d = core_float(s, unrepresentable)) return *d;
  return boost::json::string(s);
}

// Strict UTF-8 check; with `allow_nonchars` false also rejects the noncharacters U+xxFFFE, U+xxFFFF and
// U+FDD0..U+FDEF, which yaml-cpp's emitter silently replaces by U+FFFD (its GetNextCodePointAndAdvance).
bool utf8_ok(std::string_view s, bool allow_nonchars) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    constexpr std::array<std::uint32_t, 5> min_for_len = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    if (!allow_nonchars && ((cp & 0xFFFE) == 0xFFFE || (cp >= 0xFDD0 && cp <= 0xFDEF))) return false;
    i += len;
  }
  return true;
}

// Walks a YAML stream without building nodes, only to catch a yaml-cpp 0.7 defect: a stray flow indicator at the
// top level (",", "[a],") makes every further document start at the same place, so YAML::LoadAll never returns.
class ProgressCheck : public YAML::EventHandler {
 public:
  explicit ProgressCheck(const std::string& source) : source_(source) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (last_ && mark.pos <= last_->pos)
      throw YamlError(where(source_, mark) + ": unexpected character at the top level of the document");
    last_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  const std::string& source_;
  std::optional<YAML::Mark> last_;
};

// Converts yaml-cpp nodes to JSON values. yaml-cpp shares the node an alias names, JSON copies it, so aliases can
// make a small text expand exponentially ("billion laughs") or, pointing at an enclosing node, infinitely; both are
// errors here, as is text that is not UTF-8.
class Converter {
 public:
  Converter(const std::string& source, std::size_t max_values) : source_(source), max_values_(max_values) {}

  boost::json::value convert(const YAML::Node& node) {
    if (++values_ > max_values_)
      throw YamlError(where(source_, node.Mark()) + ": the document expands to more than " +
                      std::to_string(max_values_) + " values (aliases repeat too much)");
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null: return nullptr;
      case YAML::NodeType::Scalar: return scalar(node);
      case YAML::NodeType::Sequence: {
        Open open(*this, node);
        boost::json::array arr;
        arr.reserve(node.size());
        for (const auto& item : node) arr.push_back(convert(item));
        return arr;
      }
      case YAML::NodeType::Map: {
        Open open(*this, node);
        boost::json::object obj;
        for (const auto& kv : node) {
          if (!kv.first.IsScalar()) throw YamlError(where(source_, kv.first.Mark()) + ": mapping keys must be scalars");
          const std::string& key = kv.first.Scalar();
          check_utf8(kv.first);
          // Duplicate keys are an error in Kubernetes' strict decoding; silently keeping one would hide a typo.
          if (obj.contains(key))
            throw YamlError(where(source_, kv.first.Mark()) + ": duplicate key \"" + excerpt(key) + "\"");
          obj.emplace(key, convert(kv.second));
        }
        return obj;
      }
    }
    return nullptr;
  }

 private:
  // Marks a collection as being converted for the scope, rejecting one that is already open (an alias cycle).
  struct Open {
    Open(Converter& c, const YAML::Node& node) : c_(c) {
      for (const auto& open : c_.open_)
        if (open.is(node))
          throw YamlError(where(c_.source_, node.Mark()) + ": an alias refers to a node that contains it (a cycle)");
      c_.open_.push_back(node);
    }
    ~Open() { c_.open_.pop_back(); }
    Open(const Open&) = delete;
    Open& operator=(const Open&) = delete;
    Converter& c_;
  };

  void check_utf8(const YAML::Node& node) const {
    if (!utf8_ok(node.Scalar(), false))
      throw YamlError(where(source_, node.Mark()) +
                      ": text is not valid UTF-8 or contains a noncharacter (U+FDD0..U+FDEF, U+xxFFFE, U+xxFFFF)");
  }

  boost::json::value scalar(const YAML::Node& node) const {
    const std::string& tag = node.Tag();
    const std::string& text = node.Scalar();
    check_utf8(node);
    // "!" marks a quoted (or block) scalar: always a string. "?" marks a plain scalar: resolve by content.
    if (tag == "!" || tag == kTagStr) return boost::json::string(text);
    bool unrepresentable = false;
    boost::json::value v = resolve_plain(text, unrepresentable);
    if (unrepresentable)
      throw YamlError(where(source_, node.Mark()) + ": " + excerpt(text) +
                      " cannot be represented in JSON (not a finite number in range)");
    const bool explicit_mismatch = (tag == kTagInt && !v.is_int64() && !v.is_uint64()) ||
                                   (tag == kTagFloat && !v.is_number()) || (tag == kTagBool && !v.is_bool()) ||
                                   (tag == kTagNull && !v.is_null());
    if (explicit_mismatch) throw YamlError(where(source_, node.Mark()) + ": \"" + excerpt(text) + "\" is not a " + tag);
    if (tag == kTagFloat && !v.is_double()) return v.to_number<double>();
    return v;
  }

  const std::string& source_;
  const std::size_t max_values_;
  std::size_t values_ = 0;
  std::vector<YAML::Node> open_;
};

// True when a plain (unquoted) scalar `s` would not read back as the string `s`: core-schema non-strings, the
// document markers "---" and "..." (alone or before a blank: at the start of a line they end or start a document,
// which a top-level string is), plus the YAML 1.1 words (yes/no/on/off/y/n) that older Kubernetes decoders still
// treat as booleans.
bool needs_quotes(std::string_view s) {
  bool unrepresentable = false;
  if (!resolve_plain(s, unrepresentable).is_string() || unrepresentable) return true;
  const std::string_view head = s.substr(0, 3);
  if ((head == "---" || head == "...") && (s.size() == 3 || s[3] == ' ' || s[3] == '\t')) return true;
  static constexpr std::array<std::string_view, 16> yaml11 = {"y",  "Y",  "n",  "N",  "yes", "Yes", "YES", "no",
                                                              "No", "NO", "on", "On", "ON",  "off", "Off", "OFF"};
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

bool has_control_char(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

void emit_string(YAML::Emitter& out, std::string_view s) {
  if (!utf8_ok(s, false))
    throw YamlError("cannot emit \"" + excerpt(s) +
                    "\" as YAML: not valid UTF-8 or contains a noncharacter (U+FDD0..U+FDEF, U+xxFFFE, U+xxFFFF)");
  if (literal_block_ok(s))
    out << YAML::Literal << std::string(s.substr(0, s.size() - 1));  // the block's own line end restores it
  else if (has_control_char(s) || needs_quotes(s))  // yaml-cpp would write "\r" plain; it reads back as a break
    out << YAML::DoubleQuoted << std::string(s);
  else out << std::string(s);
}

void emit(YAML::Emitter& out, const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: out << YAML::Null; break;
    case boost::json::kind::bool_: out << v.get_bool(); break;
    case boost::json::kind::int64: out << v.get_int64(); break;
    case boost::json::kind::uint64: out << v.get_uint64(); break;
    case boost::json::kind::double_:
      if (!std::isfinite(v.get_double())) throw YamlError("cannot emit a non-finite number as YAML");
      out << float_text(v.get_double());
      break;
    case boost::json::kind::string: emit_string(out, v.get_string()); break;
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

bool is_valid_utf8(std::string_view s) { return utf8_ok(s, true); }

std::vector<boost::json::value> yaml_to_json_all(const std::string& text, const std::string& source) {
  std::vector<YAML::Node> docs;
  try {
    {
      std::istringstream in(text);
      YAML::Parser parser(in);
      ProgressCheck check(source);
      while (parser.HandleNextDocument(check)) {
      }
    }
    docs = YAML::LoadAll(text);
  } catch (const YAML::DeepRecursion& e) {
    throw YamlError(where(source, e.mark) + ": nested too deeply (more than " + std::to_string(e.depth()) + " levels)");
  } catch (const YAML::Exception& e) {
    throw YamlError(where(source, e.mark) + ": " + e.msg);
  }
  Converter converter(source, kMaxValuesBase + kMaxValuesPerByte * text.size());
  std::vector<boost::json::value> out;
  for (const auto& doc : docs) {
    // Empty documents ("---" with nothing after it) carry nothing to apply; kubectl skips them too.
    if (doc.IsNull()) continue;
    try {
      out.push_back(converter.convert(doc));
    } catch (const YAML::Exception& e) {
      throw YamlError(where(source, e.mark) + ": " + e.msg);
    }
  }
  return out;
}

boost::json::value yaml_to_json(const std::string& text, const std::string& source) {
  auto docs = yaml_to_json_all(text, source);
  if (docs.size() != 1) throw YamlError(source + ": expected one YAML document, found " + std::to_string(docs.size()));
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
