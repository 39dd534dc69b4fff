#include "util/json_pretty.h"

namespace mindie::util {

namespace json = boost::json;

namespace {

void emit(std::string& out, const json::value& v, int indent, int depth) {
  const auto newline = [&](int d) {
    out += '\n';
    out.append(static_cast<std::size_t>(indent * d), ' ');
  };
  if (v.is_object() && !v.as_object().empty()) {
    out += '{';
    bool first = true;
    for (const auto& kv : v.as_object()) {
      if (!first) out += ',';
      first = false;
      newline(depth + 1);
      out += json::serialize(json::string_view(kv.key()));
      out += ": ";
      emit(out, kv.value(), indent, depth + 1);
    }
    newline(depth);
    out += '}';
  } else if (v.is_array() && !v.as_array().empty()) {
    out += '[';
    bool first = true;
    for (const auto& e : v.as_array()) {
      if (!first) out += ',';
      first = false;
      newline(depth + 1);
      emit(out, e, indent, depth + 1);
    }
    newline(depth);
    out += ']';
  } else {
    out += json::serialize(v);
  }
}

}  // namespace

std::string json_pretty(const json::value& v, int indent) {
  std::string out;
  emit(out, v, indent, 0);
  return out;
}

}  // namespace mindie::util
