#include "kube/transport.h"

#include <algorithm>
#include <cctype>

namespace mindie::kube {

std::string HttpResponse::header(std::string_view name) const {
  const auto same = [](std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
      return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
  };
  for (const auto& [key, value] : headers)
    if (same(key, name)) return value;
  return {};
}

}  // namespace mindie::kube
