// Reading a JSON input document for validation; see json_document.h.
#include "validation/json_document.h"

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <cmath>
#include <set>

#include "util/json_path.h"
#include "util/json_text.h"

namespace mindie::validation {
namespace json = boost::json;
using util::child_path;
using util::item_path;

namespace {

// Parses `raw`; on a syntax error returns nullopt and fills `problem` with the line and column of the error.
std::optional<json::value> parse_text(std::string_view raw, Problem& problem) {
  // Python's json module (PyMotor's reader) rejects a byte-order mark too; say so rather than "syntax error".
  if (raw.starts_with("\xEF\xBB\xBF")) {
    problem = {"", "starts with a UTF-8 byte-order mark (BOM); save the file as UTF-8 without BOM"};
    return std::nullopt;
  }
  json::parse_options options;
  options.max_depth = util::kMaxJsonDepth;
  json::stream_parser p({}, options);
  json::error_code ec;
  std::size_t consumed = p.write_some(raw.data(), raw.size(), ec);
  if (!ec) p.finish(ec);
  if (!ec) return p.release();
  std::size_t offset = std::min(consumed, raw.size());
  std::size_t line = 1 + std::count(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
  std::size_t line_start = raw.rfind('\n', offset == 0 ? 0 : offset - 1);
  std::size_t column = (line_start == std::string_view::npos || offset == 0) ? offset + 1 : offset - line_start;
  if (raw.empty()) line = 1, column = 1;
  const std::string reason = ec == json::error::too_deep
                                 ? "nested deeper than " + std::to_string(util::kMaxJsonDepth) + " levels"
                                 : ec.message();
  problem = {"", "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + reason};
  return std::nullopt;
}

// What Boost.JSON's parser lets through, found in a second pass over the text with its SAX interface: a key twice
// in one object (the last silently wins there and in Python's json, PyMotor's reader, so the operator's first value
// is lost without a word) and numbers beyond a double (1e400 reads as infinity). Paths in util::child_path's syntax.
class StructureCheck {
 public:
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);

  explicit StructureCheck(std::vector<Problem>& problems) : problems_(problems) {}

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return open(true); }
  bool on_object_end(std::size_t, json::error_code&) { return close(); }
  bool on_array_begin(json::error_code&) { return open(false); }
  bool on_array_end(std::size_t, json::error_code&) { return close(); }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) { return key_.append(s), true; }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    key_.append(s);
    Frame& f = stack_.back();
    if (!f.keys.insert(key_).second)
      problems_.push_back({child_path(f.path, key_),
                           "appears twice in one object: JSON readers keep only the last value, "
                           "so the first is silently lost; remove one"});
    f.key = std::move(key_);
    key_.clear();
    return true;
  }
  bool on_string_part(json::string_view, std::size_t, json::error_code&) { return true; }
  bool on_string(json::string_view, std::size_t, json::error_code&) { return value(), true; }
  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t, json::string_view, json::error_code&) { return value(), true; }
  bool on_uint64(std::uint64_t, json::string_view, json::error_code&) { return value(), true; }
  bool on_double(double d, json::string_view text, json::error_code&) {
    const std::string path = value();
    if (!std::isfinite(d))
      problems_.push_back({path, "the number " + std::string(text.substr(0, 40)) +
                                     " is beyond a double's range (it would read as infinity)"});
    return true;
  }
  bool on_bool(bool, json::error_code&) { return value(), true; }
  bool on_null(json::error_code&) { return value(), true; }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  struct Frame {
    bool object = false;
    std::string path;
    std::set<std::string> keys;
    std::string key;        // the member being read (objects)
    std::size_t index = 0;  // the next element (arrays)
  };
  // The path of the value that starts now, advancing the enclosing array's index.
  std::string value() {
    if (stack_.empty()) return "";
    Frame& f = stack_.back();
    if (f.object) return child_path(f.path, f.key);
    return item_path(f.path, f.index++);
  }
  bool open(bool object) {
    std::string path = value();
    stack_.push_back({object, std::move(path), {}, {}, 0});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  std::vector<Problem>& problems_;
  std::vector<Frame> stack_;
  std::string key_;
};

// StructureCheck's problems of `raw`, which parse_json has accepted.
std::vector<Problem> structure_problems(std::string_view raw) {
  std::vector<Problem> problems;
  json::parse_options options;
  options.max_depth = util::kMaxJsonDepth;
  json::basic_parser<StructureCheck> p(options, problems);
  json::error_code ec;
  p.write_some(false, raw.data(), raw.size(), ec);
  return problems;
}

}  // namespace

std::string yaml_syntax_message(const std::string& what, std::string_view source) {
  std::string_view m = what;
  if (!m.starts_with(source)) return what;
  m.remove_prefix(source.size());
  int line = 0, column = 0;
  if (m.starts_with(":")) {
    const char* p = m.data() + 1;
    const char* end = m.data() + m.size();
    auto r1 = std::from_chars(p, end, line);
    if (r1.ec == std::errc() && r1.ptr < end && *r1.ptr == ':') {
      auto r2 = std::from_chars(r1.ptr + 1, end, column);
      if (r2.ec == std::errc() && std::string_view(r2.ptr, end - r2.ptr).starts_with(": "))
        return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
               std::string(r2.ptr + 2, end);
    }
  }
  if (m.starts_with(": ")) m.remove_prefix(2);
  return std::string(m);
}

std::optional<json::object> read_json_object(std::string_view raw, Reader& r) {
  Problem syntax;
  auto parsed = parse_text(raw, syntax);
  if (!parsed) {
    r.add(std::move(syntax.path), std::move(syntax.message));
    return std::nullopt;
  }
  if (!parsed->is_object()) {
    r.add("", "must be a JSON object, got " + r.describe(*parsed));
    return std::nullopt;
  }
  r.add_all(structure_problems(raw));
  return std::move(parsed->get_object());
}

}  // namespace mindie::validation
