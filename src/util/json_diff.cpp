// Where two JSON documents differ; see json_diff.h.
#include "util/json_diff.h"

#include <algorithm>

#include "util/json_path.h"

namespace mindie::util {
namespace json = boost::json;

namespace {

bool same_scalar(const json::value& a, const json::value& b) {
  // 5 stored as int64 and as uint64 are the same JSON number; 5 and 5.0 are not the same input.
  if (a.is_int64() && b.is_uint64())
    return a.get_int64() >= 0 && static_cast<std::uint64_t>(a.get_int64()) == b.get_uint64();
  if (a.is_uint64() && b.is_int64()) return same_scalar(b, a);
  return a == b;
}

void diff(const json::value& a, const json::value& b, const std::string& path, std::vector<std::string>& out) {
  if (a.is_object() && b.is_object()) {
    const auto& oa = a.get_object();
    const auto& ob = b.get_object();
    for (const auto& kv : oa) {
      const std::string p = child_path(path, kv.key());
      if (const json::value* other = ob.if_contains(kv.key())) diff(kv.value(), *other, p, out);
      else out.push_back(p);
    }
    for (const auto& kv : ob)
      if (!oa.contains(kv.key())) out.push_back(child_path(path, kv.key()));
    return;
  }
  if (a.is_array() && b.is_array()) {
    const auto& aa = a.get_array();
    const auto& ab = b.get_array();
    // deploy.py's update check: a list whose length changes counts as a change of the list itself.
    if (aa.size() != ab.size()) {
      out.push_back(path);
      return;
    }
    for (std::size_t i = 0; i < aa.size(); ++i) diff(aa[i], ab[i], item_path(path, i), out);
    return;
  }
  if (!same_scalar(a, b)) out.push_back(path);
}

}  // namespace

std::vector<std::string> diff_paths(const json::value& a, const json::value& b) {
  std::vector<std::string> out;
  diff(a, b, "", out);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace mindie::util
