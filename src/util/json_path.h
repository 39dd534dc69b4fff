// Reading fields of API objects held as Boost.JSON values, where any level may be absent or of another type (what a
// server or a hand edit sends is never trusted to have the expected shape), writing the optional fields of a
// report, and the one path syntax that names a place in a document in messages.
#pragma once

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mindie::util {

/// The path of member `key` below `path`, in the one syntax every message uses: `path.key` when the key is a plain
/// identifier (letters, digits, '_' and '-'), otherwise `path["key"]` with the key JSON-quoted (label keys hold '.'
/// and '/'); `key` alone (or `["key"]`) at the top, where `path` is "". Array elements are item_path's.
inline std::string child_path(std::string_view path, std::string_view key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
  });
  if (!plain) return std::string(path) + "[" + boost::json::serialize(boost::json::string(key)) + "]";
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}

/// The path of element `index` of the array at `path`: `path[index]`.
inline std::string item_path(std::string_view path, std::size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

/// The value at `path` below `v` (object keys, in order), or nullptr when `v` is null, a level is missing or is not
/// an object.
inline const boost::json::value* find(const boost::json::value* v, std::initializer_list<std::string_view> path) {
  for (auto key : path) {
    if (!v || !v->is_object()) return nullptr;
    v = v->as_object().if_contains(key);
  }
  return v;
}

/// The string `v` holds, or "" when it is null or not a string.
inline std::string str(const boost::json::value* v) {
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

/// The integer `v` holds, or `fallback` when it is null or not an integer.
inline std::int64_t num(const boost::json::value* v, std::int64_t fallback = 0) {
  return v && (v->is_int64() || v->is_uint64()) ? v->to_number<std::int64_t>() : fallback;
}

/// `v` as JSON: its value, or null when absent (the report fields that say "unknown" with null).
inline boost::json::value or_null(const std::optional<std::int64_t>& v) {
  return v ? boost::json::value(*v) : boost::json::value(nullptr);
}
inline boost::json::value or_null(const std::optional<std::string>& v) {
  return v ? boost::json::value(*v) : boost::json::value(nullptr);
}

/// `v` as a JSON array of strings.
inline boost::json::array string_array(const std::vector<std::string>& v) {
  boost::json::array out;
  for (const auto& s : v) out.emplace_back(s);
  return out;
}

}  // namespace mindie::util
