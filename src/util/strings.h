// Text helpers shared by messages across layers.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace mindie::util {

/// `items` separated by `sep`, each first mapped by `project` (a callable or member pointer, default: the item
/// itself) to something a std::string_view is made from: join(names, ", ") is "a, b, c"; "" for no items.
template <typename Range, typename Projection = std::identity>
std::string join(const Range& items, std::string_view sep, Projection project = {}) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += sep;
    first = false;
    out += std::string_view(std::invoke(project, item));
  }
  return out;
}

}  // namespace mindie::util
