// Editing JSON text in place; see json_text.h.
#include "util/json_text.h"

#include <array>
#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <stdexcept>
#include <vector>

#include "util/json_path.h"

namespace mindie::util {
namespace json = boost::json;

namespace {

// basic_parser handler that tracks the current path and records the byte span of the number at `target`.
// The string_views handed to the number callbacks point into the input buffer (one write of the whole text),
// so the span is exact without re-tokenising.
struct NumberLocator {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  struct Frame {
    bool array;
    std::size_t index;  // next element index for arrays
    std::string key;    // current key for objects
  };

  std::string_view input;
  std::string target;
  std::vector<Frame> stack;
  std::string key_buf;
  const char* number_begin = nullptr;  // set by on_number_part when a number arrives in pieces
  bool found = false;
  bool found_non_number = false;
  std::size_t begin = 0, end = 0;

  std::string current_path() const {
    std::string p;
    for (const auto& f : stack) {
      if (f.array) p = item_path(p, f.index);
      else p = child_path(p, f.key);
    }
    return p;
  }
  // Called after each complete value: advances the enclosing array's index.
  void value_done() {
    if (!stack.empty() && stack.back().array) ++stack.back().index;
  }
  void scalar_at_path() {
    if (current_path() == target) found_non_number = true, found = false;
  }
  bool number(std::string_view s) {
    const char* first = number_begin ? number_begin : s.data();
    const char* last = s.data() + s.size();
    number_begin = nullptr;
    if (current_path() == target) {
      if (first < input.data() || last > input.data() + input.size() || first > last) return false;
      // The last occurrence wins, as in boost::json::parse of duplicate keys.
      found = true;
      found_non_number = false;
      begin = static_cast<std::size_t>(first - input.data());
      end = static_cast<std::size_t>(last - input.data());
    }
    value_done();
    return true;
  }

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) {
    scalar_at_path();
    stack.push_back({false, 0, {}});
    return true;
  }
  bool on_object_end(std::size_t, json::error_code&) {
    stack.pop_back();
    value_done();
    return true;
  }
  bool on_array_begin(json::error_code&) {
    scalar_at_path();
    stack.push_back({true, 0, {}});
    return true;
  }
  bool on_array_end(std::size_t, json::error_code&) {
    stack.pop_back();
    value_done();
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    key_buf.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    key_buf.append(s.data(), s.size());
    stack.back().key = std::move(key_buf);
    key_buf.clear();
    return true;
  }
  bool on_string_part(json::string_view, std::size_t, json::error_code&) { return true; }
  bool on_string(json::string_view, std::size_t, json::error_code&) {
    scalar_at_path();
    value_done();
    return true;
  }
  bool on_number_part(json::string_view s, json::error_code&) {
    if (!number_begin) number_begin = s.data();
    return true;
  }
  bool on_int64(std::int64_t, json::string_view s, json::error_code&) { return number({s.data(), s.size()}); }
  bool on_uint64(std::uint64_t, json::string_view s, json::error_code&) { return number({s.data(), s.size()}); }
  bool on_double(double, json::string_view s, json::error_code&) { return number({s.data(), s.size()}); }
  bool on_bool(bool, json::error_code&) {
    scalar_at_path();
    value_done();
    return true;
  }
  bool on_null(json::error_code&) {
    scalar_at_path();
    value_done();
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }
};

}  // namespace

std::string replace_json_number(std::string_view raw, std::string_view path, std::int64_t value) {
  json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  json::basic_parser<NumberLocator> parser(options);
  auto& h = parser.handler();
  h.input = raw;
  h.target = std::string(path);
  json::error_code ec;
  std::size_t consumed = parser.write_some(false, raw.data(), raw.size(), ec);
  if (ec || consumed != raw.size()) throw std::invalid_argument("not valid JSON: " + ec.message());
  if (!h.found)
    throw std::invalid_argument("\"" + std::string(path) + "\" " +
                                (h.found_non_number ? "does not hold a number" : "is not in the document"));
  std::string out;
  out.reserve(raw.size() + 20);
  out.append(raw.substr(0, h.begin));
  out.append(std::to_string(value));
  out.append(raw.substr(h.end));
  return out;
}

std::string float_text(double d) {
  std::array<char, 64> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), d);
  std::string s(buf.data(), ec == std::errc() ? end : buf.data());
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // "2" would read back as an integer
  return s;
}

}  // namespace mindie::util
